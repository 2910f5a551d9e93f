// scale_into with tvm_ffi: out = alpha * x for contiguous float32 CPU tensors.
// Needs apache-tvm-ffi alone: no torch header, no torch library.
#include <cstdint>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>

namespace {

namespace ffi = tvm::ffi;

// [scale_ffi_entry.begin]
void CheckFloat32CPU(ffi::TensorView t, const char* name) {
  DLDataType dtype = t.dtype();
  if (t.device().device_type != kDLCPU) {
    TVM_FFI_THROW(ValueError) << "argument '" << name << "': expected a CPU tensor";
  }
  if (dtype.code != kDLFloat || dtype.bits != 32 || dtype.lanes != 1) {
    TVM_FFI_THROW(TypeError) << "argument '" << name << "': expected dtype float32";
  }
  if (!t.IsContiguous()) {
    TVM_FFI_THROW(ValueError) << "argument '" << name << "': expected a contiguous tensor";
  }
  // The loop reads from data_ptr(); DLPack's first element is at data + byte_offset.
  if (t.byte_offset() != 0 || reinterpret_cast<uintptr_t>(t.data_ptr()) % alignof(float) != 0) {
    TVM_FFI_THROW(ValueError) << "argument '" << name << "': expected byte_offset 0, aligned data";
  }
}

void ScaleInto(ffi::TensorView x, ffi::TensorView out, double alpha) {
  CheckFloat32CPU(x, "x");
  CheckFloat32CPU(out, "out");
  bool same_shape = x.ndim() == out.ndim();
  for (int i = 0; same_shape && i < x.ndim(); ++i) same_shape = x.size(i) == out.size(i);
  if (!same_shape) TVM_FFI_THROW(ValueError) << "argument 'out': expected the shape of 'x'";
  const float* in = static_cast<const float*>(x.data_ptr());
  float* y = static_cast<float*>(out.data_ptr());
  for (int64_t i = 0; i < x.numel(); ++i) y[i] = static_cast<float>(alpha) * in[i];
}
// [scale_ffi_entry.end]

}  // namespace

// [scale_ffi_register.begin]
TVM_FFI_DLL_EXPORT_TYPED_FUNC(scale_into_cpu, ScaleInto);
// [scale_ffi_register.end]
