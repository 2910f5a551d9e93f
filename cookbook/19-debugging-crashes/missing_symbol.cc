// A library that declares a function nobody defines: it links (a shared
// library may leave symbols for the loader to find), it loads (function
// symbols are bound on first call), and the process ends at the first call.
// Built only with -DCRASH_DEMOS=ON, as libmissing_symbol.so.
#include <tvm/ffi/function.h>

// [missing_symbol.begin]
float ScaleFactor(float v);  // declared in a header, its .cc file left out of the build

namespace {
float Twice(float v) { return 2.0f * ScaleFactor(v); }
}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(twice, Twice);
// [missing_symbol.end]
