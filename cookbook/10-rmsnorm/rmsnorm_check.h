// Argument checks shared by the CPU and CUDA entry points of this recipe:
// the generic ones come from ffi_cookbook/check.h, the RMSNorm-specific ones
// (rank, weight length, eps) are spelled out here once.
#ifndef COOKBOOK_RMSNORM_CHECK_H_
#define COOKBOOK_RMSNORM_CHECK_H_

#include <ffi_cookbook/check.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>

// [rms_norm_checks.begin]
inline void CheckRMSNormArgs(const tvm::ffi::TensorView& x, const tvm::ffi::TensorView& weight,
                             const tvm::ffi::TensorView& y, double eps, DLDeviceType device) {
  ffi_cookbook::CheckDevice(x, "x", device);
  if (x.ndim() < 2) {
    TVM_FFI_THROW(ValueError) << "argument 'x': expected a tensor with 2 or more dimensions "
                              << "(rows, ..., hidden), got shape " << x.shape();
  }
  ffi_cookbook::CheckContiguous(x, "x");
  ffi_cookbook::CheckNdim(weight, "weight", 1);
  if (weight.size(0) != x.size(-1)) {
    TVM_FFI_THROW(ValueError) << "argument 'weight': expected " << x.size(-1)
                              << " elements (the last dimension of 'x'), got " << weight.size(0);
  }
  ffi_cookbook::CheckSameDevice(x, "x", weight, "weight");
  ffi_cookbook::CheckSameDtype(x, "x", weight, "weight");
  ffi_cookbook::CheckContiguous(weight, "weight");
  ffi_cookbook::CheckSameDevice(x, "x", y, "y");
  ffi_cookbook::CheckSameDtype(x, "x", y, "y");
  ffi_cookbook::CheckContiguous(y, "y");
  ffi_cookbook::CheckSameShape(x, "x", y, "y");
  if (!(eps > 0.0)) {  // also rejects NaN
    TVM_FFI_THROW(ValueError) << "argument 'eps': expected a positive number, got " << eps;
  }
}
// [rms_norm_checks.end]

#endif  // COOKBOOK_RMSNORM_CHECK_H_
