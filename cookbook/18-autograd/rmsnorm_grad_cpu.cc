// RMSNorm for training on the CPU: y = x * rstd * weight with rstd = 1/sqrt(mean(x^2) + eps)
// per row, and its backward. float32 and float64 (the dtype torch.autograd.gradcheck uses).
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/function.h>

#include <cmath>
#include <vector>

#include "rmsnorm_grad_check.h"

namespace {

namespace ffi = tvm::ffi;
using rmsnorm_grad::CheckInputs;
using rmsnorm_grad::CheckLike;
using rmsnorm_grad::CheckVector;

// [rmsnorm_forward_cpu.begin]
// The forward pass also returns rstd, so the backward pass does not recompute it.
void RMSNormForwardCPU(ffi::TensorView x, ffi::TensorView weight, ffi::TensorView y,
                       ffi::TensorView rstd, double eps) {
  CheckInputs(x, weight, rstd, kDLCPU);
  CheckLike(y, "y", x, "x");
  if (!(eps > 0.0)) TVM_FFI_THROW(ValueError) << "argument 'eps': expected > 0, got " << eps;
  const int64_t rows = x.size(0), n = x.size(1);
  rmsnorm_grad::DispatchFloat32Or64(x, [&](auto zero) {
    using T = decltype(zero);
    const T *xp = static_cast<const T*>(x.data_ptr()), *wp = static_cast<const T*>(weight.data_ptr());
    T *yp = static_cast<T*>(y.data_ptr()), *rp = static_cast<T*>(rstd.data_ptr());
    for (int64_t r = 0; r < rows; ++r) {
      double squares = 0;
      for (int64_t i = 0; i < n; ++i) squares += double(xp[r * n + i]) * xp[r * n + i];
      const T inv = static_cast<T>(1.0 / std::sqrt(squares / n + eps));
      rp[r] = inv;
      for (int64_t i = 0; i < n; ++i) yp[r * n + i] = xp[r * n + i] * inv * wp[i];
    }
  });
}
// [rmsnorm_forward_cpu.end]

// [rmsnorm_backward_cpu.begin]
// With g = dy * weight:  dx = rstd * g - x * rstd^3 * mean(g * x)   (per row)
//                        dweight = sum over rows of dy * x * rstd
void RMSNormBackwardCPU(ffi::TensorView dy, ffi::TensorView x, ffi::TensorView weight,
                        ffi::TensorView rstd, ffi::TensorView dx, ffi::TensorView dweight) {
  CheckInputs(x, weight, rstd, kDLCPU);
  CheckLike(dy, "dy", x, "x");
  CheckLike(dx, "dx", x, "x");
  CheckVector(dweight, "dweight", x.size(1), x, "x");
  const int64_t rows = x.size(0), n = x.size(1);
  rmsnorm_grad::DispatchFloat32Or64(x, [&](auto zero) {
    using T = decltype(zero);
    const T *dyp = static_cast<const T*>(dy.data_ptr()), *xp = static_cast<const T*>(x.data_ptr());
    const T *wp = static_cast<const T*>(weight.data_ptr()), *rp = static_cast<const T*>(rstd.data_ptr());
    T *dxp = static_cast<T*>(dx.data_ptr()), *dwp = static_cast<T*>(dweight.data_ptr());
    std::vector<double> dw(n, 0.0);  // summed over rows in double, rounded once
    for (int64_t r = 0; r < rows; ++r) {
      const T* xr = xp + r * n;
      const T* dyr = dyp + r * n;
      const double inv = rp[r];
      double dot = 0;
      for (int64_t i = 0; i < n; ++i) dot += double(dyr[i]) * wp[i] * xr[i];
      const double correction = inv * inv * inv * dot / n;
      for (int64_t i = 0; i < n; ++i) {
        dxp[r * n + i] = static_cast<T>(inv * dyr[i] * wp[i] - xr[i] * correction);
        dw[i] += double(dyr[i]) * xr[i] * inv;
      }
    }
    for (int64_t i = 0; i < n; ++i) dwp[i] = static_cast<T>(dw[i]);
  });
}
// [rmsnorm_backward_cpu.end]

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(rmsnorm_forward_cpu, RMSNormForwardCPU);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(rmsnorm_backward_cpu, RMSNormBackwardCPU);
