// RMSNorm over the last dimension on the CPU: y = x / sqrt(mean(x^2) + eps) * weight,
// for float32, float16 and bfloat16, accumulating in float.
#include <ffi_cookbook/dtype.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/function.h>

#include <cmath>
#include <cstdint>

#include "rmsnorm_check.h"

namespace {

namespace ffi = tvm::ffi;
using ffi_cookbook::FromFloat;
using ffi_cookbook::ToFloat;

// [rms_norm_cpu_row.begin]
// The library is built for any x86-64, so by default it only uses SSE2 (4 floats per
// instruction). GCC and Clang can also compile a function for AVX-512 and AVX2 and pick
// the best one the CPU has when the library loads.
#if defined(__x86_64__) && defined(__GNUC__)
#define RMSNORM_SIMD_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define RMSNORM_SIMD_CLONES
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

// y = x * inv_rms * w over [0, n).
template <typename T>
inline void ScaleRow(const T* x, const T* w, T* y, int64_t n, float inv_rms) {
  for (int64_t j = 0; j < n; ++j) y[j] = FromFloat<T>(ToFloat(x[j]) * inv_rms * ToFloat(w[j]));
}

// Each row is read twice: its squares are summed, then it is scaled. The two are
// overlapped: one loop scales a row (in the L1 cache since its sum) and sums the
// squares of the next row, so reading the next row and writing this one proceed
// together instead of one after the other.
template <typename T>
RMSNORM_SIMD_CLONES void RMSNormRows(const T* x, const T* w, T* y, int64_t rows, int64_t n,
                                     float eps) {
  float partial[kLanes] = {};
  AddSquares(partial, x, n);
  for (int64_t r = 0; r + 1 < rows; ++r, x += n, y += n) {
    float inv_rms = InverseRMS(partial, n, eps);
    const T* next = x + n;
    int64_t j = 0;
    for (; j + kLanes <= n; j += kLanes) {
      RMSNORM_INDEPENDENT
      for (int l = 0; l < kLanes; ++l) {
        y[j + l] = FromFloat<T>(ToFloat(x[j + l]) * inv_rms * ToFloat(w[j + l]));
        float v = ToFloat(next[j + l]);
        partial[l] += v * v;
      }
    }
    ScaleRow(x + j, w + j, y + j, n - j, inv_rms);  // the last n % kLanes elements
    AddSquares(partial, next + j, n - j);
  }
  ScaleRow(x, w, y, n, InverseRMS(partial, n, eps));  // the last row: no next row to sum
}
// [rms_norm_cpu_row.end]

// [rms_norm_cpu_entry.begin]
void RMSNormCPU(ffi::TensorView x, ffi::TensorView weight, ffi::TensorView y, double eps) {
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
// [rms_norm_cpu_entry.end]

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(rms_norm_cpu, RMSNormCPU);
