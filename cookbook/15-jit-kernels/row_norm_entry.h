// The tvm_ffi entry of the row-norm kernel, a template over the specialisation.
// Every exported instance, prebuilt (row_norm_cpu.cc) or generated at run time
// (row_norm_jit.py), is one line: TVM_FFI_DLL_EXPORT_TYPED_FUNC(name, (RowNorm<T, N, U>)).
#ifndef COOKBOOK_ROW_NORM_ENTRY_H_
#define COOKBOOK_ROW_NORM_ENTRY_H_

#include <ffi_cookbook/check.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/function.h>

#include "row_norm_loop.h"

namespace row_norm {

namespace ffi = tvm::ffi;

// [row_norm_checks.begin]
// x: [rows, N] of T, out: [rows] of T, both contiguous and on the same device.
// A specialised kernel trusts N, so a call with another row length is refused.
template <typename T>
void CheckRowNormArgs(ffi::TensorView x, ffi::TensorView out, DLDeviceType device, int64_t n) {
  ffi_cookbook::CheckDevice(x, "x", device);
  ffi_cookbook::CheckDtype(x, "x", DLDataType{kDLFloat, sizeof(T) * 8, 1});
  ffi_cookbook::CheckNdim(x, "x", 2);
  if (x.size(1) != n) {
    TVM_FFI_THROW(ValueError) << "argument 'x': this kernel was specialised for rows of " << n
                              << " elements, got " << x.size(1);
  }
  ffi_cookbook::CheckSameDevice(x, "x", out, "out");
  ffi_cookbook::CheckSameDtype(x, "x", out, "out");
  ffi_cookbook::CheckNdim(out, "out", 1);
  if (out.size(0) != x.size(0)) {
    TVM_FFI_THROW(ValueError) << "argument 'out': expected " << x.size(0)
                              << " elements (one per row of 'x'), got " << out.size(0);
  }
  ffi_cookbook::CheckContiguous(x, "x");
  ffi_cookbook::CheckContiguous(out, "out");
}
// [row_norm_checks.end]

// [row_norm_entry.begin]
template <typename T, int N, int Unroll>
void RowNorm(ffi::TensorView x, ffi::TensorView out) {
  CheckRowNormArgs<T>(x, out, kDLCPU, N);
  RowNormLoop<T, N, Unroll>(static_cast<const T*>(x.data_ptr()), static_cast<T*>(out.data_ptr()),
                            x.size(0));
}
// [row_norm_entry.end]

}  // namespace row_norm

#endif  // COOKBOOK_ROW_NORM_ENTRY_H_
