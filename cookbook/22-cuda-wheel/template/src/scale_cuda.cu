// gpukernels on a CUDA GPU: y = alpha * x for contiguous float32 tensors, and
// the number of GPUs the CUDA runtime sees (an error, not a crash, without one).
#include <ffi_cookbook/check.h>   // the cookbook's, copied into include/
#include <ffi_cookbook/launch.h>
#include <ffi_cookbook/stream.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/extra/cuda/base.h>
#include <tvm/ffi/extra/cuda/device_guard.h>
#include <tvm/ffi/function.h>

namespace {

namespace ffi = tvm::ffi;

__global__ void ScaleKernel(const float* x, float* y, float alpha, int64_t n) {
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = alpha * x[i];
}

// [scale_cuda_entry.begin]
void ScaleCUDA(ffi::TensorView x, ffi::TensorView y, double alpha) {
  // 1. Validate: a CPU array is a ValueError naming the argument, GPU or not.
  ffi_cookbook::CheckDtype(x, "x", DLDataType{kDLFloat, 32, 1});
  ffi_cookbook::CheckElementwise(x, "x", y, "y", kDLCUDA);
  // 2. Run on x's GPU, on the stream the caller is using.
  ffi::CUDADeviceGuard guard(x.device().device_id);
  cudaStream_t stream = ffi_cookbook::CurrentStream(x.device());
  // 3. Launch, and turn a launch error into a Python RuntimeError.
  int64_t n = x.numel();
  ScaleKernel<<<ffi_cookbook::BlocksFor(n), ffi_cookbook::kThreadsPerBlock, 0, stream>>>(
      static_cast<const float*>(x.data_ptr()), static_cast<float*>(y.data_ptr()),
      static_cast<float>(alpha), n);
  ffi_cookbook::CheckLaunch();
}
// [scale_cuda_entry.end]

// [device_count.begin]
// Without a GPU (or without a new enough driver) the CUDA runtime reports an
// error code; it becomes a RuntimeError naming it.
int64_t CudaDeviceCount() {
  int count = 0;
  TVM_FFI_CHECK_CUDA_ERROR(cudaGetDeviceCount(&count));
  return count;
}
// [device_count.end]

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(gpukernels_scale_cuda, ScaleCUDA);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(gpukernels_cuda_device_count, CudaDeviceCount);
