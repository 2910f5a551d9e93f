// add_one.cc: y = x + 1 for 1-D float32 CPU tensors, with tvm_ffi alone.
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
namespace ffi = tvm::ffi;

void CheckVector(ffi::TensorView t, const char* name, int64_t n) {
  bool ok = t.ndim() == 1 && t.dtype() == DLDataType{kDLFloat, 32, 1};
  if (!ok || t.device().device_type != kDLCPU || !t.IsContiguous() || t.byte_offset()) {
    TVM_FFI_THROW(TypeError) << name << ": expected a contiguous 1-D float32 CPU tensor";
  }
  if (n >= 0 && t.size(0) != n) {
    TVM_FFI_THROW(ValueError) << name << ": length " << t.size(0) << ", expected " << n;
  }
}

void AddOne(ffi::TensorView x, ffi::TensorView y) {
  CheckVector(x, "x", -1);
  CheckVector(y, "y", x.size(0));
  const float* xs = static_cast<const float*>(x.data_ptr());
  float* ys = static_cast<float*>(y.data_ptr());
  for (int64_t i = 0; i < x.size(0); ++i) ys[i] = xs[i] + 1.0f;
}

TVM_FFI_DLL_EXPORT_TYPED_FUNC(add_one, AddOne);  // Python calls it as mod.add_one
