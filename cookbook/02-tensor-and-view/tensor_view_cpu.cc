// Tensor vs TensorView: who owns a tensor's memory, and for how long.
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>

#include <cstdint>

namespace {

namespace ffi = tvm::ffi;

// [view_sum_cpu.begin]
// A TensorView borrows the caller's tensor: it may read the metadata and the
// data during the call, and must not be kept after the call returns.
// Each check raises a Python exception that names the argument.
double ViewSumCPU(ffi::TensorView x) {
  if (x.device().device_type != kDLCPU) {
    TVM_FFI_THROW(ValueError) << "argument 'x': expected a tensor on cpu";
  }
  if (x.dtype() != DLDataType{kDLFloat, 32, 1}) {
    TVM_FFI_THROW(TypeError) << "argument 'x': expected dtype float32";
  }
  if (!x.IsContiguous()) {
    TVM_FFI_THROW(ValueError) << "argument 'x': expected a contiguous tensor";
  }
  // The loop reads whole floats starting at data_ptr().
  if (x.byte_offset() != 0) {
    TVM_FFI_THROW(ValueError) << "argument 'x': expected byte_offset 0, got " << x.byte_offset();
  }
  if (x.numel() != 0 && reinterpret_cast<uintptr_t>(x.data_ptr()) % alignof(float) != 0) {
    TVM_FFI_THROW(ValueError) << "argument 'x': expected data aligned to " << alignof(float) << " bytes";
  }
  const float* data = static_cast<const float*>(x.data_ptr());
  double sum = 0.0;
  for (int64_t i = 0; i < x.numel(); ++i) sum += data[i];
  return sum;
}
// [view_sum_cpu.end]

// [tensor_use_count.begin]
// An ffi::Tensor argument is an owning reference: while this function runs,
// it is one of the owners that use_count() reports.
// It is also nullable: Python's None arrives as an empty Tensor, refused here.
int64_t TensorUseCount(ffi::Tensor t) {
  if (!t.defined()) TVM_FFI_THROW(TypeError) << "argument 't': expected a tensor, got None";
  return t.use_count();
}
// [tensor_use_count.end]

// [tensor_keep.begin]
// The returned function captures `t` by value, so it owns the tensor for as
// long as someone holds the function; calling it returns the same tensor.
ffi::Function TensorKeep(ffi::Tensor t) {
  if (!t.defined()) TVM_FFI_THROW(TypeError) << "argument 't': expected a tensor, got None";
  return ffi::Function::FromTyped([t]() -> ffi::Tensor { return t; });
}
// [tensor_keep.end]

}  // namespace

// [tensor_view_exports.begin]
// tensor_use_count and tensor_keep never touch the data: they serve any device.
TVM_FFI_DLL_EXPORT_TYPED_FUNC(view_sum_cpu, ViewSumCPU);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(tensor_use_count, TensorUseCount);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(tensor_keep, TensorKeep);
// [tensor_view_exports.end]
