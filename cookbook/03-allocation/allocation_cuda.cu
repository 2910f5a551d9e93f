// Allocating tensors inside a CUDA kernel entry: framework allocator or cudaMalloc.
#include <ffi_cookbook/alloc_cuda.h>
#include <ffi_cookbook/check.h>
#include <ffi_cookbook/dtype.h>
#include <ffi_cookbook/env_alloc.h>
#include <ffi_cookbook/launch.h>
#include <ffi_cookbook/stream.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/extra/cuda/device_guard.h>
#include <tvm/ffi/function.h>

#include <cstdint>

namespace {

namespace ffi = tvm::ffi;

__global__ void TwiceKernel(const float* x, float* y, int64_t n) {
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i];
}

void CheckInput(ffi::TensorView x) {
  ffi_cookbook::CheckDevice(x, "x", kDLCUDA);
  ffi_cookbook::CheckDtype(x, "x", ffi_cookbook::kFloat32);
  ffi_cookbook::CheckContiguous(x, "x");
}

void LaunchTwice(ffi::TensorView x, ffi::TensorView y) {
  cudaStream_t stream = ffi_cookbook::CurrentStream(x.device());
  int64_t n = x.numel();
  TwiceKernel<<<ffi_cookbook::BlocksFor(n), ffi_cookbook::kThreadsPerBlock, 0, stream>>>(
      static_cast<const float*>(x.data_ptr()), static_cast<float*>(y.data_ptr()), n);
  ffi_cookbook::CheckLaunch();
}

// [alloc_env_cuda.begin]
// With a torch CUDA tensor among the arguments, EmptyLike takes memory from
// torch's caching allocator on x's device.
ffi::Tensor TwiceEnvCUDA(ffi::TensorView x) {
  CheckInput(x);
  ffi::CUDADeviceGuard guard(x.device().device_id);
  ffi::Tensor y = ffi_cookbook::EmptyLike(x);
  LaunchTwice(x, y);
  return y;
}
// [alloc_env_cuda.end]

// [alloc_nd_cuda.begin]
// cudaMalloc through CUDAAllocator: the deleter (cudaFree) lives in this library.
ffi::Tensor TwiceNDCUDA(ffi::TensorView x) {
  CheckInput(x);
  ffi::CUDADeviceGuard guard(x.device().device_id);
  ffi::Tensor y = ffi::Tensor::FromNDAlloc(ffi_cookbook::CUDAAllocator(), x.shape(), x.dtype(),
                                           x.device());
  LaunchTwice(x, y);
  return y;
}
// [alloc_nd_cuda.end]

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(alloc_twice_env_cuda, TwiceEnvCUDA);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(alloc_twice_nd_cuda, TwiceNDCUDA);
