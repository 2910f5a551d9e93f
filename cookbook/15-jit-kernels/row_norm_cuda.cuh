// The row-norm kernel on a CUDA GPU, specialised like the CPU one: one warp per
// row, each lane keeping Unroll partial sums over a strided, coalesced slice.
#ifndef COOKBOOK_ROW_NORM_CUDA_CUH_
#define COOKBOOK_ROW_NORM_CUDA_CUH_

#include <ffi_cookbook/launch.h>
#include <ffi_cookbook/stream.h>
#include <tvm/ffi/extra/cuda/device_guard.h>

#include "row_norm_entry.h"

namespace row_norm {

constexpr int kWarp = 32;

// [row_norm_cuda_kernel.begin]
template <typename T, int N, int Unroll>
__global__ void RowNormKernel(const T* x, T* out, int64_t rows) {
  const int64_t row = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / kWarp;
  const int lane = threadIdx.x % kWarp;
  if (row >= rows) return;  // whole warps leave together: blockDim is a multiple of 32
  T partial[Unroll] = {};
  for (int i = lane; i < N; i += kWarp * Unroll) {
#pragma unroll
    for (int u = 0; u < Unroll; ++u) {
      const int k = i + u * kWarp;
      if (k < N) partial[u] += x[row * N + k] * x[row * N + k];
    }
  }
  T sum = 0;
  for (int u = 0; u < Unroll; ++u) sum += partial[u];
  for (int offset = kWarp / 2; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffff, sum, offset);
  if (lane == 0) out[row] = sqrt(sum);
}
// [row_norm_cuda_kernel.end]

// [row_norm_cuda_entry.begin]
template <typename T, int N, int Unroll>
void RowNormCUDA(ffi::TensorView x, ffi::TensorView out) {
  CheckRowNormArgs<T>(x, out, kDLCUDA, N);
  ffi::CUDADeviceGuard guard(x.device().device_id);
  const int64_t rows = x.size(0);
  if (rows == 0) return;
  const int64_t threads = rows * kWarp;
  RowNormKernel<T, N, Unroll>
      <<<ffi_cookbook::BlocksFor(threads), ffi_cookbook::kThreadsPerBlock, 0,
         ffi_cookbook::CurrentStream(x.device())>>>(static_cast<const T*>(x.data_ptr()),
                                                    static_cast<T*>(out.data_ptr()), rows);
  ffi_cookbook::CheckLaunch();
}
// [row_norm_cuda_entry.end]

}  // namespace row_norm

#endif  // COOKBOOK_ROW_NORM_CUDA_CUH_
