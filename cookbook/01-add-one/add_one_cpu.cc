// add_one on the CPU: y = x + 1, elementwise, for float32 and float64.
// Needs apache-tvm-ffi alone.
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/function.h>

#include "add_one_args.h"

namespace {

namespace ffi = tvm::ffi;

// [add_one_cpu_loop.begin]
template <typename T>
void AddOneLoop(const T* x, T* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] + T(1);
}
// [add_one_cpu_loop.end]

// [add_one_cpu_entry.begin]
void AddOneCPU(ffi::TensorView x, ffi::TensorView y) {
  CheckAddOneArgs(x, y, kDLCPU);  // raises in Python, naming the argument
  if (x.dtype().bits == 32) {
    AddOneLoop(static_cast<const float*>(x.data_ptr()), static_cast<float*>(y.data_ptr()), x.numel());
  } else {
    AddOneLoop(static_cast<const double*>(x.data_ptr()), static_cast<double*>(y.data_ptr()), x.numel());
  }
}
// [add_one_cpu_entry.end]

}  // namespace

// [add_one_cpu_export.begin]
TVM_FFI_DLL_EXPORT_TYPED_FUNC(add_one_cpu, AddOneCPU);
// [add_one_cpu_export.end]
