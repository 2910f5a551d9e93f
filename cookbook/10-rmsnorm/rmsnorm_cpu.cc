// RMSNorm over the last dimension on the CPU: y = x / sqrt(mean(x^2) + eps) * weight,
// for float32, float16 and bfloat16, with the sum in float.
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

// [rms_norm_cpu_rows.begin]
// Independent partial sums, which the compiler adds side by side in SIMD registers; a
// single running sum would be a chain of additions it may not reorder.
constexpr int kLanes = 16;

// Each row is read twice: its squares are summed, then it is scaled (from the L1 cache).
template <typename T>
void RMSNormRows(const T* x, const T* w, T* y, int64_t rows, int64_t n, float eps) {
  for (int64_t r = 0; r < rows; ++r, x += n, y += n) {
    float partial[kLanes] = {};
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes) {
      for (int l = 0; l < kLanes; ++l) partial[l] += ToFloat(x[i + l]) * ToFloat(x[i + l]);
    }
    for (; i < n; ++i) partial[0] += ToFloat(x[i]) * ToFloat(x[i]);
    float sum = 0.0f;
    for (float p : partial) sum += p;
    const float inv_rms = 1.0f / std::sqrt(sum / static_cast<float>(n) + eps);
    for (int64_t j = 0; j < n; ++j) y[j] = FromFloat<T>(ToFloat(x[j]) * inv_rms * ToFloat(w[j]));
  }
}
// [rms_norm_cpu_rows.end]

// [rms_norm_cpu_entry.begin]
void RMSNormCPU(ffi::TensorView x, ffi::TensorView weight, ffi::TensorView y, double eps) {
  CheckRMSNormArgs(x, weight, y, eps, kDLCPU);
  if (x.numel() == 0) return;  // no rows, or empty ones: nothing to write
  const int64_t n = x.size(-1);
  // float, ffi_cookbook::Float16 or ffi_cookbook::BFloat16, by x's dtype (TypeError otherwise)
  ffi_cookbook::DispatchFloat(x.dtype(), "x", [&](auto tag) {
    using T = typename decltype(tag)::type;
    RMSNormRows(static_cast<const T*>(x.data_ptr()), static_cast<const T*>(weight.data_ptr()),
                static_cast<T*>(y.data_ptr()), x.numel() / n, n, static_cast<float>(eps));
  });
}
// [rms_norm_cpu_entry.end]

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(rms_norm_cpu, RMSNormCPU);
