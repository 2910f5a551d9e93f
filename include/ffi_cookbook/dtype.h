/*!
 * \file ffi_cookbook/dtype.h
 * \brief Dtype dispatch for float32, float16 and bfloat16.
 *
 * One kernel template serves three dtypes: the entry point calls
 * DispatchFloat with the runtime dtype and a generic lambda, and the lambda
 * receives a tag whose `type` is `float`, `Float16` or `BFloat16`. The two
 * 16-bit types are plain storage structs with conversions to and from float
 * that compile for host and device, so the same code builds with g++ and nvcc.
 */
#ifndef FFI_COOKBOOK_DTYPE_H_
#define FFI_COOKBOOK_DTYPE_H_

#include <ffi_cookbook/check.h>
#include <tvm/ffi/dtype.h>
#include <tvm/ffi/error.h>

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define FFI_COOKBOOK_HOST_DEVICE __host__ __device__
#else
#define FFI_COOKBOOK_HOST_DEVICE
#endif

namespace ffi_cookbook {

/*!
 * \defgroup dtype Dtype dispatch
 * \{
 */

/*! \brief IEEE 754 binary16 value kept as its 16 bits. */
struct Float16 {
  uint16_t bits; /*!< the raw bit pattern */
};

/*! \brief bfloat16 value (the top half of a float32) kept as its 16 bits. */
struct BFloat16 {
  uint16_t bits; /*!< the raw bit pattern */
};

/*! \brief Reinterpret a float as its bits (host and device). */
FFI_COOKBOOK_HOST_DEVICE inline uint32_t FloatBits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof(u));
  return u;
}

/*! \brief Reinterpret bits as a float (host and device). */
FFI_COOKBOOK_HOST_DEVICE inline float BitsToFloat(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof(f));
  return f;
}

/*! \brief Widen a value to float (identity for float). */
FFI_COOKBOOK_HOST_DEVICE inline float ToFloat(float v) { return v; }

/*! \brief Widen bfloat16 to float: its bits are the top half of a float32. */
FFI_COOKBOOK_HOST_DEVICE inline float ToFloat(BFloat16 v) {
  return BitsToFloat(static_cast<uint32_t>(v.bits) << 16);
}

/*! \brief Widen binary16 to float, subnormals, infinities and NaN included. */
FFI_COOKBOOK_HOST_DEVICE inline float ToFloat(Float16 v) {
  uint32_t sign = static_cast<uint32_t>(v.bits & 0x8000u) << 16;
  uint32_t exp = (v.bits >> 10) & 0x1fu;
  uint32_t man = v.bits & 0x3ffu;
  if (exp == 0x1fu) return BitsToFloat(sign | 0x7f800000u | (man << 13));  // inf / nan
  if (exp == 0) {  // zero or subnormal: value is man * 2^-24
    float mag = static_cast<float>(man) * 5.9604644775390625e-08f;
    return sign ? -mag : mag;
  }
  return BitsToFloat(sign | ((exp + 112u) << 23) | (man << 13));
}

/*!
 * \brief Narrow a float to T with round-to-nearest-even.
 * \tparam T float, Float16 or BFloat16.
 */
template <typename T>
FFI_COOKBOOK_HOST_DEVICE inline T FromFloat(float f);

/*! \brief float to float: the identity. */
template <>
FFI_COOKBOOK_HOST_DEVICE inline float FromFloat<float>(float f) {
  return f;
}

/*! \brief float to bfloat16, round half to even; NaN stays NaN. */
template <>
FFI_COOKBOOK_HOST_DEVICE inline BFloat16 FromFloat<BFloat16>(float f) {
  uint32_t u = FloatBits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return BFloat16{static_cast<uint16_t>((u >> 16) | 0x40u)};
  u += 0x7fffu + ((u >> 16) & 1u);  // round half to even
  return BFloat16{static_cast<uint16_t>(u >> 16)};
}

/*! \brief float to binary16, round half to even; overflow gives infinity. */
template <>
FFI_COOKBOOK_HOST_DEVICE inline Float16 FromFloat<Float16>(float f) {
  uint32_t u = FloatBits(f);
  uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  uint32_t abs = u & 0x7fffffffu;
  if (abs > 0x7f800000u) return Float16{static_cast<uint16_t>(sign | 0x7e00u)};  // nan
  if (abs >= 0x477ff000u) return Float16{static_cast<uint16_t>(sign | 0x7c00u)};  // overflow
  if (abs < 0x38800000u) {  // result is subnormal or zero: round abs * 2^24 to an integer
    float mag = BitsToFloat(abs) * 16777216.0f;
    uint32_t q = static_cast<uint32_t>(mag);
    float rem = mag - static_cast<float>(q);
    if (rem > 0.5f || (rem == 0.5f && (q & 1u))) ++q;
    return Float16{static_cast<uint16_t>(sign | q)};
  }
  uint32_t rounded = abs + 0xfffu + ((abs >> 13) & 1u);  // round half to even
  return Float16{static_cast<uint16_t>(sign | ((rounded - 0x38000000u) >> 13))};
}

/*! \brief Carries a type through a generic lambda; read it back as `decltype(tag)` member `type`. */
template <typename T>
struct TypeTag {
  using type = T; /*!< the dispatched element type */
};

/*! \brief float32 as a DLDataType. */
constexpr DLDataType kFloat32{kDLFloat, 32, 1};
/*! \brief float16 as a DLDataType. */
constexpr DLDataType kFloat16{kDLFloat, 16, 1};
/*! \brief bfloat16 as a DLDataType. */
constexpr DLDataType kBFloat16{kDLBfloat, 16, 1};

/*!
 * \brief Call `f(TypeTag<T>{})` with T matching a runtime dtype.
 *
 * \code{.cpp}
 * ffi_cookbook::DispatchFloat(x.dtype(), "x", [&](auto tag) {
 *   using T = typename decltype(tag)::type;  // float, Float16 or BFloat16
 *   const T* in = static_cast<const T*>(x.data_ptr());
 *   T* out = static_cast<T*>(y.data_ptr());
 *   for (int64_t i = 0; i < x.numel(); ++i) {
 *     out[i] = ffi_cookbook::FromFloat<T>(2.0f * ffi_cookbook::ToFloat(in[i]));
 *   }
 * });
 * \endcode
 * \param dtype The dtype of the tensor to dispatch on.
 * \param name The argument name shown in the error.
 * \param f A callable taking a TypeTag.
 * \throws TypeError for any other dtype.
 */
template <typename F>
inline void DispatchFloat(DLDataType dtype, const char* name, F&& f) {
  if (dtype == kFloat32) {
    f(TypeTag<float>{});
  } else if (dtype == kFloat16) {
    f(TypeTag<Float16>{});
  } else if (dtype == kBFloat16) {
    f(TypeTag<BFloat16>{});
  } else {
    TVM_FFI_THROW(TypeError) << "argument '" << name
                             << "': expected dtype float32, float16 or bfloat16, got "
                             << DtypeName(dtype);
  }
}

/*! \} */

}  // namespace ffi_cookbook

#endif  // FFI_COOKBOOK_DTYPE_H_
