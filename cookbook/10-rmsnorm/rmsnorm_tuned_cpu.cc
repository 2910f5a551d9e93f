// RMSNorm over the last dimension on the CPU, tuned for one core: the same result as
// rmsnorm_cpu.cc (y = x / sqrt(mean(x^2) + eps) * weight, float32, float16 and bfloat16,
// the sum in float), at the speed of a copy of the same bytes.
#include <ffi_cookbook/dtype.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/function.h>

#if defined(__x86_64__)
#include <immintrin.h>  // SSE2's non-temporal store, part of every x86-64 CPU
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <string>

#include "rmsnorm_check.h"

namespace {

namespace ffi = tvm::ffi;
using ffi_cookbook::FromFloat;
using ffi_cookbook::ToFloat;

// [rms_norm_cpu_tuned_rows.begin]
// The library is built for any x86-64, so by default it only uses SSE2 (4 floats per
// instruction). GCC and Clang can also compile a function for AVX-512 and AVX2 and pick
// the best one the CPU has when the library loads.
#if defined(__x86_64__) && defined(__GNUC__)
#define RMSNORM_SIMD_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define RMSNORM_SIMD_CLONES
#endif
// Only the function with the attribute is compiled three times, together with what is
// inlined into it: a helper it calls would run its default (SSE2) code.
#if defined(__GNUC__)
#define RMSNORM_INLINE __attribute__((always_inline)) inline
#else
#define RMSNORM_INLINE inline
#endif

// Marks a loop whose iterations are independent. The compiler cannot prove that writing
// y leaves x, w and the next row unchanged (the pointers could overlap): without the
// hint it checks the pointers before every 64 elements and loads and stores the partial
// sums around them. The hint holds even in place (y == x): an element is read, then
// overwritten, by the same iteration.
#if defined(__clang__)
#define RMSNORM_INDEPENDENT _Pragma("clang loop vectorize(assume_safety)")
#elif defined(__GNUC__)
#define RMSNORM_INDEPENDENT _Pragma("GCC ivdep")
#else
#define RMSNORM_INDEPENDENT
#endif

// Independent partial sums the compiler keeps in SIMD registers. A single running
// sum is a chain of additions it may not reorder (float + is not associative): it
// would square the values side by side but add them one at a time.
constexpr int kLanes = 64;

// Adds the squares of x[0, n) to the partial sums.
template <typename T>
inline void AddSquares(float* partial, const T* x, int64_t n) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int l = 0; l < kLanes; ++l) {
      float v = ToFloat(x[i + l]);
      partial[l] += v * v;
    }
  }
  for (int l = 0; i < n; ++i, ++l) partial[l] += ToFloat(x[i]) * ToFloat(x[i]);
}

// 1 / sqrt(mean + eps) from the partial sums, which it resets. They are added in
// halves (32 + 32, then 16 + 16, ...): six vector additions, where adding them one by
// one into a float would be 64 additions, each waiting for the one before. Unrolled,
// the six steps run in registers instead of through the array in memory.
inline float InverseRMS(float* partial, int64_t n, float eps) {
#pragma GCC unroll 6
  for (int half = kLanes / 2; half > 0; half /= 2) {
    for (int l = 0; l < half; ++l) partial[l] += partial[l + half];
  }
  float inv_rms = 1.0f / std::sqrt(partial[0] / static_cast<float>(n) + eps);
  for (int l = 0; l < kLanes; ++l) partial[l] = 0.0f;
  return inv_rms;
}

// The scaling works on groups of 16 elements (one AVX-512 register of floats), upward or
// from the last group down; see ScalesDown.
constexpr int kGroup = 16;

// y = x * inv_rms * w over [0, n). kDown: group by group from the last one down (the
// elements past the last whole group first), each group upward.
template <bool kDown, typename T>
inline void ScaleRow(const T* x, const T* w, T* y, int64_t n, float inv_rms) {
  if constexpr (kDown) {
    int64_t whole = n - n % kGroup;
    ScaleRow<false>(x + whole, w + whole, y + whole, n - whole, inv_rms);
    for (int64_t k = whole - kGroup; k >= 0; k -= kGroup) {
      ScaleRow<false>(x + k, w + k, y + k, kGroup, inv_rms);
    }
  } else {
    RMSNORM_INDEPENDENT
    for (int64_t j = 0; j < n; ++j) y[j] = FromFloat<T>(ToFloat(x[j]) * inv_rms * ToFloat(w[j]));
  }
}

