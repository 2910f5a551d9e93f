// Argument checks shared by the CPU and CUDA entry points of RMSNorm, written with
// tvm_ffi's own TVM_FFI_CHECK: each failed check raises a Python exception that
// names the argument.
#ifndef COOKBOOK_RMSNORM_CHECK_H_
#define COOKBOOK_RMSNORM_CHECK_H_

#include <cstdint>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>

#include <string>

// "float32", "bfloat16", "int8", ...: the dtype as a message shows it.
inline std::string DtypeText(DLDataType t) {
  const char* kind = t.code == kDLFloat ? "float" : t.code == kDLBfloat ? "bfloat"
                   : t.code == kDLInt   ? "int"   : t.code == kDLUInt   ? "uint" : nullptr;
  if (kind == nullptr) return "dtype code " + std::to_string(t.code);
  return kind + std::to_string(t.bits) + (t.lanes == 1 ? "" : "x" + std::to_string(t.lanes));
}

inline bool SameDtype(DLDataType a, DLDataType b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

inline bool SameDevice(DLDevice a, DLDevice b) {
  return a.device_type == b.device_type && a.device_id == b.device_id;
}

// "cpu:0", "cuda:1": the device as a message shows it.
inline std::string DeviceText(DLDevice d) {
  const char* kind = d.device_type == kDLCPU ? "cpu" : d.device_type == kDLCUDA ? "cuda" : nullptr;
  return (kind ? std::string(kind) : "device type " + std::to_string(d.device_type)) + ":" +
         std::to_string(d.device_id);
}

inline bool SameShape(const tvm::ffi::TensorView& a, const tvm::ffi::TensorView& b) {
  if (a.ndim() != b.ndim()) return false;
  for (int i = 0; i < a.ndim(); ++i) {
    if (a.size(i) != b.size(i)) return false;
  }
  return true;
}

// [rms_norm_checks.begin]
// y = RMSNorm(x) * weight over the last dimension: x and y of one shape (at least
// two dimensions), weight as long as that dimension, all three contiguous, on one
// device of `device_type`, of one dtype; eps > 0.
inline void CheckRMSNormArgs(const tvm::ffi::TensorView& x, const tvm::ffi::TensorView& weight,
                             const tvm::ffi::TensorView& y, double eps, DLDeviceType device_type) {
  TVM_FFI_CHECK(x.device().device_type == device_type, ValueError)
      << "argument 'x': expected a tensor on " << (device_type == kDLCUDA ? "cuda" : "cpu")
      << ", got one on " << DeviceText(x.device());
  TVM_FFI_CHECK(x.ndim() >= 2, ValueError)
      << "argument 'x': expected a tensor with 2 or more dimensions (rows, ..., hidden), got shape "
      << x.shape();
  TVM_FFI_CHECK(weight.ndim() == 1, ValueError)
      << "argument 'weight': expected a 1-d tensor, got " << weight.ndim() << "-d";
  TVM_FFI_CHECK(weight.size(0) == x.size(-1), ValueError)
      << "argument 'weight': expected " << x.size(-1) << " elements (the last dimension of 'x'), got "
      << weight.size(0);
  TVM_FFI_CHECK(SameShape(x, y), ValueError)
      << "argument 'y': expected shape " << x.shape() << " (the shape of 'x'), got " << y.shape();
  for (const auto& [t, name] : {std::pair{&weight, "weight"}, std::pair{&y, "y"}}) {
    TVM_FFI_CHECK(SameDevice(t->device(), x.device()), ValueError)
        << "argument '" << name << "': expected a tensor on " << DeviceText(x.device())
        << " (the device of 'x'), got one on " << DeviceText(t->device());
    TVM_FFI_CHECK(SameDtype(t->dtype(), x.dtype()), TypeError)
        << "argument '" << name << "': expected dtype " << DtypeText(x.dtype())
        << " (the dtype of 'x'), got " << DtypeText(t->dtype());
  }
  for (const auto& [t, name] : {std::pair{&x, "x"}, std::pair{&weight, "weight"}, std::pair{&y, "y"}}) {
    TVM_FFI_CHECK(t->IsContiguous(), ValueError)
        << "argument '" << name << "': expected a contiguous tensor, got strides " << t->strides();
    TVM_FFI_CHECK(t->byte_offset() == 0, ValueError)
        << "argument '" << name << "': expected data at the data pointer, got byte_offset "
        << t->byte_offset();
    TVM_FFI_CHECK(reinterpret_cast<uintptr_t>(t->data_ptr()) % (t->dtype().bits / 8) == 0, ValueError)
        << "argument '" << name << "': expected data aligned to its " << t->dtype().bits / 8
        << "-byte elements";
  }
  TVM_FFI_CHECK(eps > 0.0, ValueError)  // also false for NaN
      << "argument 'eps': expected a positive number, got " << eps;
}
// [rms_norm_checks.end]

#endif  // COOKBOOK_RMSNORM_CHECK_H_
