// add_one on the CPU: y = x + 1, elementwise, for float32, float16 and bfloat16.
#include <ffi_cookbook/check.h>
#include <ffi_cookbook/dtype.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/function.h>

namespace {

namespace ffi = tvm::ffi;

// [add_one_cpu_loop.begin]
template <typename T>
void AddOneLoop(const T* x, T* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    y[i] = ffi_cookbook::FromFloat<T>(ffi_cookbook::ToFloat(x[i]) + 1.0f);
  }
}
// [add_one_cpu_loop.end]

// [add_one_cpu_entry.begin]
void AddOneCPU(ffi::TensorView x, ffi::TensorView y) {
  // 1. Validate: every failure names the argument and raises in Python.
  ffi_cookbook::CheckElementwise(x, "x", y, "y", kDLCPU);
  // 2. Dispatch on dtype and run.
  ffi_cookbook::DispatchFloat(x.dtype(), "x", [&](auto tag) {
    using T = typename decltype(tag)::type;
    AddOneLoop(static_cast<const T*>(x.data_ptr()), static_cast<T*>(y.data_ptr()), x.numel());
  });
}
// [add_one_cpu_entry.end]

}  // namespace

// [add_one_cpu_export.begin]
TVM_FFI_DLL_EXPORT_TYPED_FUNC(add_one_cpu, AddOneCPU);
// [add_one_cpu_export.end]
