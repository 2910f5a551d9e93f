// y = a * x + b on the CPU for float32, float16 and bfloat16, with double a and b.
#include <ffi_cookbook/check.h>
#include <ffi_cookbook/dtype.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/function.h>

#include <cstdint>

namespace {

namespace ffi = tvm::ffi;

// [affine_element.begin]
// Widen to float, compute in double, round once to float and once to T.
// For float32 that is a single rounding; for the 16-bit types the rounding
// to T is the one that matters (float's step is 2^13 or 2^16 times finer).
template <typename T>
FFI_COOKBOOK_HOST_DEVICE inline T AffineElement(T x, double a, double b) {
  double wide = a * static_cast<double>(ffi_cookbook::ToFloat(x)) + b;
  return ffi_cookbook::FromFloat<T>(static_cast<float>(wide));
}
// [affine_element.end]

// [affine_cpu_entry.begin]
void AffineCPU(ffi::TensorView x, ffi::TensorView y, double a, double b) {
  // 1. Validate layout and placement; the dtype is checked by the dispatch.
  ffi_cookbook::CheckElementwise(x, "x", y, "y", kDLCPU);
  // 2. One generic lambda, instantiated for float, Float16 and BFloat16.
  ffi_cookbook::DispatchFloat(x.dtype(), "x", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* in = static_cast<const T*>(x.data_ptr());
    T* out = static_cast<T*>(y.data_ptr());
    for (int64_t i = 0; i < x.numel(); ++i) out[i] = AffineElement(in[i], a, b);
  });
}
// [affine_cpu_entry.end]

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(affine_cpu, AffineCPU);
