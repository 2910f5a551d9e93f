// The anatomy of a kernel entry, twice: with tvm_ffi alone, then with the
// cookbook's helpers, which shorten the same steps. y = 2 * x on the CPU.
#include <ffi_cookbook/check.h>
#include <ffi_cookbook/dtype.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/dtype.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>

#include <algorithm>
#include <cstdint>
#include <utility>

namespace {

namespace ffi = tvm::ffi;

template <typename T>
void TwiceLoop(const ffi::TensorView& x, const ffi::TensorView& y) {
  const T* in = static_cast<const T*>(x.data_ptr());
  T* out = static_cast<T*>(y.data_ptr());
  for (int64_t i = 0; i < x.numel(); ++i) out[i] = in[i] + in[i];
}

// [plain_entry.begin]
void Twice(ffi::TensorView x, ffi::TensorView y) {
  // 1. Validate: each check raises a Python exception that names the argument.
  TVM_FFI_CHECK(x.device().device_type == kDLCPU, ValueError)
      << "argument 'x': expected a CPU tensor";
  TVM_FFI_CHECK(y.device().device_type == kDLCPU, ValueError)
      << "argument 'y': expected a CPU tensor";
  TVM_FFI_CHECK(y.dtype() == x.dtype(), TypeError) << "argument 'y': expected the dtype of 'x'";
  ffi::ShapeView xs = x.shape(), ys = y.shape();
  bool same_shape = std::equal(xs.begin(), xs.end(), ys.begin(), ys.end());
  TVM_FFI_CHECK(same_shape, ValueError) << "argument 'y': expected the shape of 'x'";
  TVM_FFI_CHECK(x.IsContiguous(), ValueError) << "argument 'x': expected a contiguous tensor";
  TVM_FFI_CHECK(y.IsContiguous(), ValueError) << "argument 'y': expected a contiguous tensor";
  for (auto [t, name] : {std::pair{&x, "x"}, std::pair{&y, "y"}}) {  // read from data_ptr()
    TVM_FFI_CHECK(t->byte_offset() == 0, ValueError) << "argument '" << name
                                                     << "': expected byte_offset 0";
    TVM_FFI_CHECK(reinterpret_cast<uintptr_t>(t->data_ptr()) % (t->dtype().bits / 8) == 0, ValueError)
        << "argument '" << name << "': expected data aligned to its " << t->dtype().bits / 8
        << "-byte elements";
  }
  // 2. Dispatch on the runtime dtype.
  DLDataType dtype = x.dtype();
  if (dtype == DLDataType{kDLFloat, 32, 1}) {
    TwiceLoop<float>(x, y);
  } else if (dtype == DLDataType{kDLFloat, 64, 1}) {
    TwiceLoop<double>(x, y);
  } else {
    TVM_FFI_THROW(TypeError) << "argument 'x': expected float32 or float64";
  }
}
// [plain_entry.end]

// [helper_entry.begin]
void TwiceWithHelpers(ffi::TensorView x, ffi::TensorView y) {
  ffi_cookbook::CheckElementwise(x, "x", y, "y", kDLCPU);  // the checks above
  ffi_cookbook::DispatchFloat(x.dtype(), "x", [&](auto tag) {  // float32, float16, bfloat16
    using T = typename decltype(tag)::type;
    const T* in = static_cast<const T*>(x.data_ptr());
    T* out = static_cast<T*>(y.data_ptr());
    for (int64_t i = 0; i < x.numel(); ++i) {
      out[i] = ffi_cookbook::FromFloat<T>(2.0f * ffi_cookbook::ToFloat(in[i]));
    }
  });
}
// [helper_entry.end]

}  // namespace

// [anatomy_exports.begin]
TVM_FFI_DLL_EXPORT_TYPED_FUNC(guide_twice, Twice);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(guide_twice_with_helpers, TwiceWithHelpers);
// [anatomy_exports.end]