// Scales elements [0, count) of a row into y while adding the squares of `next`[0, count)
// to the partial sums, one chunk of each per iteration. With the hint the compiler keeps
// the partial sums in SIMD registers for the whole loop, with no pointer check inside it.
// The sum always goes upward; kDown scales the chunks from the last one down, and each
// chunk group by group from its last group down. (Upward, one loop over the chunk measured
// up to twice as fast as the same groups upward.)
template <bool kDown, typename T>
inline void ScaleAndSum(const T* x, const T* w, T* y, const T* next, int64_t count, float inv_rms,
                        float* partial) {
  for (int64_t j = 0; j < count; j += kLanes) {
    if constexpr (kDown) {
#pragma GCC unroll 4
      for (int g = 0; g < kLanes; g += kGroup) {
        const int64_t k = count - kGroup - j - g;  // the group scaled
        RMSNORM_INDEPENDENT
        for (int l = 0; l < kGroup; ++l) {
          y[k + l] = FromFloat<T>(ToFloat(x[k + l]) * inv_rms * ToFloat(w[k + l]));
          float v = ToFloat(next[j + g + l]);
          partial[g + l] += v * v;
        }
      }
    } else {
      RMSNORM_INDEPENDENT
      for (int l = 0; l < kLanes; ++l) {
        y[j + l] = FromFloat<T>(ToFloat(x[j + l]) * inv_rms * ToFloat(w[j + l]));
        float v = ToFloat(next[j + l]);
        partial[l] += v * v;
      }
    }
  }
}

// y = x * inv_rms * w over [0, n), written past the caches where it can be: a plain
// store first reads the line it writes into the cache, a non-temporal one sends whole
// lines to memory, so a row moves two bytes per byte of y instead of three. Each chunk is
// computed into a buffer, then copied out 16 bytes at a time, where y is 16-byte aligned.
template <typename T>
inline void ScaleRowPastTheCache(const T* x, const T* w, T* y, int64_t n, float inv_rms) {
  int64_t start = 0;
#if defined(__x86_64__)
  if (reinterpret_cast<uintptr_t>(y) % 16 == 0) {
    for (; start + kLanes <= n; start += kLanes) {
      alignas(16) T out[kLanes];
      ScaleRow<false>(x + start, w + start, out, kLanes, inv_rms);
      for (size_t i = 0; i < sizeof(out) / 16; ++i) {
        _mm_stream_si128(reinterpret_cast<__m128i*>(y + start) + i,
                         _mm_load_si128(reinterpret_cast<const __m128i*>(out) + i));
      }
    }
  }
#endif
  ScaleRow<false>(x + start, w + start, y + start, n - start, inv_rms);
}

// A load waits for an unfinished store whose address has the same low 12 bits (the
// offset in a 4 KiB page) until the CPU can tell that the two differ; measured here, the
// wait shows while that store is less than 512 bytes back.
constexpr uintptr_t kPage = 4096, kFarEnough = 512;

// Bytes from a's offset in its page up to b's.
inline uintptr_t PageOffsetAfter(const void* a, const void* b) {
  return (reinterpret_cast<uintptr_t>(b) - reinterpret_cast<uintptr_t>(a)) % kPage;
}

// Which way to scale a row. Upward, the store into y[j] would hold up the load of
// x[j + i] just after it where y starts i elements (a few) after x in its page, and the
// load of the next row's element j where y starts at x's page offset with rows of 4 KiB
// (1024 floats), as large tensors usually are. Downward, group by group from the row's
// end, a store has the offset of a load already done, and the next row's loads, going
// up, pass the stores going down once per row; only y starting a little before x puts
// the stores just ahead of the loads, and there upward is safe.
template <typename T>
bool ScalesDown(const T* x, const T* y) {
  uintptr_t before = PageOffsetAfter(y, x);
  return before == 0 || before >= kFarEnough;
}

// Scaling upward, the next row's load of element j still comes just after the store of
// element j whenever y - (x + n) is a little more than a multiple of 4096 bytes (rows of
// other lengths). Scaling `lag` elements behind the sum, wrapping around the row, moves
// the store with the load's offset to (y - (x + n) - lag) mod 4096 bytes back. The
// returned lag, a whole number of chunks below `whole`, puts it nearly 4 KiB back; it
// is 0 where that store is far enough back already.
template <typename T>
int64_t AliasFreeLag(const T* x, const T* y, int64_t n, int64_t whole) {
  constexpr uintptr_t kChunk = kLanes * sizeof(T);
  uintptr_t back = PageOffsetAfter(x + n, y);
  if (back >= kFarEnough) return 0;
  int64_t lag = static_cast<int64_t>(back / kChunk + 1) * kLanes;
  return lag < whole ? lag : 0;
}

