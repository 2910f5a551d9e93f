// A first kernel to start from: y = alpha * x for contiguous float32 CPU tensors.
#include <ffi_cookbook/check.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/function.h>

namespace {

namespace ffi = tvm::ffi;

void ScaleCPU(ffi::TensorView x, ffi::TensorView y, double alpha) {
  // 1. Validate: every failure names the argument and raises in Python.
  ffi_cookbook::CheckDtype(x, "x", DLDataType{kDLFloat, 32, 1});
  ffi_cookbook::CheckElementwise(x, "x", y, "y", kDLCPU);
  // 2. Run.
  const float* in = static_cast<const float*>(x.data_ptr());
  float* out = static_cast<float*>(y.data_ptr());
  const float a = static_cast<float>(alpha);
  for (int64_t i = 0, n = x.numel(); i < n; ++i) out[i] = a * in[i];
}

}  // namespace

// Export names share one namespace per library: prefix your own with the package name.
TVM_FFI_DLL_EXPORT_TYPED_FUNC(@name@_scale_cpu, ScaleCPU);
