// out = a @ b on the CPU: the reference for the cuBLAS variant, with the same checks and the
// same arithmetic (products summed in float32, one rounding to the output dtype at the end).
#include <ffi_cookbook/check.h>
#include <ffi_cookbook/dtype.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/function.h>

#include <cstdint>
#include <vector>

#include "gemm.h"

namespace {

namespace ffi = tvm::ffi;
using ffi_cookbook::FromFloat;
using ffi_cookbook::ToFloat;

// [gemm_cpu_loops.begin]
// Row i of out is the sum over p of a[i, p] * (row p of b): the inner loop walks b and the
// row's float32 sums with unit stride.
template <typename T>
void Gemm(const T* a, const T* b, T* out, int64_t m, int64_t k, int64_t n) {
  std::vector<float> row(static_cast<size_t>(n));
  for (int64_t i = 0; i < m; ++i) {
    row.assign(row.size(), 0.0f);
    for (int64_t p = 0; p < k; ++p) {
      const float a_ip = ToFloat(a[i * k + p]);
      const T* b_p = b + p * n;
      for (int64_t j = 0; j < n; ++j) row[j] += a_ip * ToFloat(b_p[j]);
    }
    for (int64_t j = 0; j < n; ++j) out[i * n + j] = FromFloat<T>(row[j]);
  }
}
// [gemm_cpu_loops.end]

void GemmCPU(ffi::TensorView a, ffi::TensorView b, ffi::TensorView out) {
  gemm::CheckGemmArgs(a, b, out, kDLCPU);
  ffi_cookbook::DispatchFloat(a.dtype(), "a", [&](auto tag) {
    using T = typename decltype(tag)::type;
    Gemm(static_cast<const T*>(a.data_ptr()), static_cast<const T*>(b.data_ptr()),
         static_cast<T*>(out.data_ptr()), a.size(0), a.size(1), b.size(1));
  });
}

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(gemm_cpu, GemmCPU);
