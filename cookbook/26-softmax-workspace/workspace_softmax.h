// What the CPU and CUDA variants of the two-pass softmax share: the chunk a pass-1 step
// reduces, the workspace's shape, the combine of the partials, and the argument checks.
#ifndef COOKBOOK_WORKSPACE_SOFTMAX_H_
#define COOKBOOK_WORKSPACE_SOFTMAX_H_

#include <ffi_cookbook/check.h>
#include <ffi_cookbook/dtype.h>
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>

#include <math.h>

#include <cstdint>

namespace workspace_softmax {

// Elements of a row that one pass-1 step reduces: one CUDA block of 256 threads with 16
// elements each, or one step of the CPU loop. A row of n elements has ceil(n / kChunk) chunks.
constexpr int64_t kChunk = 4096;

// [workspace_shape.begin]
// Pass 1 writes, for every row and chunk, the chunk's max m and its sum s of exp(x - m):
// plane 0 of the workspace holds the maxima, plane 1 the sums, float32 for every dtype.
inline tvm::ffi::Shape WorkspaceShape(int64_t rows, int64_t n) {
  if (rows < 0 || n < 0) {
    TVM_FFI_THROW(ValueError) << "expected rows >= 0 and n >= 0, got rows " << rows << " and n " << n;
  }
  const int64_t chunks = n / kChunk + (n % kChunk != 0);  // no n + kChunk - 1: it could overflow
  return tvm::ffi::Shape({2, rows, chunks});
}
// [workspace_shape.end]

// [workspace_combine.begin]
// A chunk's sum s was taken relative to its own max m; relative to the row's max M it is
// s * exp(m - M). A chunk of -inf only (masked out) has m = -inf and adds nothing, where
// exp(-inf - -inf) would add NaN.
FFI_COOKBOOK_HOST_DEVICE inline float Rescaled(float s, float m, float row_max) {
  return m == -INFINITY ? 0.0f : s * expf(m - row_max);
}
// [workspace_combine.end]

// x and y: same device (of type `device`), dtype and shape, contiguous, 2-d ([rows, n]).
inline void CheckSoftmaxArgs(const tvm::ffi::TensorView& x, const tvm::ffi::TensorView& y,
                             DLDeviceType device) {
  ffi_cookbook::CheckElementwise(x, "x", y, "y", device);
  ffi_cookbook::CheckNdim(x, "x", 2);
}

}  // namespace workspace_softmax

#endif  // COOKBOOK_WORKSPACE_SOFTMAX_H_
