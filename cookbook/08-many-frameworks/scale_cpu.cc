// scale on the CPU: out = alpha * x for float32, plus two probes that report
// where a tensor's data lives, so callers can check that nothing was copied.
#include <ffi_cookbook/check.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>

#include <cstdint>

namespace {

namespace ffi = tvm::ffi;

constexpr DLDataType kFloat32{kDLFloat, 32, 1};
constexpr DLDataType kInt64{kDLInt, 64, 1};

// [scale_cpu_entry.begin]
void ScaleCPU(ffi::TensorView x, double alpha, ffi::TensorView out) {
  ffi_cookbook::CheckElementwise(x, "x", out, "out", kDLCPU);
  ffi_cookbook::CheckDtype(x, "x", kFloat32);
  const float* src = static_cast<const float*>(x.data_ptr());
  float* dst = static_cast<float*>(out.data_ptr());
  const float a = static_cast<float>(alpha);
  const int64_t n = x.numel();  // read once, so the loop can vectorize
  for (int64_t i = 0; i < n; ++i) dst[i] = a * src[i];
}
// [scale_cpu_entry.end]

// [data_address_probe.begin]
// Never dereferences the pointer, so it serves tensors on any device. DLPack puts
// the first element at data + byte_offset (frameworks pass byte_offset 0).
int64_t TensorDataAddress(ffi::TensorView x) {
  auto data = reinterpret_cast<intptr_t>(x.data_ptr());
  return static_cast<int64_t>(data + static_cast<intptr_t>(x.byte_offset()));
}
// [data_address_probe.end]

// [data_address_into.begin]
// The same probe as a kernel with an output, for callers (XLA) that only
// hand over buffers: out[0] = address of x's data.
void TensorDataAddressIntoCPU(ffi::TensorView x, ffi::TensorView out) {
  ffi_cookbook::CheckDevice(out, "out", kDLCPU);
  ffi_cookbook::CheckDtype(out, "out", kInt64);
  ffi_cookbook::CheckNdim(out, "out", 1);
  if (out.size(0) != 1) {
    TVM_FFI_THROW(ValueError) << "argument 'out': expected shape [1], got " << out.shape();
  }
  ffi_cookbook::CheckContiguous(out, "out");  // also: an int64 needs an aligned address
  static_cast<int64_t*>(out.data_ptr())[0] = TensorDataAddress(x);
}
// [data_address_into.end]

}  // namespace

// [scale_cpu_export.begin]
TVM_FFI_DLL_EXPORT_TYPED_FUNC(scale_cpu, ScaleCPU);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(tensor_data_address, TensorDataAddress);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(tensor_data_address_into_cpu, TensorDataAddressIntoCPU);
// [scale_cpu_export.end]
