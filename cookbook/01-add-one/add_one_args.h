// The checks both add_one entry points run before touching memory. Each failure
// names the argument and raises in Python: TypeError for a dtype, ValueError for
// a device, shape or layout.
#pragma once

#include <cstdint>
#include <utility>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>

inline const char* DeviceTypeName(int type) {
  return type == kDLCPU ? "cpu" : type == kDLCUDA ? "cuda" : "another device";
}

// [add_one_checks.begin]
inline void CheckAddOneArgs(tvm::ffi::TensorView x, tvm::ffi::TensorView y, DLDeviceType device) {
  if (x.device().device_type != device) {
    TVM_FFI_THROW(ValueError) << "argument 'x': expected a tensor on " << DeviceTypeName(device)
                              << ", got one on " << DeviceTypeName(x.device().device_type);
  }
  if (y.device().device_type != device || y.device().device_id != x.device().device_id) {
    TVM_FFI_THROW(ValueError) << "argument 'y': expected a tensor on the device of 'x'";
  }
  DLDataType dtype = x.dtype();
  if (dtype.code != kDLFloat || (dtype.bits != 32 && dtype.bits != 64) || dtype.lanes != 1) {
    TVM_FFI_THROW(TypeError) << "argument 'x': expected dtype float32 or float64";
  }
  if (!(y.dtype() == dtype)) {
    TVM_FFI_THROW(TypeError) << "argument 'y': expected the dtype of 'x'";
  }
  bool same_shape = x.ndim() == y.ndim();
  for (int i = 0; same_shape && i < x.ndim(); ++i) same_shape = x.size(i) == y.size(i);
  if (!same_shape) {
    TVM_FFI_THROW(ValueError) << "argument 'y': expected the shape of 'x'";
  }
  if (!x.IsContiguous() || !y.IsContiguous()) {
    TVM_FFI_THROW(ValueError) << "argument '" << (x.IsContiguous() ? "y" : "x")
                              << "': expected a contiguous tensor";
  }
  // The loop starts at data_ptr() and reads and writes whole elements. DLPack puts the
  // first element at data + byte_offset (frameworks pass 0), and each address must be
  // a multiple of the element size.
  for (const auto& [t, name] : {std::pair{&x, "x"}, std::pair{&y, "y"}}) {
    if (t->byte_offset() != 0) {
      TVM_FFI_THROW(ValueError) << "argument '" << name << "': expected byte_offset 0";
    }
    auto address = reinterpret_cast<uintptr_t>(t->data_ptr());
    if (address % (t->dtype().bits / 8) != 0) {
      TVM_FFI_THROW(ValueError) << "argument '" << name << "': expected data aligned to its "
                                << t->dtype().bits / 8 << "-byte elements";
    }
  }
}
// [add_one_checks.end]
