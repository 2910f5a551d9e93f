// @name@_variants(): which device variants this build of the library contains.
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>

namespace {

tvm::ffi::String Variants() { return @NAME@_WITH_CUDA ? "cpu,cuda" : "cpu"; }

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(@name@_variants, Variants);
