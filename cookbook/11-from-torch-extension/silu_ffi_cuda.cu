// SiLU on a CUDA GPU with tvm_ffi: where the extension used c10::cuda::CUDAGuard and
// at::cuda::getCurrentCUDAStream(), the migrated code uses the tvm_ffi equivalents.
#include <ffi_cookbook/check.h>
#include <ffi_cookbook/dtype.h>
#include <ffi_cookbook/env_alloc.h>
#include <ffi_cookbook/launch.h>
#include <ffi_cookbook/stream.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/extra/cuda/device_guard.h>
#include <tvm/ffi/function.h>

namespace {

namespace ffi = tvm::ffi;

__global__ void SiluKernel(const float* x, float* y, int64_t n) {
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] / (1.0f + expf(-x[i]));
}

// [silu_cuda_entry.begin]
ffi::Tensor SiluFfiCUDA(ffi::TensorView x) {
  ffi_cookbook::CheckDevice(x, "x", kDLCUDA);
  ffi_cookbook::CheckDtype(x, "x", ffi_cookbook::kFloat32);
  ffi_cookbook::CheckContiguous(x, "x");
  // was: const c10::cuda::CUDAGuard guard(x.device());
  ffi::CUDADeviceGuard guard(x.device().device_id);
  // was: cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  cudaStream_t stream = ffi_cookbook::CurrentStream(x.device());
  ffi::Tensor y = ffi_cookbook::EmptyLike(x);
  int64_t n = x.numel();
  SiluKernel<<<ffi_cookbook::BlocksFor(n), ffi_cookbook::kThreadsPerBlock, 0, stream>>>(
      static_cast<const float*>(x.data_ptr()), static_cast<float*>(y.data_ptr()), n);
  ffi_cookbook::CheckLaunch();  // was: C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}
// [silu_cuda_entry.end]

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(silu_ffi_cuda, SiluFfiCUDA);
