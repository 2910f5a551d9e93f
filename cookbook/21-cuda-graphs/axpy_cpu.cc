// out = alpha * x + y for float32 on the CPU: the reference the CUDA kernel is
// checked against, and what the custom op runs for CPU tensors.
#include <ffi_cookbook/check.h>
#include <ffi_cookbook/dtype.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/function.h>

#include <cstdint>

namespace {

namespace ffi = tvm::ffi;

void AxpyCPU(ffi::TensorView x, ffi::TensorView y, double alpha, ffi::TensorView out) {
  ffi_cookbook::CheckElementwise(x, "x", y, "y", kDLCPU);
  ffi_cookbook::CheckElementwise(x, "x", out, "out", kDLCPU);
  ffi_cookbook::CheckDtype(x, "x", ffi_cookbook::kFloat32);
  const float* xs = static_cast<const float*>(x.data_ptr());
  const float* ys = static_cast<const float*>(y.data_ptr());
  float* dst = static_cast<float*>(out.data_ptr());
  const float a = static_cast<float>(alpha);
  const int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i) dst[i] = a * xs[i] + ys[i];
}

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(graph_axpy_cpu, AxpyCPU);
