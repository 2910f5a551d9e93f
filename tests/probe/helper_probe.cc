// Exports one function per helper so tests/product/test_helpers.py can call each from Python.
#include <ffi_cookbook/alloc_cpu.h>
#include <ffi_cookbook/check.h>
#include <ffi_cookbook/dtype.h>
#include <ffi_cookbook/env_alloc.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/optional.h>
#include <tvm/ffi/string.h>

#include <cstdint>
#include <memory>
#include <vector>

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

// Both on the CPU, compact and of one shape: the loops below index y as x.
void CheckCPUContiguous(const ffi::TensorView& x, const char* x_name, const ffi::TensorView& y,
                        const char* y_name) {
  fc::CheckDevice(x, x_name, kDLCPU);
  fc::CheckDevice(y, y_name, kDLCPU);
  fc::CheckContiguous(x, x_name);
  fc::CheckContiguous(y, y_name);
  fc::CheckSameShape(x, x_name, y, y_name);
}

// Narrow float32 `x` into the 16-bit `y` (float16 or bfloat16) with FromFloat.
void Narrow(ffi::TensorView x, ffi::TensorView y) {
  fc::CheckDtype(x, "x", fc::kFloat32);
  CheckCPUContiguous(x, "x", y, "y");
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
  CheckCPUContiguous(x, "x", y, "y");
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

// The names error messages print, for DLPack values no framework makes.
ffi::String DtypeName(int64_t code, int64_t bits, int64_t lanes) {
  return fc::DtypeName(DLDataType{static_cast<uint8_t>(code), static_cast<uint8_t>(bits),
                                  static_cast<uint16_t>(lanes)});
}
ffi::String DeviceName(int64_t type, int64_t id) {
  return fc::DeviceName(DLDevice{static_cast<DLDeviceType>(type), static_cast<int32_t>(id)});
}
ffi::String DimsText(ffi::Shape dims, int64_t ndim, bool null_dims) {
  // The probe hands DimsText exactly the dims it has; only the null case may claim more.
  TVM_FFI_CHECK(null_dims || (ndim >= 0 && static_cast<size_t>(ndim) <= dims.size()), ValueError)
      << "argument 'ndim': expected 0 <= ndim <= " << dims.size() << ", got " << ndim;
  return fc::DimsText(null_dims ? nullptr : dims.data(), static_cast<int32_t>(ndim));
}

// A tensor with any DLPack metadata (dtype code/bits/lanes, device, strides,
// byte_offset) over CPU memory that holds every element it addresses, so any
// export can be called with values no framework makes.
struct RawTensor {
  DLManagedTensorVersioned managed{};
  std::vector<int64_t> shape, strides;
  std::vector<char> buffer;
  static void Delete(DLManagedTensorVersioned* self) {
    delete static_cast<RawTensor*>(self->manager_ctx);
  }
};

ffi::Tensor MakeTensor(ffi::Shape shape, ffi::Optional<ffi::Shape> strides, int64_t code,
                       int64_t bits, int64_t lanes, int64_t device_type, int64_t device_id,
                       int64_t byte_offset) {
  TVM_FFI_CHECK(byte_offset >= 0 && byte_offset < (1 << 20), ValueError) << "byte_offset";
  // Owned here until the tensor takes it: a refused argument below frees it.
  std::unique_ptr<RawTensor> raw(new RawTensor());
  raw->shape.assign(shape.begin(), shape.end());
  if (strides.has_value()) raw->strides.assign(strides.value().begin(), strides.value().end());
  TVM_FFI_CHECK(!strides.has_value() || raw->strides.size() == raw->shape.size(), ValueError)
      << "strides and shape differ in length";
  // Elements reachable below and above the first one, from the (signed) strides.
  int64_t below = 0, above = 0, numel = 1, compact = 1;
  for (size_t i = raw->shape.size(); i-- > 0;) {
    TVM_FFI_CHECK(raw->shape[i] >= 0 && raw->shape[i] < (1 << 20), ValueError) << "shape";
    int64_t stride = strides.has_value() ? raw->strides[i] : compact;
    TVM_FFI_CHECK(stride > -(1 << 20) && stride < (1 << 20), ValueError) << "strides";
    int64_t reach = raw->shape[i] == 0 ? 0 : (raw->shape[i] - 1) * stride;
    // Any overflow is a tensor too large to probe (UBSan reports signed overflow).
    int64_t& side = reach < 0 ? below : above;
    TVM_FFI_CHECK(!__builtin_add_overflow(side, reach < 0 ? -reach : reach, &side) &&
                      !__builtin_mul_overflow(numel, raw->shape[i], &numel) &&
                      !__builtin_mul_overflow(compact, raw->shape[i], &compact),
                  ValueError)
        << "too large";
  }
  // Exactly the bytes the elements take (packed when narrower than a byte),
  // so that a read past them is a heap overflow AddressSanitizer reports.
  TVM_FFI_CHECK(below < (int64_t{1} << 40) && above < (int64_t{1} << 40), ValueError) << "too large";
  // The fields DLDataType can hold (uint8 code and bits, uint16 lanes), checked before bits * lanes.
  TVM_FFI_CHECK(code >= 0 && code < 256 && bits > 0 && bits < 256 && lanes > 0 && lanes < 65536,
                ValueError)
      << "dtype";
  int64_t bits_each = bits * lanes, span = numel == 0 ? 0 : below + above + 1;
  TVM_FFI_CHECK(bits_each > 0 && span <= (int64_t{1} << 34) / bits_each, ValueError) << "too large";
  int64_t bytes = (span * bits_each + 7) / 8;
  TVM_FFI_CHECK(bytes < (int64_t{1} << 28), ValueError) << "too large";
  raw->buffer.assign(static_cast<size_t>(byte_offset + (bytes == 0 ? 1 : bytes)), 0);
  DLTensor& t = raw->managed.dl_tensor;
  // data + byte_offset is the first element; data itself is the buffer's start.
  t.data = raw->buffer.data() + (below * bits_each) / 8;
  t.device = DLDevice{static_cast<DLDeviceType>(device_type), static_cast<int32_t>(device_id)};
  t.ndim = static_cast<int32_t>(raw->shape.size());
  t.dtype = DLDataType{static_cast<uint8_t>(code), static_cast<uint8_t>(bits),
                       static_cast<uint16_t>(lanes)};
  t.shape = raw->shape.data();
  t.strides = strides.has_value() ? raw->strides.data() : nullptr;
  t.byte_offset = static_cast<uint64_t>(byte_offset);
  raw->managed.version = DLPackVersion{DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
  raw->managed.manager_ctx = raw.get();
  raw->managed.deleter = &RawTensor::Delete;
  ffi::Tensor tensor = ffi::Tensor::FromDLPackVersioned(&raw->managed);
  raw.release();  // the tensor's deleter frees it now
  return tensor;
}

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
TVM_FFI_DLL_EXPORT_TYPED_FUNC(dtype_name, DtypeName);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(device_name, DeviceName);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(dims_text, DimsText);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(make_tensor, MakeTensor);
