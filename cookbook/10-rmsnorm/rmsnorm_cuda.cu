// RMSNorm over the last dimension on a CUDA GPU: one thread block per row,
// float accumulation, a warp-shuffle block reduction.
#include <ffi_cookbook/dtype.h>
#include <ffi_cookbook/launch.h>
#include <ffi_cookbook/stream.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/extra/cuda/device_guard.h>
#include <tvm/ffi/function.h>

#include <cstdint>

#include "rmsnorm_check.h"

namespace {

namespace ffi = tvm::ffi;
using ffi_cookbook::FromFloat;
using ffi_cookbook::ToFloat;

constexpr int kThreads = 256;  // a multiple of the warp size
constexpr int kWarps = kThreads / 32;

// [rms_norm_cuda_block_sum.begin]
// Sum of v over the block, returned to every thread.
__device__ float BlockSum(float v) {
  __shared__ float warp_sums[kWarps];
  __shared__ float total;
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = v;
  __syncthreads();
  if (threadIdx.x < 32) {  // the first warp adds up the per-warp sums
    v = threadIdx.x < kWarps ? warp_sums[threadIdx.x] : 0.0f;
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
    if (threadIdx.x == 0) total = v;
  }
  __syncthreads();
  return total;
}
// [rms_norm_cuda_block_sum.end]

// [rms_norm_cuda_kernel.begin]
template <typename T>
__global__ void RMSNormKernel(const T* x, const T* w, T* y, int64_t rows, int64_t n, float eps) {
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* xr = x + row * n;
    T* yr = y + row * n;
    float sum = 0.0f;
    for (int64_t i = threadIdx.x; i < n; i += kThreads) {
      float v = ToFloat(xr[i]);
      sum += v * v;
    }
    float inv_rms = rsqrtf(BlockSum(sum) / static_cast<float>(n) + eps);
    for (int64_t i = threadIdx.x; i < n; i += kThreads) {
      yr[i] = FromFloat<T>(ToFloat(xr[i]) * inv_rms * ToFloat(w[i]));
    }
  }
}
// [rms_norm_cuda_kernel.end]

// [rms_norm_cuda_entry.begin]
void RMSNormCUDA(ffi::TensorView x, ffi::TensorView weight, ffi::TensorView y, double eps) {
  CheckRMSNormArgs(x, weight, y, eps, kDLCUDA);
  int64_t n = x.size(-1);
  int64_t rows = n == 0 ? 0 : x.numel() / n;
  if (rows == 0) return;
  ffi::CUDADeviceGuard guard(x.device().device_id);
  cudaStream_t stream = ffi_cookbook::CurrentStream(x.device());
  unsigned int blocks = static_cast<unsigned int>(rows < (1 << 20) ? rows : (1 << 20));
  ffi_cookbook::DispatchFloat(x.dtype(), "x", [&](auto tag) {
    using T = typename decltype(tag)::type;
    RMSNormKernel<T><<<blocks, kThreads, 0, stream>>>(
        static_cast<const T*>(x.data_ptr()), static_cast<const T*>(weight.data_ptr()),
        static_cast<T*>(y.data_ptr()), rows, n, static_cast<float>(eps));
  });
  ffi_cookbook::CheckLaunch();
}
// [rms_norm_cuda_entry.end]

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(rms_norm_cuda, RMSNormCUDA);
