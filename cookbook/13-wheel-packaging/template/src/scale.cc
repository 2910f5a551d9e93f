// mykernels: y = alpha * x for contiguous float32 tensors on the CPU.
#include <ffi_cookbook/check.h>  // the cookbook's, copied into include/
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/function.h>

namespace {

namespace ffi = tvm::ffi;

// [scale_entry.begin]
void Scale(ffi::TensorView x, ffi::TensorView y, double alpha) {
  // x's dtype first, then device, y against x (device, dtype, shape), and layout.
  ffi_cookbook::CheckDtype(x, "x", DLDataType{kDLFloat, 32, 1});
  ffi_cookbook::CheckElementwise(x, "x", y, "y", kDLCPU);
  const float* in = static_cast<const float*>(x.data_ptr());
  float* out = static_cast<float*>(y.data_ptr());
  const float a = static_cast<float>(alpha);
  for (int64_t i = 0; i < x.numel(); ++i) out[i] = a * in[i];
}
// [scale_entry.end]

}  // namespace

// [scale_export.begin]
TVM_FFI_DLL_EXPORT_TYPED_FUNC(mykernels_scale, Scale);
// [scale_export.end]
