// RMSNorm over the last dimension on a CUDA GPU: one thread block per row,
// float accumulation, a warp-shuffle block reduction, 16-byte vector loads.
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
// kVec consecutive elements, loaded and stored as one (up to 16-byte) access.
template <typename T, int kVec>
struct alignas(sizeof(T) * kVec) Pack {
  T v[kVec];
};

// Each thread walks its row in packs of kVec elements: 16 bytes per access
// when rows are 16-byte aligned, else one element (kVec = 1).
template <typename T, int kVec>
__global__ void RMSNormKernel(const T* x, const T* w, T* y, int64_t rows, int64_t n, float eps) {
  using P = Pack<T, kVec>;
  const int64_t packs = n / kVec;
  const P* wp = reinterpret_cast<const P*>(w);
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const P* xp = reinterpret_cast<const P*>(x + row * n);
    P* yp = reinterpret_cast<P*>(y + row * n);
    float sum = 0.0f;
    for (int64_t i = threadIdx.x; i < packs; i += kThreads) {
      P p = xp[i];
#pragma unroll
      for (int k = 0; k < kVec; ++k) sum += ToFloat(p.v[k]) * ToFloat(p.v[k]);
    }
    float inv_rms = rsqrtf(BlockSum(sum) / static_cast<float>(n) + eps);
    for (int64_t i = threadIdx.x; i < packs; i += kThreads) {
      P p = xp[i];  // the second read of the row hits the cache
      P q = wp[i];
#pragma unroll
      for (int k = 0; k < kVec; ++k) p.v[k] = FromFloat<T>(ToFloat(p.v[k]) * inv_rms * ToFloat(q.v[k]));
      yp[i] = p;
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
    auto* xs = static_cast<const T*>(x.data_ptr());
    auto* ws = static_cast<const T*>(weight.data_ptr());
    auto* ys = static_cast<T*>(y.data_ptr());
    // 16-byte loads need every row start 16-byte aligned: aligned pointers and n a multiple of kVec.
    constexpr int kVec = 16 / sizeof(T);
    bool aligned = n % kVec == 0 &&
                   (reinterpret_cast<uintptr_t>(xs) | reinterpret_cast<uintptr_t>(ws) |
                    reinterpret_cast<uintptr_t>(ys)) % 16 == 0;
    if (aligned) {
      RMSNormKernel<T, kVec><<<blocks, kThreads, 0, stream>>>(xs, ws, ys, rows, n, static_cast<float>(eps));
    } else {
      RMSNormKernel<T, 1><<<blocks, kThreads, 0, stream>>>(xs, ws, ys, rows, n, static_cast<float>(eps));
    }
  });
  ffi_cookbook::CheckLaunch();
}
// [rms_norm_cuda_entry.end]

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(rms_norm_cuda, RMSNormCUDA);
