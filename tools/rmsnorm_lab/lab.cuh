// RMSNorm candidates for recipe 10's CUDA kernel (tools/rmsnorm_lab): one configurable kernel
// and the entry point they share. Each .cu file beside this one is one candidate: a launch
// policy that picks this kernel's parameters, exported with tvm_ffi under its own name with
// the signature of rms_norm_cuda (x, weight, y, eps) and the recipe's argument checks.
//
// The kernel is recipe 10's (a group of kWidth threads per row, kCached 16-byte packs of the
// row per thread kept in registers between the sum and the scaling, the sum in float), with
// four switches the candidates turn on:
//   kRows    rows each group loads before it reduces any (more bytes in flight per thread);
//   kPacked  16-bit values converted in pairs (__half2 / __nv_bfloat162: half the conversions);
//   kStream  x read and y written with streaming hints (ld.global.cs / st.global.cs);
//   kCacheW  the weight's packs loaded once per thread, before the grid-stride loop over rows;
//   kRemat   each 16-bit value converted to float twice (for the sum, for the scaling), so that
//            the packs, not their floats, stay in registers in between.
// A group wider than a warp adds its warps' sums through shared memory; every thread of a
// block takes part in every such sum (rows past the end add zero), so that the barriers match.
// Rows that are not 16-byte aligned, or whose length is no multiple of a pack, take a plain
// fallback kernel (one element per access, a block per row).
#ifndef RMSNORM_LAB_CUH_
#define RMSNORM_LAB_CUH_

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

#include "rmsnorm_check.h"  // recipe 10's argument checks (cookbook/10-rmsnorm)

