// Softmax over the rows of a [rows, n] tensor on a CUDA GPU, each row split across blocks:
// pass 1 writes each block's partial max and sum into a workspace, pass 2 combines them.
#include <ffi_cookbook/check.h>
#include <ffi_cookbook/dtype.h>
#include <ffi_cookbook/env_alloc.h>
#include <ffi_cookbook/launch.h>
#include <ffi_cookbook/stream.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/extra/cuda/device_guard.h>
#include <tvm/ffi/function.h>

#include <algorithm>
#include <cstdint>

#include "workspace_softmax.h"

namespace {

namespace ffi = tvm::ffi;
using ffi_cookbook::FromFloat;
using ffi_cookbook::ToFloat;
using workspace_softmax::kChunk;

constexpr int kThreads = 256;
constexpr int kPerThread = kChunk / kThreads;  // 16 elements of the block's chunk per thread

struct Max { __device__ float operator()(float a, float b) const { return fmaxf(a, b); } };
struct Sum { __device__ float operator()(float a, float b) const { return a + b; } };

// op over the values of all threads of the block, returned to each of them.
template <typename Op>
__device__ float BlockReduce(float v, Op op) {
  __shared__ float warp_values[kThreads / 32];
  for (int offset = 16; offset > 0; offset /= 2) v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
  __syncthreads();  // every thread has read the previous call's values
  if (threadIdx.x % 32 == 0) warp_values[threadIdx.x / 32] = v;
  __syncthreads();
  v = warp_values[0];
  for (int w = 1; w < kThreads / 32; ++w) v = op(v, warp_values[w]);
  return v;
}

// [workspace_softmax_cuda_kernels.begin]
// Pass 1: block (c, r) reduces chunk c of row r to its max m and its sum of exp(x - m).
// Thread t reads elements t, t + 256, ...: neighbouring threads, neighbouring addresses.
template <typename T>
__global__ void __launch_bounds__(kThreads)
PartialsKernel(const T* x, float* ws_max, float* ws_sum, int64_t rows, int64_t n, int64_t chunks) {
  const int64_t c = blockIdx.x, first = c * kChunk + threadIdx.x, end = min(n, (c + 1) * kChunk);
  for (int64_t r = blockIdx.y; r < rows; r += gridDim.y) {
    float v[kPerThread], m = -INFINITY, s = 0.0f;
    for (int k = 0; k < kPerThread; ++k) {
      const int64_t i = first + int64_t{k} * kThreads;
      v[k] = i < end ? ToFloat(x[r * n + i]) : -INFINITY;  // padding adds exp(-inf) = 0
      m = fmaxf(m, v[k]);
    }
    m = BlockReduce(m, Max{});
    if (m != -INFINITY) {  // the same for the whole block; a chunk of -inf only sums to 0
      for (int k = 0; k < kPerThread; ++k) s += expf(v[k] - m);
    }
    s = BlockReduce(s, Sum{});
    if (threadIdx.x == 0) ws_max[r * chunks + c] = m, ws_sum[r * chunks + c] = s;
  }
}

// Pass 2: every block of row r combines the row's partials (a few reads each) into its
// max M and sum S, then writes its own chunk, y = exp(x - M) / S.
template <typename T>
__global__ void __launch_bounds__(kThreads)
OutputKernel(const T* x, T* y, const float* ws_max, const float* ws_sum, int64_t rows, int64_t n,
             int64_t chunks) {
  const int64_t c = blockIdx.x, first = c * kChunk + threadIdx.x, end = min(n, (c + 1) * kChunk);
  for (int64_t r = blockIdx.y; r < rows; r += gridDim.y) {
    const float* m = ws_max + r * chunks;
    const float* s = ws_sum + r * chunks;
    float row_max = -INFINITY, row_sum = 0.0f;
    for (int64_t j = threadIdx.x; j < chunks; j += kThreads) row_max = fmaxf(row_max, m[j]);
    row_max = BlockReduce(row_max, Max{});
    for (int64_t j = threadIdx.x; j < chunks; j += kThreads) {
      row_sum += workspace_softmax::Rescaled(s[j], m[j], row_max);
    }
    row_sum = BlockReduce(row_sum, Sum{});
    for (int64_t i = first; i < end; i += kThreads) {
      y[r * n + i] = FromFloat<T>(expf(ToFloat(x[r * n + i]) - row_max) / row_sum);
    }
  }
}
// [workspace_softmax_cuda_kernels.end]

// [workspace_softmax_cuda_entry.begin]
void WorkspaceSoftmaxCUDA(ffi::TensorView x, ffi::TensorView y) {
  // 1. Validate: x and y alike, contiguous, 2-d, on a CUDA device.
  workspace_softmax::CheckSoftmaxArgs(x, y, kDLCUDA);
  if (x.numel() == 0) return;  // no rows, or empty ones: nothing to write, no workspace
  // 2. x's device, and the caller's stream (torch's current one, for torch tensors).
  ffi::CUDADeviceGuard guard(x.device().device_id);
  cudaStream_t stream = ffi_cookbook::CurrentStream(x.device());
  // 3. The workspace from torch's caching allocator on x's device. It goes back when this
  //    function returns, before the kernels finish: safe, because the allocator hands it out
  //    again only to work ordered after them on this stream (the one it was allocated on).
  const int64_t rows = x.size(0), n = x.size(1);
  ffi::Tensor ws = ffi_cookbook::Empty(workspace_softmax::WorkspaceShape(rows, n),
                                       ffi_cookbook::kFloat32, x.device());
  const int64_t chunks = ws.size(2);
  float* ws_max = static_cast<float*>(ws.data_ptr());
  float* ws_sum = ws_max + rows * chunks;  // plane 1
  // 4. Both passes on that stream: blocks (chunk, row); rows past 65535 loop in the kernels.
  const dim3 grid(static_cast<unsigned>(chunks), static_cast<unsigned>(std::min<int64_t>(rows, 65535)));
  ffi_cookbook::DispatchFloat(x.dtype(), "x", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* in = static_cast<const T*>(x.data_ptr());
    PartialsKernel<T><<<grid, kThreads, 0, stream>>>(in, ws_max, ws_sum, rows, n, chunks);
    OutputKernel<T><<<grid, kThreads, 0, stream>>>(in, static_cast<T*>(y.data_ptr()), ws_max,
                                                   ws_sum, rows, n, chunks);
  });
  ffi_cookbook::CheckLaunch();
}
// [workspace_softmax_cuda_entry.end]

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(workspace_softmax_cuda, WorkspaceSoftmaxCUDA);
