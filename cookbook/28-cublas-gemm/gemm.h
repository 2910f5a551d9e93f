// What the CPU reference and the cuBLAS variant of out = a @ b share: the argument checks.
#ifndef COOKBOOK_GEMM_H_
#define COOKBOOK_GEMM_H_

#include <ffi_cookbook/check.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>

#include <cstdint>

namespace gemm {

// Whether the bytes of two tensors overlap (both contiguous, so each is one range).
inline bool Overlaps(const tvm::ffi::TensorView& x, const tvm::ffi::TensorView& y) {
  const auto* x0 = static_cast<const char*>(x.data_ptr());
  const auto* y0 = static_cast<const char*>(y.data_ptr());
  const int64_t x_bytes = x.numel() * x.dtype().bits / 8, y_bytes = y.numel() * y.dtype().bits / 8;
  return x_bytes > 0 && y_bytes > 0 && x0 < y0 + y_bytes && y0 < x0 + x_bytes;
}

// [gemm_checks.begin]
// a [m, k] @ b [k, n] -> out [m, n]: one device (of type `device`), one dtype, row-major
// (contiguous) tensors, and an out apart from a and b (it is written while they are read).
inline void CheckGemmArgs(const tvm::ffi::TensorView& a, const tvm::ffi::TensorView& b,
                          const tvm::ffi::TensorView& out, DLDeviceType device) {
  ffi_cookbook::CheckDevice(a, "a", device);
  ffi_cookbook::CheckSameDevice(a, "a", b, "b");
  ffi_cookbook::CheckSameDevice(a, "a", out, "out");
  ffi_cookbook::CheckSameDtype(a, "a", b, "b");
  ffi_cookbook::CheckSameDtype(a, "a", out, "out");
  ffi_cookbook::CheckNdim(a, "a", 2);
  ffi_cookbook::CheckNdim(b, "b", 2);
  ffi_cookbook::CheckNdim(out, "out", 2);
  if (b.size(0) != a.size(1)) {
    TVM_FFI_THROW(ValueError) << "argument 'b': expected " << a.size(1) << " rows (the columns of 'a', "
                              << ffi_cookbook::ShapeText(a) << "), got shape " << ffi_cookbook::ShapeText(b);
  }
  if (out.size(0) != a.size(0) || out.size(1) != b.size(1)) {
    TVM_FFI_THROW(ValueError) << "argument 'out': expected shape [" << a.size(0) << ", " << b.size(1)
                              << "] (rows of 'a', columns of 'b'), got " << ffi_cookbook::ShapeText(out);
  }
  ffi_cookbook::CheckContiguous(a, "a");
  ffi_cookbook::CheckContiguous(b, "b");
  ffi_cookbook::CheckContiguous(out, "out");
  if (Overlaps(out, a) || Overlaps(out, b)) {
    TVM_FFI_THROW(ValueError) << "argument 'out': expected memory apart from 'a' and 'b', got an overlap";
  }
}
// [gemm_checks.end]

}  // namespace gemm

#endif  // COOKBOOK_GEMM_H_
