// Exports one function per helper so tests/test_helpers.py can call each from Python.
#include <ffi_cookbook/alloc_cpu.h>
#include <ffi_cookbook/check.h>
#include <ffi_cookbook/dtype.h>
#include <ffi_cookbook/env_alloc.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>

#include <cstdint>

namespace {

namespace ffi = tvm::ffi;
namespace fc = ffi_cookbook;

void CheckDeviceCPU(ffi::TensorView x) { fc::CheckDevice(x, "x", kDLCPU); }
void CheckDtypeF32(ffi::TensorView x) { fc::CheckDtype(x, "x", fc::kFloat32); }
void CheckNdim2(ffi::TensorView x) { fc::CheckNdim(x, "x", 2); }
void CheckContiguous(ffi::TensorView x) { fc::CheckContiguous(x, "x"); }
void CheckSameShape(ffi::TensorView a, ffi::TensorView b) { fc::CheckSameShape(a, "a", b, "b"); }
void CheckSameDtype(ffi::TensorView a, ffi::TensorView b) { fc::CheckSameDtype(a, "a", b, "b"); }
void CheckSameDevice(ffi::TensorView a, ffi::TensorView b) { fc::CheckSameDevice(a, "a", b, "b"); }
void CheckElementwise(ffi::TensorView x, ffi::TensorView y) { fc::CheckElementwise(x, "x", y, "y", kDLCPU); }

ffi::String DispatchName(ffi::TensorView x) {
  ffi::String name;
  fc::DispatchFloat(x.dtype(), "x", [&](auto tag) {
    using T = typename decltype(tag)::type;
    name = std::is_same_v<T, float> ? "float" : std::is_same_v<T, fc::Float16> ? "Float16" : "BFloat16";
  });
  return name;
}

// Narrow float32 `x` into the 16-bit `y` (float16 or bfloat16) with FromFloat.
void Narrow(ffi::TensorView x, ffi::TensorView y) {
  fc::CheckDtype(x, "x", fc::kFloat32);
  fc::CheckSameShape(x, "x", y, "y");
  const float* src = static_cast<const float*>(x.data_ptr());
  fc::DispatchFloat(y.dtype(), "y", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* dst = static_cast<T*>(y.data_ptr());
    for (int64_t i = 0; i < x.numel(); ++i) dst[i] = fc::FromFloat<T>(src[i]);
  });
}

// Widen the 16-bit `x` (float16 or bfloat16) into float32 `y` with ToFloat.
void Widen(ffi::TensorView x, ffi::TensorView y) {
  fc::CheckDtype(y, "y", fc::kFloat32);
  fc::CheckSameShape(x, "x", y, "y");
  float* dst = static_cast<float*>(y.data_ptr());
  fc::DispatchFloat(x.dtype(), "x", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* src = static_cast<const T*>(x.data_ptr());
    for (int64_t i = 0; i < x.numel(); ++i) dst[i] = fc::ToFloat(src[i]);
  });
}

ffi::Tensor EmptyLike(ffi::TensorView x) { return fc::EmptyLike(x); }

ffi::Tensor CPUAlloc(int64_t n) {
  return ffi::Tensor::FromNDAlloc(fc::CPUAllocator(), ffi::Shape({n}), fc::kFloat32,
                                  DLDevice{kDLCPU, 0});
}

// A view of a tensor that claims to live on cuda:1, so device checks can be
// tested on a machine without a GPU (the data pointer is never touched).
void CheckFakeCUDA(ffi::TensorView x, bool same_device) {
  DLTensor fake{x.data_ptr(), DLDevice{kDLCUDA, 1}, x.ndim(), x.dtype(),
                const_cast<int64_t*>(x.shape().data()), nullptr, 0};
  if (same_device) {
    fc::CheckSameDevice(x, "x", ffi::TensorView(&fake), "y");
  } else {
    fc::CheckDevice(ffi::TensorView(&fake), "x", kDLCPU);
  }
}

int64_t DataAddress(ffi::TensorView x) { return reinterpret_cast<int64_t>(x.data_ptr()); }

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(check_device_cpu, CheckDeviceCPU);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(check_dtype_f32, CheckDtypeF32);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(check_ndim2, CheckNdim2);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(check_contiguous, CheckContiguous);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(check_same_shape, CheckSameShape);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(check_same_dtype, CheckSameDtype);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(check_same_device, CheckSameDevice);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(check_elementwise, CheckElementwise);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(dispatch_name, DispatchName);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(narrow, Narrow);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(widen, Widen);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(empty_like, EmptyLike);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(cpu_alloc, CPUAlloc);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(data_address, DataAddress);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(check_fake_cuda, CheckFakeCUDA);
