// Softmax over the rows of a [rows, n] tensor on the CPU, in the two passes of the CUDA
// variant: chunk partials into a workspace, then combine them and write the output.
#include <ffi_cookbook/check.h>
#include <ffi_cookbook/dtype.h>
#include <ffi_cookbook/env_alloc.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/function.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "workspace_softmax.h"

namespace {

namespace ffi = tvm::ffi;
using ffi_cookbook::FromFloat;
using ffi_cookbook::ToFloat;
using workspace_softmax::kChunk;

// [workspace_softmax_cpu_passes.begin]
// Pass 1: each chunk of each row to its max m and its sum of exp(x - m).
template <typename T>
void Partials(const T* x, float* ws_max, float* ws_sum, int64_t rows, int64_t n, int64_t chunks) {
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < chunks; ++c) {
      const T* begin = x + r * n + c * kChunk;
      const T* end = x + r * n + std::min(n, (c + 1) * kChunk);
      float m = -INFINITY;
      for (const T* p = begin; p != end; ++p) m = std::max(m, ToFloat(*p));
      // A double sum: a float one would round after each of up to 4096 terms.
      double s = 0.0;
      if (m != -INFINITY) {
        for (const T* p = begin; p != end; ++p) s += std::exp(ToFloat(*p) - m);
      }
      ws_max[r * chunks + c] = m;
      ws_sum[r * chunks + c] = static_cast<float>(s);
    }
  }
}

// Pass 2: each row's max M and sum S from its chunks' partials, then y = exp(x - M) / S.
template <typename T>
void Output(const T* x, T* y, const float* ws_max, const float* ws_sum, int64_t rows, int64_t n,
            int64_t chunks) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* m = ws_max + r * chunks;
    const float* s = ws_sum + r * chunks;
    const float row_max = *std::max_element(m, m + chunks);
    float row_sum = 0.0f;
    for (int64_t c = 0; c < chunks; ++c) row_sum += workspace_softmax::Rescaled(s[c], m[c], row_max);
    for (int64_t i = r * n; i < (r + 1) * n; ++i) {
      y[i] = FromFloat<T>(std::exp(ToFloat(x[i]) - row_max) / row_sum);
    }
  }
}
// [workspace_softmax_cpu_passes.end]

// [workspace_softmax_cpu_entry.begin]
void WorkspaceSoftmaxCPU(ffi::TensorView x, ffi::TensorView y) {
  // 1. Validate: x and y alike, contiguous, 2-d, on the CPU.
  workspace_softmax::CheckSoftmaxArgs(x, y, kDLCPU);
  if (x.numel() == 0) return;  // no rows, or empty ones: nothing to write, no workspace
  // 2. The workspace, from the caller's allocator (torch's, for torch tensors): it lives
  //    until this function returns, and the framework's allocator reuses the memory.
  const int64_t rows = x.size(0), n = x.size(1);
  ffi::Tensor ws = ffi_cookbook::Empty(workspace_softmax::WorkspaceShape(rows, n),
                                       ffi_cookbook::kFloat32, x.device());
  float* ws_max = static_cast<float*>(ws.data_ptr());
  float* ws_sum = ws_max + ws.size(1) * ws.size(2);  // plane 1
  // 3. Both passes, instantiated for float, Float16 and BFloat16 (TypeError otherwise).
  ffi_cookbook::DispatchFloat(x.dtype(), "x", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* in = static_cast<const T*>(x.data_ptr());
    Partials(in, ws_max, ws_sum, rows, n, ws.size(2));
    Output(in, static_cast<T*>(y.data_ptr()), ws_max, ws_sum, rows, n, ws.size(2));
  });
}
// [workspace_softmax_cpu_entry.end]

// The workspace shape the entries allocate for a [rows, n] input.
ffi::Shape WorkspaceShapeCPU(int64_t rows, int64_t n) {
  return workspace_softmax::WorkspaceShape(rows, n);
}

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(workspace_softmax_cpu, WorkspaceSoftmaxCPU);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(workspace_softmax_shape_cpu, WorkspaceShapeCPU);
