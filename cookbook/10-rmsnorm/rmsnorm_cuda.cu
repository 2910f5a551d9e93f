// RMSNorm over the last dimension on a CUDA GPU, y = x / sqrt(mean(x^2) + eps) * weight,
// for float32, float16 and bfloat16: 16-byte loads and stores, each row kept in registers
// between its sum and its scaling, the sum in float.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/ffi/extra/cuda/base.h>
#include <tvm/ffi/extra/cuda/device_guard.h>
#include <tvm/ffi/function.h>

#include <algorithm>
#include <cstdint>

#include "rmsnorm_check.h"

namespace {

namespace ffi = tvm::ffi;

// Storage type <-> float, in registers.
__device__ float ToFloat(float v) { return v; }
__device__ float ToFloat(__half v) { return __half2float(v); }
__device__ float ToFloat(__nv_bfloat16 v) { return __bfloat162float(v); }
template <typename T> __device__ T FromFloat(float v);
template <> __device__ float FromFloat<float>(float v) { return v; }
template <> __device__ __half FromFloat<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __nv_bfloat16 FromFloat<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

// [rms_norm_cuda_kernel.begin]
constexpr int kThreads = 256;  // threads per block
constexpr int kMaxCached = 8;  // packs of its row each thread keeps in registers

// kVec consecutive elements, loaded and stored as one access (16 bytes for kVec = 16 / sizeof(T)).
template <typename T, int kVec>
struct alignas(sizeof(T) * kVec) Pack {
  T v[kVec];
};

// The sum of v over a group of kWidth threads (one warp, or the whole block), for each of them.
template <int kWidth>
__device__ float GroupSum(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  if constexpr (kWidth > 32) {
    __shared__ float warp_sums[kWidth / 32];
    __syncthreads();  // the previous row's sums have been read
    if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = v;
    __syncthreads();
    v = 0.0f;
    for (int i = 0; i < kWidth / 32; ++i) v += warp_sums[i];
  }
  return v;
}

// One row per group of kWidth threads: a warp (kWidth = 32, eight rows per block at a time)
// for short rows, the whole block for long ones. Thread `lane` takes packs lane,
// lane + kWidth, ...; the first kCached of them stay in registers from the sum to the
// scaling, so x is read from memory once. A longer row's other packs are read a second
// time, from the L2 cache.
template <typename T, int kVec, int kWidth, int kCached>
__global__ void __launch_bounds__(kThreads)
RMSNormKernel(const T* x, const T* __restrict__ w, T* y, int64_t rows, int64_t n, float eps) {
  using P = Pack<T, kVec>;
  constexpr int kGroups = kThreads / kWidth;
  const int lane = threadIdx.x % kWidth;
  const int64_t packs = n / kVec;
  const P* wp = reinterpret_cast<const P*>(w);
  for (int64_t first = int64_t{blockIdx.x} * kGroups; first < rows; first += int64_t{gridDim.x} * kGroups) {
    const int64_t row = first + threadIdx.x / kWidth;
    if (row >= rows) continue;  // only a warp past the last row; block groups have kGroups = 1
    const P* xp = reinterpret_cast<const P*>(x + row * n);
    P* yp = reinterpret_cast<P*>(y + row * n);
    P cached[kCached];
    float sum = 0.0f;
#pragma unroll
    for (int k = 0; k < kCached; ++k) {
      if (lane + k * kWidth < packs) {
        cached[k] = xp[lane + k * kWidth];
#pragma unroll
        for (int e = 0; e < kVec; ++e) sum += ToFloat(cached[k].v[e]) * ToFloat(cached[k].v[e]);
      }
    }
    for (int64_t i = lane + kCached * kWidth; i < packs; i += kWidth) {
      P p = xp[i];
#pragma unroll
      for (int e = 0; e < kVec; ++e) sum += ToFloat(p.v[e]) * ToFloat(p.v[e]);
    }
    const float inv_rms = rsqrtf(GroupSum<kWidth>(sum) / static_cast<float>(n) + eps);
    auto scale = [&](P p, int64_t i) {
      P q = wp[i];
#pragma unroll
      for (int e = 0; e < kVec; ++e) p.v[e] = FromFloat<T>(ToFloat(p.v[e]) * inv_rms * ToFloat(q.v[e]));
      yp[i] = p;
    };
#pragma unroll
    for (int k = 0; k < kCached; ++k) {
      if (lane + k * kWidth < packs) scale(cached[k], lane + k * kWidth);
    }
    for (int64_t i = lane + kCached * kWidth; i < packs; i += kWidth) scale(xp[i], i);
  }
}
// [rms_norm_cuda_kernel.end]

// [rms_norm_cuda_launch.begin]
template <typename T, int kVec, int kWidth, int kCached>
void Launch(const T* x, const T* w, T* y, int64_t rows, int64_t n, float eps, cudaStream_t stream) {
  constexpr int kGroups = kThreads / kWidth;
  const int64_t blocks = std::min<int64_t>((rows + kGroups - 1) / kGroups, int64_t{1} << 30);
  RMSNormKernel<T, kVec, kWidth, kCached><<<blocks, kThreads, 0, stream>>>(x, w, y, rows, n, eps);
}

// 16-byte accesses where every row starts on a 16-byte boundary, else one element per
// access; a warp per row while a row fits in the registers of a warp, else a block.
template <typename T>
void LaunchRows(ffi::TensorView x, ffi::TensorView weight, ffi::TensorView y, float eps,
                cudaStream_t stream) {
  const auto* xs = static_cast<const T*>(x.data_ptr());
  const auto* ws = static_cast<const T*>(weight.data_ptr());
  auto* ys = static_cast<T*>(y.data_ptr());
  const int64_t n = x.size(-1), rows = x.numel() / n;
  constexpr int kVec = 16 / sizeof(T);
  const bool aligned = n % kVec == 0 && (reinterpret_cast<uintptr_t>(xs) | reinterpret_cast<uintptr_t>(ws) |
                                         reinterpret_cast<uintptr_t>(ys)) % 16 == 0;
  if (!aligned) {
    if (n <= 32 * kMaxCached) return Launch<T, 1, 32, kMaxCached>(xs, ws, ys, rows, n, eps, stream);
    return Launch<T, 1, kThreads, kMaxCached>(xs, ws, ys, rows, n, eps, stream);
  }
  const int64_t per_lane = (n / kVec + 31) / 32;  // packs per thread when a warp takes the row
  if (per_lane <= 1) return Launch<T, kVec, 32, 1>(xs, ws, ys, rows, n, eps, stream);
  if (per_lane <= 2) return Launch<T, kVec, 32, 2>(xs, ws, ys, rows, n, eps, stream);
  if (per_lane <= 4) return Launch<T, kVec, 32, 4>(xs, ws, ys, rows, n, eps, stream);
  if (per_lane <= 8) return Launch<T, kVec, 32, 8>(xs, ws, ys, rows, n, eps, stream);
  return Launch<T, kVec, kThreads, kMaxCached>(xs, ws, ys, rows, n, eps, stream);
}
// [rms_norm_cuda_launch.end]

// [rms_norm_cuda_entry.begin]
void RMSNormCUDA(ffi::TensorView x, ffi::TensorView weight, ffi::TensorView y, double eps) {
  CheckRMSNormArgs(x, weight, y, eps, kDLCUDA);
  if (x.numel() == 0) return;  // no rows, or empty ones: nothing to write
  ffi::CUDADeviceGuard guard(x.device().device_id);
  // The caller's current stream (torch's, for torch tensors), as tvm_ffi publishes it.
  auto stream = static_cast<cudaStream_t>(TVMFFIEnvGetStream(x.device().device_type, x.device().device_id));
  const DLDataType t = x.dtype();
  if (t.code == kDLFloat && t.bits == 32 && t.lanes == 1) {
    LaunchRows<float>(x, weight, y, static_cast<float>(eps), stream);
  } else if (t.code == kDLFloat && t.bits == 16 && t.lanes == 1) {
    LaunchRows<__half>(x, weight, y, static_cast<float>(eps), stream);
  } else if (t.code == kDLBfloat && t.bits == 16 && t.lanes == 1) {
    LaunchRows<__nv_bfloat16>(x, weight, y, static_cast<float>(eps), stream);
  } else {
    TVM_FFI_THROW(TypeError) << "argument 'x': expected dtype float32, float16 or bfloat16, got "
                             << DtypeText(t);
  }
  TVM_FFI_CHECK_CUDA_ERROR(cudaGetLastError());
}
// [rms_norm_cuda_entry.end]

}  // namespace

// [rms_norm_cuda_export.begin]
TVM_FFI_DLL_EXPORT_TYPED_FUNC(rms_norm_cuda, RMSNormCUDA);
// [rms_norm_cuda_export.end]
