// relu_squared on the CPU: out = max(x, 0)^2 for float32, into a preallocated out.
#include <ffi_cookbook/check.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/function.h>

namespace {

namespace ffi = tvm::ffi;

// [relu_squared_cpu_entry.begin]
void ReluSquaredCPU(ffi::TensorView x, ffi::TensorView out) {
  ffi_cookbook::CheckElementwise(x, "x", out, "out", kDLCPU);
  ffi_cookbook::CheckDtype(x, "x", DLDataType{kDLFloat, 32, 1});
  const float* src = static_cast<const float*>(x.data_ptr());
  float* dst = static_cast<float*>(out.data_ptr());
  const int64_t n = x.numel();  // read once, so the loop can vectorize
  for (int64_t i = 0; i < n; ++i) {
    float r = src[i] > 0.0f ? src[i] : 0.0f;
    dst[i] = r * r;
  }
}
// [relu_squared_cpu_entry.end]

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(relu_squared_cpu, ReluSquaredCPU);