// The size of the largest cache the first CPU core has, in bytes, as Linux lists it in
// sysfs (what lscpu shows; sysconf's figure can be that of the whole package), 8 MiB
// where it is not listed. Read once.
inline int64_t LastLevelCacheBytes() {
  static const int64_t bytes = [] {
    int64_t largest = 0;
    for (int index = 0; index < 8; ++index) {
      std::ifstream file("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/size");
      int64_t size = 0;
      char unit = 0;  // "32768K"
      if (file >> size >> unit) largest = std::max(largest, size << (unit == 'M' ? 20 : unit == 'K' ? 10 : 0));
    }
    return largest > 0 ? largest : int64_t{8} << 20;
  }();
  return bytes;
}

// The overlapped loop: one scales a row (in the L1 cache since its sum) and sums the
// squares of the next row, so reading the next row and writing this one proceed
// together. The scaling goes down, or up `lag` elements behind the sum (see ScalesDown
// and AliasFreeLag); the sum keeps its order, so the result does not depend on where y is.
template <bool kDown, typename T>
RMSNORM_INLINE void OverlappedRows(const T* x, const T* w, T* y, int64_t rows, int64_t n, float eps,
                                   float* partial) {
  int64_t whole = n - n % kLanes;  // elements in whole chunks; the rest, one at a time
  int64_t lag = kDown ? 0 : AliasFreeLag(x, y, n, whole);
  AddSquares(partial, x, n);
  for (int64_t r = 0; r + 1 < rows; ++r, x += n, y += n) {
    float inv_rms = InverseRMS(partial, n, eps);
    const T* next = x + n;
    int64_t back = whole - lag;  // the chunks scaled first, while the next row's first are summed
    ScaleAndSum<kDown>(x + back, w + back, y + back, next, lag, inv_rms, partial);
    ScaleAndSum<kDown>(x, w, y, next + lag, back, inv_rms, partial);
    ScaleRow<false>(x + whole, w + whole, y + whole, n - whole, inv_rms);  // the last n % kLanes
    AddSquares(partial, next + whole, n - whole);
  }
  ScaleRow<kDown>(x, w, y, n, InverseRMS(partial, n, eps));  // the last row: no next row to sum
}

// Each row is read twice: its squares are summed, then it is scaled.
// - While x and y fit in half the last-level cache, the two are overlapped
//   (OverlappedRows).
// - Beyond that, both come from main memory, where the overlap is slower than taking
//   one row at a time: sum it, then scale it (still in the L1 cache), upward, which the
//   hardware prefetchers follow best, and past the cache (ScaleRowPastTheCache).
template <typename T>
RMSNORM_SIMD_CLONES void RMSNormRows(const T* x, const T* w, T* y, int64_t rows, int64_t n,
                                     float eps) {
  float partial[kLanes] = {};
  if (2 * rows * n * static_cast<int64_t>(sizeof(T)) > LastLevelCacheBytes() / 2) {
    for (int64_t r = 0; r < rows; ++r, x += n, y += n) {
      AddSquares(partial, x, n);
      ScaleRowPastTheCache(x, w, y, n, InverseRMS(partial, n, eps));
    }
#if defined(__x86_64__)
    _mm_sfence();  // the non-temporal stores are seen before anything the caller does next
#endif
  } else if (ScalesDown(x, y)) {
    OverlappedRows<true>(x, w, y, rows, n, eps, partial);
  } else {
    OverlappedRows<false>(x, w, y, rows, n, eps, partial);
  }
}
// [rms_norm_cpu_tuned_rows.end]

void RMSNormCPUTuned(ffi::TensorView x, ffi::TensorView weight, ffi::TensorView y, double eps) {
  CheckRMSNormArgs(x, weight, y, eps, kDLCPU);
  if (x.numel() == 0) return;  // no rows, or empty ones: nothing to write
  int64_t n = x.size(-1);
  int64_t rows = x.numel() / n;
  ffi_cookbook::DispatchFloat(x.dtype(), "x", [&](auto tag) {
    using T = typename decltype(tag)::type;
    RMSNormRows(static_cast<const T*>(x.data_ptr()), static_cast<const T*>(weight.data_ptr()),
                static_cast<T*>(y.data_ptr()), rows, n, static_cast<float>(eps));
  });
}

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(rms_norm_cpu_tuned, RMSNormCPUTuned);
