// Deliberately broken exports. abort_on_complex aborts the process for complex
// tensors and returns the number of dimensions otherwise; call_unchecked calls
// its callback without checking that it got one, so None (an undefined
// ffi::Function) dereferences null. tests/product/test_fuzz.py runs the fuzz against
// them to prove that such crashes are found and reported.
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/function.h>

#include <cstdint>
#include <cstdlib>

namespace {

int64_t AbortOnComplex(tvm::ffi::TensorView x) {
  if (x.dtype().code == kDLComplex) std::abort();
  return x.ndim();
}

tvm::ffi::Any CallUnchecked(tvm::ffi::Function f) { return f(1); }

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(abort_on_complex, AbortOnComplex);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(call_unchecked, CallUnchecked);
