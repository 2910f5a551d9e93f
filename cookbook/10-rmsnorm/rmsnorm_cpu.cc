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
template <typename T>
void RMSNormRow(const T* x, const T* w, T* y, int64_t n, float eps) {
  // kLanes independent partial sums the compiler can keep in SIMD registers.
  // A single running sum is a chain of additions it may not reorder (float + is
  // not associative): it would vectorise the squares but add them one at a time.
  constexpr int kLanes = 16;
  float partial[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int l = 0; l < kLanes; ++l) {
      float v = ToFloat(x[i + l]);
      partial[l] += v * v;
    }
  }
  float sum = 0.0f;
  for (; i < n; ++i) sum += ToFloat(x[i]) * ToFloat(x[i]);
  for (int l = 0; l < kLanes; ++l) sum += partial[l];
  float inv_rms = 1.0f / std::sqrt(sum / static_cast<float>(n) + eps);
  for (int64_t j = 0; j < n; ++j) y[j] = FromFloat<T>(ToFloat(x[j]) * inv_rms * ToFloat(w[j]));
}
// [rms_norm_cpu_row.end]

// [rms_norm_cpu_entry.begin]
void RMSNormCPU(ffi::TensorView x, ffi::TensorView weight, ffi::TensorView y, double eps) {
  CheckRMSNormArgs(x, weight, y, eps, kDLCPU);
  int64_t n = x.size(-1);
  if (n == 0) return;  // every row is empty: nothing to write
  int64_t rows = x.numel() / n;
  ffi_cookbook::DispatchFloat(x.dtype(), "x", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* xp = static_cast<const T*>(x.data_ptr());
    const T* wp = static_cast<const T*>(weight.data_ptr());
    T* yp = static_cast<T*>(y.data_ptr());
    for (int64_t r = 0; r < rows; ++r) {
      RMSNormRow(xp + r * n, wp, yp + r * n, n, static_cast<float>(eps));
    }
  });
}
// [rms_norm_cpu_entry.end]

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(rms_norm_cpu, RMSNormCPU);
