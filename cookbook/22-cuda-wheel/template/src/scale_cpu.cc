// gpukernels on the CPU: y = alpha * x for contiguous float32 tensors. It runs
// anywhere, so a machine without a GPU can still prove that the wheel loads and calls.
#include <ffi_cookbook/check.h>  // the cookbook's, copied into include/
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/function.h>

namespace {

namespace ffi = tvm::ffi;

void ScaleCPU(ffi::TensorView x, ffi::TensorView y, double alpha) {
  ffi_cookbook::CheckDtype(x, "x", DLDataType{kDLFloat, 32, 1});
  ffi_cookbook::CheckElementwise(x, "x", y, "y", kDLCPU);
  const float* in = static_cast<const float*>(x.data_ptr());
  float* out = static_cast<float*>(y.data_ptr());
  const float a = static_cast<float>(alpha);
  for (int64_t i = 0; i < x.numel(); ++i) out[i] = a * in[i];
}

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(gpukernels_scale_cpu, ScaleCPU);
