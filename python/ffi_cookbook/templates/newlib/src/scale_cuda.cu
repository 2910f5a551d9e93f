// The CUDA twin of scale_cpu.cc: y = alpha * x on the caller's current stream.
#include <ffi_cookbook/check.h>
#include <ffi_cookbook/launch.h>
#include <ffi_cookbook/stream.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/extra/cuda/device_guard.h>
#include <tvm/ffi/function.h>

namespace {

namespace ffi = tvm::ffi;

__global__ void ScaleKernel(const float* x, float* y, float alpha, int64_t n) {
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = alpha * x[i];
}

void ScaleCUDA(ffi::TensorView x, ffi::TensorView y, double alpha) {
  // 1. Validate.
  ffi_cookbook::CheckDtype(x, "x", DLDataType{kDLFloat, 32, 1});
  ffi_cookbook::CheckElementwise(x, "x", y, "y", kDLCUDA);
  // 2. Run on x's GPU, on the stream the caller is using.
  ffi::CUDADeviceGuard guard(x.device().device_id);
  cudaStream_t stream = ffi_cookbook::CurrentStream(x.device());
  int64_t n = x.numel();
  // 3. Launch and check.
  ScaleKernel<<<ffi_cookbook::BlocksFor(n), ffi_cookbook::kThreadsPerBlock, 0, stream>>>(
      static_cast<const float*>(x.data_ptr()), static_cast<float*>(y.data_ptr()),
      static_cast<float>(alpha), n);
  ffi_cookbook::CheckLaunch();
}

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(@name@_scale_cuda, ScaleCUDA);
