/*!
 * \file ffi_cookbook/check.h
 * \brief Argument checks for kernel entry points.
 *
 * Every check names the argument it looked at and says what it expected, so a
 * caller in Python sees, for example,
 * `TypeError: argument 'x': expected dtype float32, got int32`
 * instead of a crash or a silent wrong answer. Wrong kinds of data (dtype)
 * raise TypeError; wrong layout, shape or placement raise ValueError.
 */
#ifndef FFI_COOKBOOK_CHECK_H_
#define FFI_COOKBOOK_CHECK_H_

#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/dtype.h>
#include <tvm/ffi/error.h>

#include <cstdint>
#include <string>

namespace ffi_cookbook {

/*!
 * \defgroup check Argument checks
 * \{
 */

/*!
 * \brief Human-readable name of a DLPack device type ("cpu", "cuda", ...).
 * \param type The device type.
 * \return A short lower-case name; "device_type=<n>" for types without one.
 */
inline std::string DeviceTypeName(DLDeviceType type) {
  switch (type) {
    case kDLCPU: return "cpu";
    case kDLCUDA: return "cuda";
    case kDLCUDAHost: return "cuda_host";
    case kDLCUDAManaged: return "cuda_managed";
    case kDLROCM: return "rocm";
    case kDLMetal: return "metal";
    case kDLVulkan: return "vulkan";
    case kDLOpenCL: return "opencl";
    default: return "device_type=" + std::to_string(static_cast<int>(type));
  }
}

/*!
 * \brief Name of a device with its index, e.g. "cuda:1".
 * \param device The device.
 * \return The device type name, a colon and the device id.
 */
inline std::string DeviceName(DLDevice device) {
  return DeviceTypeName(device.device_type) + ":" + std::to_string(device.device_id);
}

/*!
 * \brief Require a tensor to live on a device of the given type.
 *
 * \code{.cpp}
 * ffi_cookbook::CheckDevice(x, "x", kDLCPU);  // ValueError if x is on a GPU
 * \endcode
 * \param t The tensor.
 * \param name The argument name shown in the error.
 * \param expected The device type the kernel handles.
 * \throws ValueError when the device type differs.
 */
inline void CheckDevice(const tvm::ffi::TensorView& t, const char* name, DLDeviceType expected) {
  if (t.device().device_type != expected) {
    TVM_FFI_THROW(ValueError) << "argument '" << name << "': expected a tensor on "
                              << DeviceTypeName(expected) << ", got one on "
                              << DeviceName(t.device());
  }
}

/*!
 * \brief Require a tensor to have exactly the given dtype.
 *
 * \code{.cpp}
 * ffi_cookbook::CheckDtype(x, "x", DLDataType{kDLFloat, 32, 1});
 * \endcode
 * \param t The tensor.
 * \param name The argument name shown in the error.
 * \param expected The dtype the kernel handles.
 * \throws TypeError when the dtype differs.
 */
inline void CheckDtype(const tvm::ffi::TensorView& t, const char* name, DLDataType expected) {
  if (t.dtype() != expected) {
    TVM_FFI_THROW(TypeError) << "argument '" << name << "': expected dtype " << expected
                             << ", got " << t.dtype();
  }
}

/*!
 * \brief Require a tensor to have the given number of dimensions.
 * \param t The tensor.
 * \param name The argument name shown in the error.
 * \param expected The number of dimensions.
 * \throws ValueError when the number of dimensions differs.
 */
inline void CheckNdim(const tvm::ffi::TensorView& t, const char* name, int32_t expected) {
  if (t.ndim() != expected) {
    TVM_FFI_THROW(ValueError) << "argument '" << name << "': expected a " << expected
                              << "-d tensor, got " << t.ndim() << "-d with shape " << t.shape();
  }
}

/*!
 * \brief Require a tensor to be contiguous (row-major, no gaps).
 * \param t The tensor.
 * \param name The argument name shown in the error.
 * \throws ValueError for strided views such as a transpose or a slice with step.
 */
inline void CheckContiguous(const tvm::ffi::TensorView& t, const char* name) {
  if (!t.IsContiguous()) {
    TVM_FFI_THROW(ValueError) << "argument '" << name
                              << "': expected a contiguous tensor, got strides " << t.strides()
                              << " for shape " << t.shape();
  }
}

/*!
 * \brief Require two tensors to have the same shape.
 *
 * \code{.cpp}
 * ffi_cookbook::CheckSameShape(x, "x", y, "y");
 * \endcode
 * \param a The first tensor.
 * \param a_name Its argument name.
 * \param b The second tensor.
 * \param b_name Its argument name.
 * \throws ValueError when the shapes differ.
 */
inline void CheckSameShape(const tvm::ffi::TensorView& a, const char* a_name,
                           const tvm::ffi::TensorView& b, const char* b_name) {
  bool same = a.ndim() == b.ndim();
  for (int32_t i = 0; same && i < a.ndim(); ++i) same = a.size(i) == b.size(i);
  if (!same) {
    TVM_FFI_THROW(ValueError) << "argument '" << b_name << "': expected shape " << a.shape()
                              << " (the shape of '" << a_name << "'), got " << b.shape();
  }
}

/*!
 * \brief Require two tensors to have the same dtype.
 * \param a The first tensor.
 * \param a_name Its argument name.
 * \param b The second tensor.
 * \param b_name Its argument name.
 * \throws TypeError when the dtypes differ.
 */
inline void CheckSameDtype(const tvm::ffi::TensorView& a, const char* a_name,
                           const tvm::ffi::TensorView& b, const char* b_name) {
  if (a.dtype() != b.dtype()) {
    TVM_FFI_THROW(TypeError) << "argument '" << b_name << "': expected dtype " << a.dtype()
                             << " (the dtype of '" << a_name << "'), got " << b.dtype();
  }
}

/*!
 * \brief Require two tensors to be on the same device (type and index).
 * \param a The first tensor.
 * \param a_name Its argument name.
 * \param b The second tensor.
 * \param b_name Its argument name.
 * \throws ValueError when the devices differ.
 */
inline void CheckSameDevice(const tvm::ffi::TensorView& a, const char* a_name,
                            const tvm::ffi::TensorView& b, const char* b_name) {
  DLDevice da = a.device(), db = b.device();
  if (da.device_type != db.device_type || da.device_id != db.device_id) {
    TVM_FFI_THROW(ValueError) << "argument '" << b_name << "': expected a tensor on "
                              << DeviceName(da) << " (the device of '" << a_name
                              << "'), got one on " << DeviceName(db);
  }
}

/*!
 * \brief All checks of an elementwise kernel that reads `x` and writes `y`.
 *
 * `x` must live on a device of type `device`; `y` must match `x` in device,
 * dtype and shape; both must be contiguous. The checks run in that order, so
 * the first problem found is the one reported.
 *
 * \code{.cpp}
 * ffi_cookbook::CheckElementwise(x, "x", y, "y", kDLCPU);
 * \endcode
 * \param x The input tensor.
 * \param x_name Its argument name.
 * \param y The output tensor.
 * \param y_name Its argument name.
 * \param device The device type the kernel handles.
 * \throws ValueError for a wrong device, shape or layout; TypeError for a dtype mismatch.
 */
inline void CheckElementwise(const tvm::ffi::TensorView& x, const char* x_name,
                             const tvm::ffi::TensorView& y, const char* y_name,
                             DLDeviceType device) {
  CheckDevice(x, x_name, device);
  CheckSameDevice(x, x_name, y, y_name);
  CheckSameDtype(x, x_name, y, y_name);
  CheckSameShape(x, x_name, y, y_name);
  CheckContiguous(x, x_name);
  CheckContiguous(y, y_name);
}

/*! \} */

}  // namespace ffi_cookbook

#endif  // FFI_COOKBOOK_CHECK_H_