namespace rmsnorm_lab {

namespace ffi = tvm::ffi;

constexpr int kThreads = 256;  // threads per block

// ------------------------------------------------------------------ values and packs

__device__ __forceinline__ float ToFloat(float v) { return v; }
__device__ __forceinline__ float ToFloat(__half v) { return __half2float(v); }
__device__ __forceinline__ float ToFloat(__nv_bfloat16 v) { return __bfloat162float(v); }
template <typename T> __device__ T FromFloat(float v);
template <> __device__ __forceinline__ float FromFloat<float>(float v) { return v; }
template <> __device__ __forceinline__ __half FromFloat<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 FromFloat<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

// Two 16-bit values as one 32-bit register, converted to and from float2 in one step each.
template <typename T> struct PairOf { using type = void; };
template <> struct PairOf<__half> { using type = __half2; };
template <> struct PairOf<__nv_bfloat16> { using type = __nv_bfloat162; };
__device__ __forceinline__ float2 ToFloat2(__half2 v) { return __half22float2(v); }
__device__ __forceinline__ float2 ToFloat2(__nv_bfloat162 v) { return __bfloat1622float2(v); }
__device__ __forceinline__ void FromFloat2(float2 v, __half2* out) { *out = __floats2half2_rn(v.x, v.y); }
__device__ __forceinline__ void FromFloat2(float2 v, __nv_bfloat162* out) { *out = __floats2bfloat162_rn(v.x, v.y); }

// 16 bytes of a row: 4 float32 or 8 16-bit values, loaded and stored as one access.
template <typename T>
struct alignas(16) Pack {
  static constexpr int kVec = 16 / sizeof(T);
  T v[kVec];
};

template <bool kStream, typename T>
__device__ __forceinline__ Pack<T> Load(const Pack<T>* p) {
  if constexpr (kStream) {
    const uint4 raw = __ldcs(reinterpret_cast<const uint4*>(p));
    Pack<T> out;
    *reinterpret_cast<uint4*>(&out) = raw;
    return out;
  } else {
    return *p;
  }
}

template <bool kStream, typename T>
__device__ __forceinline__ void Store(Pack<T>* p, const Pack<T>& v) {
  if constexpr (kStream) {
    __stcs(reinterpret_cast<uint4*>(p), *reinterpret_cast<const uint4*>(&v));
  } else {
    *p = v;
  }
}

// The sum of the squares of a pack, element by element in order (the recipe's order).
template <bool kPacked, typename T>
__device__ __forceinline__ float SumSquares(const Pack<T>& p) {
  float s = 0.0f;
  if constexpr (kPacked && sizeof(T) == 2) {
    using T2 = typename PairOf<T>::type;
#pragma unroll
    for (int e = 0; e < Pack<T>::kVec; e += 2) {
      const float2 f = ToFloat2(*reinterpret_cast<const T2*>(&p.v[e]));
      s += f.x * f.x;
      s += f.y * f.y;
    }
  } else {
#pragma unroll
    for (int e = 0; e < Pack<T>::kVec; ++e) s += ToFloat(p.v[e]) * ToFloat(p.v[e]);
  }
  return s;
}

// x * inv_rms * w per element, in float, rounded once (the recipe's arithmetic).
template <bool kPacked, typename T>
__device__ __forceinline__ Pack<T> Scale(const Pack<T>& p, const Pack<T>& q, float inv_rms) {
  Pack<T> out;
  if constexpr (kPacked && sizeof(T) == 2) {
    using T2 = typename PairOf<T>::type;
#pragma unroll
    for (int e = 0; e < Pack<T>::kVec; e += 2) {
      const float2 a = ToFloat2(*reinterpret_cast<const T2*>(&p.v[e]));
      const float2 b = ToFloat2(*reinterpret_cast<const T2*>(&q.v[e]));
      FromFloat2(make_float2(a.x * inv_rms * b.x, a.y * inv_rms * b.y), reinterpret_cast<T2*>(&out.v[e]));
    }
  } else {
#pragma unroll
    for (int e = 0; e < Pack<T>::kVec; ++e) out.v[e] = FromFloat<T>(ToFloat(p.v[e]) * inv_rms * ToFloat(q.v[e]));
  }
  return out;
}

// The sum of v over a group of kWidth threads (16, 32, or a multiple of 32 up to the block),
// for each of them. Groups wider than a warp meet at two block-wide barriers: every thread of
// the block must call this the same number of times.
template <int kWidth>
__device__ __forceinline__ float GroupSum(float v) {
#pragma unroll
  for (int offset = (kWidth < 32 ? kWidth : 32) / 2; offset > 0; offset /= 2) {
    v += __shfl_xor_sync(0xffffffffu, v, offset);
  }
  if constexpr (kWidth > 32) {
    constexpr int kWarps = kWidth / 32;
    __shared__ float warp_sums[kThreads / 32];
    __syncthreads();  // the previous sum's values have been read
    if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = v;
    __syncthreads();
    const int first = threadIdx.x / kWidth * kWarps;
    v = 0.0f;
#pragma unroll
    for (int i = 0; i < kWarps; ++i) v += warp_sums[first + i];
  }
  return v;
}

// ------------------------------------------------------------------ the kernel

// Hides a pack's value from the optimizer: its conversions to float before this point cannot
// be reused after it, so the compiler keeps the pack (16 bytes) live, not its floats.
template <typename T>
__device__ __forceinline__ void Opaque(Pack<T>& p) {
  uint32_t* words = reinterpret_cast<uint32_t*>(&p);
#pragma unroll
  for (int i = 0; i < 4; ++i) asm volatile("" : "+r"(words[i]));
}

template <typename T, int kWidth, int kCached, int kRows, bool kPacked, bool kStream, bool kCacheW,
          bool kRemat = false>
__global__ void __launch_bounds__(kThreads)
LabKernel(const T* x, const T* __restrict__ w, T* y, int64_t rows, int64_t n, float eps) {
  static_assert(kThreads % kWidth == 0, "a block holds whole groups");
  using P = Pack<T>;
  constexpr int kGroups = kThreads / kWidth;
  const int group = threadIdx.x / kWidth, lane = threadIdx.x % kWidth;
  const int64_t packs = n / P::kVec;
  const P* wp = reinterpret_cast<const P*>(w);
  P w_cached[kCacheW ? kCached : 1];
  if constexpr (kCacheW) {
#pragma unroll
    for (int k = 0; k < kCached; ++k) {
      if (lane + k * kWidth < packs) w_cached[k] = wp[lane + k * kWidth];
    }
  }
  // base is the same for every thread of the block, so all of them run the same iterations.
  for (int64_t base = int64_t{blockIdx.x} * kGroups * kRows; base < rows;
       base += int64_t{gridDim.x} * kGroups * kRows) {
    const int64_t row0 = base + int64_t{group} * kRows;
    P cached[kRows][kCached];
    float sum[kRows];
#pragma unroll
    for (int r = 0; r < kRows; ++r) {  // every load of the group's rows before any sum
      sum[r] = 0.0f;
      if (row0 + r < rows) {
        const P* xp = reinterpret_cast<const P*>(x + (row0 + r) * n);
#pragma unroll
        for (int k = 0; k < kCached; ++k) {
          if (lane + k * kWidth < packs) cached[r][k] = Load<kStream>(xp + lane + k * kWidth);
        }
      }
    }
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      if (row0 + r < rows) {
#pragma unroll
        for (int k = 0; k < kCached; ++k) {
          if (lane + k * kWidth < packs) sum[r] += SumSquares<kPacked>(cached[r][k]);
        }
        const P* xp = reinterpret_cast<const P*>(x + (row0 + r) * n);
        for (int64_t i = lane + kCached * kWidth; i < packs; i += kWidth) sum[r] += SumSquares<kPacked>(Load<kStream>(xp + i));
      }
    }
    float inv_rms[kRows];
#pragma unroll
    for (int r = 0; r < kRows; ++r) inv_rms[r] = rsqrtf(GroupSum<kWidth>(sum[r]) / static_cast<float>(n) + eps);
    if constexpr (kRemat) {  // the packs, as stored, are what lives on: their floats are made again
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
#pragma unroll
        for (int k = 0; k < kCached; ++k) Opaque(cached[r][k]);
      }
    }
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      if (row0 + r >= rows) continue;
      const P* xp = reinterpret_cast<const P*>(x + (row0 + r) * n);
      P* yp = reinterpret_cast<P*>(y + (row0 + r) * n);
#pragma unroll
      for (int k = 0; k < kCached; ++k) {
        const int64_t i = lane + k * kWidth;
        if (i < packs) {
          P wv;
          if constexpr (kCacheW) {
            wv = w_cached[k];
          } else {
            wv = wp[i];
          }
          if constexpr (kRemat) Opaque(wv);  // nor are the weight's floats kept from row to row
          Store<kStream>(yp + i, Scale<kPacked>(cached[r][k], wv, inv_rms[r]));
        }
      }
      for (int64_t i = lane + kCached * kWidth; i < packs; i += kWidth) {
        Store<kStream>(yp + i, Scale<kPacked>(Load<kStream>(xp + i), wp[i], inv_rms[r]));
      }
    }
  }
}

