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
 *
 * Never throws for any value: a number no DLPack version names prints as
 * "device_type=<n>".
 * \param type The device type.
 * \return A short lower-case name; "device_type=<n>" for types without one.
 */
inline std::string DeviceTypeName(DLDeviceType type) {
  switch (static_cast<int32_t>(type)) {
    case kDLCPU: return "cpu";
    case kDLCUDA: return "cuda";
    case kDLCUDAHost: return "cuda_host";
    case kDLOpenCL: return "opencl";
    case kDLVulkan: return "vulkan";
    case kDLMetal: return "metal";
    case kDLVPI: return "vpi";
    case kDLROCM: return "rocm";
    case kDLROCMHost: return "rocm_host";
    case kDLExtDev: return "ext_dev";
    case kDLCUDAManaged: return "cuda_managed";
    case kDLOneAPI: return "oneapi";
    case kDLWebGPU: return "webgpu";
    case kDLHexagon: return "hexagon";
    case kDLMAIA: return "maia";
    case kDLTrn: return "trn";
    default: return "device_type=" + std::to_string(static_cast<int32_t>(type));
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
 * \brief Name of a dtype as numpy and torch spell it: "float32", "bfloat16",
 * "complex64", "bool", "float8_e4m3fn", "float32x4" (4 lanes).
 *
 * Error messages use this instead of tvm_ffi's printer, which throws for some
 * dtypes (complex, codes it does not know); a throw while an error message is
 * being written ends the process. This one never throws for any value:
 * a code DLPack does not name prints as "dtype(code=<c>, bits=<b>, lanes=<l>)".
 *
 * \code{.cpp}
 * std::string name = ffi_cookbook::DtypeName(DLDataType{kDLComplex, 64, 1});  // "complex64"
 * \endcode
 * \param dtype The dtype.
 * \return Its name.
 */
inline std::string DtypeName(DLDataType dtype) {
  // Codes 7..17 (float8/6/4) carry their width in the name.
  static const char* const kNarrowFloats[] = {
      "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz",
      "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "float6_e2m3fn", "float6_e3m2fn",
      "float4_e2m1fn"};
  static const int kNarrowBits[] = {8, 8, 8, 8, 8, 8, 8, 8, 6, 6, 4};
  const int code = dtype.code, bits = dtype.bits;
  std::string name;
  switch (code) {
    case kDLInt: name = "int" + std::to_string(bits); break;
    case kDLUInt: name = "uint" + std::to_string(bits); break;
    case kDLFloat: name = "float" + std::to_string(bits); break;
    case kDLBfloat: name = "bfloat" + std::to_string(bits); break;
    case kDLComplex: name = "complex" + std::to_string(bits); break;
    case kDLBool: name = bits == 8 ? "bool" : "bool" + std::to_string(bits); break;
    case kDLOpaqueHandle: name = bits == 64 ? "handle" : "handle" + std::to_string(bits); break;
    default:
      if (code >= kDLFloat8_e3m4 && code <= kDLFloat4_e2m1fn) {
        name = kNarrowFloats[code - kDLFloat8_e3m4];
        if (bits != kNarrowBits[code - kDLFloat8_e3m4]) name += "(bits=" + std::to_string(bits) + ")";
      } else {
        return "dtype(code=" + std::to_string(code) + ", bits=" + std::to_string(bits) +
               ", lanes=" + std::to_string(dtype.lanes) + ")";
      }
  }
  // tvm_ffi stores scalable vectors (vscale x k lanes) as lanes = -k in 16 bits.
  const int lanes = dtype.lanes, signed_lanes = static_cast<int16_t>(dtype.lanes);
  if (signed_lanes < 0) return name + "xvscalex" + std::to_string(-signed_lanes);
  return lanes == 1 ? name : name + "x" + std::to_string(lanes);
}

/*!
 * \brief A list of dimensions as text, "[2, 3]"; "[]" for a 0-d tensor.
 *
 * Never throws for any value, including a missing array (printed as
 * "[none]") and a negative count.
 * \param dims The first dimension (a shape or strides array); may be null.
 * \param ndim How many there are.
 * \return The bracketed, comma-separated list.
 */
inline std::string DimsText(const int64_t* dims, int32_t ndim) {
  if (ndim < 0) return "[invalid ndim " + std::to_string(ndim) + "]";
  if (dims == nullptr && ndim > 0) return "[none]";
  std::string text = "[";
  for (int32_t i = 0; i < ndim; ++i) {
    if (i != 0) text += ", ";
    text += std::to_string(dims[i]);
  }
  return text + "]";
}

/*!
 * \brief The shape of a tensor as text, e.g. "[2, 3]" (see DimsText).
 * \param t The tensor.
 * \return Its shape, bracketed.
 */
inline std::string ShapeText(const tvm::ffi::TensorView& t) {
  return DimsText(t.shape().data(), t.ndim());
}

/*!
 * \brief The strides of a tensor as text, e.g. "[1, 3]" (see DimsText).
 *
 * "[none]" when the tensor carries no strides (DLPack's compact row-major).
 * \param t The tensor.
 * \return Its strides, bracketed.
 */
inline std::string StridesText(const tvm::ffi::TensorView& t) {
  try {
    return DimsText(t.strides().data(), t.ndim());
  } catch (const tvm::ffi::Error&) {  // strides() refuses a tensor without them
    return "[none]";
  }
}

/*!
 * \brief Require an owning `ffi::Tensor` argument to hold a tensor.
 *
 * tvm_ffi's object references are nullable: a parameter declared
 * `ffi::Tensor` also accepts Python's None, and using it then dereferences a
 * null pointer. (A `TensorView` parameter refuses None by itself.)
 *
 * \code{.cpp}
 * tvm::ffi::Tensor none;  // what an ffi::Tensor parameter holds when Python passes None
 * ffi_cookbook::CheckDefined(none, "out");  // TypeError: argument 'out': expected a tensor, got None
 * \endcode
 * \param t The tensor.
 * \param name The argument name shown in the error.
 * \throws TypeError when `t` holds nothing.
 */
inline void CheckDefined(const tvm::ffi::Tensor& t, const char* name) {
  if (!t.defined()) {
    TVM_FFI_THROW(TypeError) << "argument '" << name << "': expected a tensor, got None";
  }
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
    TVM_FFI_THROW(TypeError) << "argument '" << name << "': expected dtype "
                             << DtypeName(expected) << ", got " << DtypeName(t.dtype());
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
                              << "-d tensor, got " << t.ndim() << "-d with shape " << ShapeText(t);
  }
}

/*!
 * \brief Bytes a kernel's element pointer must be aligned to for this dtype:
 * the size of one scalar (half a complex number), a power of two, at most 8.
 * \param dtype The dtype.
 * \return 1, 2, 4 or 8.
 */
inline int64_t ElementAlignment(DLDataType dtype) {
  int64_t bytes = dtype.code == kDLComplex ? dtype.bits / 16 : dtype.bits / 8;
  int64_t align = 1;
  while (align * 2 <= bytes && align < 8) align *= 2;
  return align;
}

/*!
 * \brief Require the layout a kernel can index directly: contiguous (row-major,
 * no gaps), the first element at the data pointer, aligned for its dtype.
 *
 * DLPack allows a nonzero `byte_offset` and any data address; a kernel that
 * reads `data_ptr()` as `T*` handles neither, so both are rejected here rather
 * than read wrongly. Frameworks on the CPU and CUDA always pass offset 0;
 * a misaligned address comes, for example, from `numpy.frombuffer` with an
 * offset.
 * \param t The tensor.
 * \param name The argument name shown in the error.
 * \throws ValueError for strided views such as a transpose or a slice with
 * step, a nonzero byte_offset, or a misaligned data pointer.
 */
inline void CheckContiguous(const tvm::ffi::TensorView& t, const char* name) {
  if (!t.IsContiguous()) {
    TVM_FFI_THROW(ValueError) << "argument '" << name
                              << "': expected a contiguous tensor, got strides " << StridesText(t)
                              << " for shape " << ShapeText(t);
  }
  if (t.byte_offset() != 0) {
    TVM_FFI_THROW(ValueError) << "argument '" << name
                              << "': expected byte_offset 0 (data starting at the data pointer), got "
                              << t.byte_offset();
  }
  const int64_t align = ElementAlignment(t.dtype());
  const auto address = reinterpret_cast<uintptr_t>(t.data_ptr());
  if (address % static_cast<uintptr_t>(align) != 0 && t.numel() != 0) {
    TVM_FFI_THROW(ValueError) << "argument '" << name << "': expected data aligned to " << align
                              << " bytes for " << DtypeName(t.dtype()) << ", got an address "
                              << address % static_cast<uintptr_t>(align) << " byte(s) off";
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
    TVM_FFI_THROW(ValueError) << "argument '" << b_name << "': expected shape " << ShapeText(a)
                              << " (the shape of '" << a_name << "'), got " << ShapeText(b);
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
    TVM_FFI_THROW(TypeError) << "argument '" << b_name << "': expected dtype "
                             << DtypeName(a.dtype()) << " (the dtype of '" << a_name
                             << "'), got " << DtypeName(b.dtype());
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
