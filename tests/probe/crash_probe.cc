// A deliberately broken export: it aborts the process for complex tensors and
// returns the number of dimensions otherwise. tests/test_fuzz.py runs the fuzz
// against it to prove that a crash on one dtype is found and reported.
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/function.h>

#include <cstdint>
#include <cstdlib>

namespace {

int64_t AbortOnComplex(tvm::ffi::TensorView x) {
  if (x.dtype().code == kDLComplex) std::abort();
  return x.ndim();
}

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(abort_on_complex, AbortOnComplex);