// Rows that do not start on 16 bytes or are no multiple of a pack: a block per row, one
// element per access, x read twice (the second time mostly from the caches).
template <typename T>
__global__ void __launch_bounds__(kThreads)
FallbackKernel(const T* x, const T* __restrict__ w, T* y, int64_t rows, int64_t n, float eps) {
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* xr = x + row * n;
    float sum = 0.0f;
    for (int64_t i = threadIdx.x; i < n; i += kThreads) sum += ToFloat(xr[i]) * ToFloat(xr[i]);
    const float inv_rms = rsqrtf(GroupSum<kThreads>(sum) / static_cast<float>(n) + eps);
    for (int64_t i = threadIdx.x; i < n; i += kThreads) {
      y[row * n + i] = FromFloat<T>(ToFloat(xr[i]) * inv_rms * ToFloat(w[i]));
    }
  }
}

// ------------------------------------------------------------------ launching

// What a launch policy needs: the typed pointers, the shape, the stream, the device's size.
template <typename T>
struct Rows {
  const T* x;
  const T* w;
  T* y;
  int64_t rows, n;
  float eps;
  cudaStream_t stream;
  int device;
  int64_t packs() const { return n / Pack<T>::kVec; }
};

// The smallest of 1, 2, 4, 8 that is at least `per_thread`, or 0 where none is.
inline int CachedFor(int64_t per_thread) {
  for (int c : {1, 2, 4, 8}) {
    if (per_thread <= c) return c;
  }
  return 0;
}

// Launches LabKernel for `r`; `persistent`: at most as many blocks as the device holds at once.
template <typename T, int kWidth, int kCached, int kRows, bool kPacked, bool kStream, bool kCacheW,
          bool kRemat = false>
void Launch(const Rows<T>& r, bool persistent) {
  auto kernel = LabKernel<T, kWidth, kCached, kRows, kPacked, kStream, kCacheW, kRemat>;
  constexpr int64_t kPerBlock = int64_t{kThreads} / kWidth * kRows;
  int64_t blocks = std::min<int64_t>((r.rows + kPerBlock - 1) / kPerBlock, int64_t{1} << 30);
  if (persistent) {
    int sms = 0, per_sm = 0;
    TVM_FFI_CHECK_CUDA_ERROR(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, r.device));
    TVM_FFI_CHECK_CUDA_ERROR(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, 0));
    blocks = std::min<int64_t>(blocks, int64_t{sms} * std::max(per_sm, 1));
  }
  kernel<<<blocks, kThreads, 0, r.stream>>>(r.x, r.w, r.y, r.rows, r.n, r.eps);
}

