// Report what a kernel sees of a tensor: every metadata accessor of TensorView.
#include <tvm/ffi/container/map.h>
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>

#include <cstdint>

namespace {

namespace ffi = tvm::ffi;

// [tensor_info_entry.begin]
ffi::Map<ffi::String, ffi::Any> TensorInfo(ffi::TensorView x) {
  DLDataType dtype = x.dtype();    // code (kDLFloat, kDLInt, ...), bits, lanes
  DLDevice device = x.device();    // device_type (kDLCPU, kDLCUDA, ...), device_id
  ffi::ShapeView shape = x.shape();  // a view of int64_t extents, no copy
  ffi::Map<ffi::String, ffi::Any> info;
  info.Set("ndim", x.ndim());
  info.Set("shape", ffi::Shape(shape));  // copy the view into an owning Shape
  info.Set("strides", ffi::Shape(x.strides()));
  info.Set("size(-1)", x.size(-1));  // negative indices count from the end
  info.Set("stride(0)", x.stride(0));
  info.Set("numel", x.numel());
  info.Set("nbytes", static_cast<int64_t>(ffi::GetDataSize(x)));
  info.Set("dtype.code", static_cast<int64_t>(dtype.code));
  info.Set("dtype.bits", static_cast<int64_t>(dtype.bits));
  info.Set("dtype.lanes", static_cast<int64_t>(dtype.lanes));
  info.Set("dtype", ffi::DLDataTypeToString(dtype));
  info.Set("device.device_type", static_cast<int64_t>(device.device_type));
  info.Set("device.device_id", static_cast<int64_t>(device.device_id));
  info.Set("data_ptr", reinterpret_cast<int64_t>(x.data_ptr()));
  info.Set("byte_offset", static_cast<int64_t>(x.byte_offset()));
  info.Set("IsContiguous", x.IsContiguous());
  return info;
}
// [tensor_info_entry.end]

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(guide_tensor_info, TensorInfo);
