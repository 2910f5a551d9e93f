// Argument checks shared by the CPU and CUDA forward and backward entries.
// Shapes: x, y, dy, dx [rows, n]; weight, dweight [n]; rstd [rows]; all one dtype.
#ifndef COOKBOOK_RMSNORM_GRAD_CHECK_H_
#define COOKBOOK_RMSNORM_GRAD_CHECK_H_

#include <ffi_cookbook/check.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>

namespace rmsnorm_grad {

namespace ffi = tvm::ffi;

// `t` must match `ref` in device, dtype and shape, and be contiguous.
inline void CheckLike(const ffi::TensorView& t, const char* name, const ffi::TensorView& ref,
                      const char* ref_name) {
  ffi_cookbook::CheckSameDevice(ref, ref_name, t, name);
  ffi_cookbook::CheckSameDtype(ref, ref_name, t, name);
  ffi_cookbook::CheckSameShape(ref, ref_name, t, name);
  ffi_cookbook::CheckContiguous(t, name);
}

// A 1-d tensor of `length` elements, otherwise like `ref`.
inline void CheckVector(const ffi::TensorView& t, const char* name, int64_t length,
                        const ffi::TensorView& ref, const char* ref_name) {
  ffi_cookbook::CheckSameDevice(ref, ref_name, t, name);
  ffi_cookbook::CheckSameDtype(ref, ref_name, t, name);
  ffi_cookbook::CheckNdim(t, name, 1);
  if (t.size(0) != length) {
    TVM_FFI_THROW(ValueError) << "argument '" << name << "': expected " << length
                              << " elements, got " << t.size(0);
  }
  ffi_cookbook::CheckContiguous(t, name);
}

// x: [rows, n] on `device`, float32 or float64; weight [n]; rstd [rows].
inline void CheckInputs(const ffi::TensorView& x, const ffi::TensorView& weight,
                        const ffi::TensorView& rstd, DLDeviceType device) {
  ffi_cookbook::CheckDevice(x, "x", device);
  const DLDataType dtype = x.dtype();
  if (dtype != DLDataType{kDLFloat, 32, 1} && dtype != DLDataType{kDLFloat, 64, 1}) {
    TVM_FFI_THROW(TypeError) << "argument 'x': expected dtype float32 or float64, got "
                             << ffi_cookbook::DtypeName(dtype);
  }
  ffi_cookbook::CheckNdim(x, "x", 2);
  ffi_cookbook::CheckContiguous(x, "x");
  CheckVector(weight, "weight", x.size(1), x, "x");
  CheckVector(rstd, "rstd", x.size(0), x, "x");
}

// Call f(T{}) with T = float or double, the dtype of x (already checked).
template <typename F>
void DispatchFloat32Or64(const ffi::TensorView& x, F&& f) {
  if (x.dtype().bits == 32) {
    f(float{});
  } else {
    f(double{});
  }
}

}  // namespace rmsnorm_grad

#endif  // COOKBOOK_RMSNORM_GRAD_CHECK_H_