// Picks kCached for a group of kWidth threads (the fewest packs per thread that hold the
// row, up to 8; longer rows keep 8 and read the rest twice).
template <typename T, int kWidth, int kRows, bool kPacked, bool kStream, bool kCacheW, bool kRemat = false>
void LaunchWidth(const Rows<T>& r, bool persistent) {
#ifdef RMSNORM_LAB_FEWER_KERNELS  // a quicker build (the CPU-side test): 8 packs per thread for every row
  return Launch<T, kWidth, 8, kRows, kPacked, kStream, kCacheW, kRemat>(r, persistent);
#else
  switch (CachedFor((r.packs() + kWidth - 1) / kWidth)) {
    case 1: return Launch<T, kWidth, 1, kRows, kPacked, kStream, kCacheW, kRemat>(r, persistent);
    case 2: return Launch<T, kWidth, 2, kRows, kPacked, kStream, kCacheW, kRemat>(r, persistent);
    case 4: return Launch<T, kWidth, 4, kRows, kPacked, kStream, kCacheW, kRemat>(r, persistent);
    default: return Launch<T, kWidth, 8, kRows, kPacked, kStream, kCacheW, kRemat>(r, persistent);
  }
#endif
}

// The recipe's choice of group: a warp while a row fits in 8 packs per thread of a warp, else
// the whole block.
template <typename T, int kRows, bool kPacked, bool kStream, bool kCacheW, bool kRemat = false>
void LaunchWarpOrBlock(const Rows<T>& r, bool persistent) {
  if (r.packs() <= 32 * 8) return LaunchWidth<T, 32, kRows, kPacked, kStream, kCacheW, kRemat>(r, persistent);
  return LaunchWidth<T, kThreads, kRows, kPacked, kStream, kCacheW, kRemat>(r, persistent);
}

template <typename T>
void LaunchFallback(const Rows<T>& r) {
  const int64_t blocks = std::min<int64_t>(r.rows, int64_t{1} << 30);
  FallbackKernel<T><<<blocks, kThreads, 0, r.stream>>>(r.x, r.w, r.y, r.rows, r.n, r.eps);
}

// The shared entry point: the recipe's checks, the device and the caller's stream, the dtype,
// then `Policy::template Run<T>(rows)` where rows are 16-byte aligned and a whole number of
// packs, else the fallback.
template <typename Policy>
void Entry(ffi::TensorView x, ffi::TensorView weight, ffi::TensorView y, double eps) {
  CheckRMSNormArgs(x, weight, y, eps, kDLCUDA);
  if (x.numel() == 0) return;
  ffi::CUDADeviceGuard guard(x.device().device_id);
  auto stream = static_cast<cudaStream_t>(TVMFFIEnvGetStream(x.device().device_type, x.device().device_id));
  auto run = [&](auto zero) {
    using T = decltype(zero);
    const Rows<T> r{static_cast<const T*>(x.data_ptr()), static_cast<const T*>(weight.data_ptr()),
                    static_cast<T*>(y.data_ptr()), x.numel() / x.size(-1), x.size(-1), static_cast<float>(eps),
                    stream, x.device().device_id};
    const bool aligned = r.n % Pack<T>::kVec == 0 &&
                         (reinterpret_cast<uintptr_t>(r.x) | reinterpret_cast<uintptr_t>(r.w) |
                          reinterpret_cast<uintptr_t>(r.y)) % 16 == 0;
    if (aligned) {
      Policy::template Run<T>(r);
    } else {
      LaunchFallback<T>(r);
    }
  };
  const DLDataType t = x.dtype();
  if (t.code == kDLFloat && t.bits == 32 && t.lanes == 1) {
    run(float{});
  } else if (t.code == kDLFloat && t.bits == 16 && t.lanes == 1) {
    run(__half{});
  } else if (t.code == kDLBfloat && t.bits == 16 && t.lanes == 1) {
    run(__nv_bfloat16{});
  } else {
    TVM_FFI_THROW(TypeError) << "argument 'x': expected dtype float32, float16 or bfloat16, got " << DtypeText(t);
  }
  TVM_FFI_CHECK_CUDA_ERROR(cudaGetLastError());
}

}  // namespace rmsnorm_lab

#endif  // RMSNORM_LAB_CUH_
