/*!
 * \file ffi_cookbook/env_alloc.h
 * \brief Allocate output tensors through the calling framework's allocator.
 *
 * `Tensor::FromEnvAlloc(TVMFFIEnvTensorAlloc, ...)` asks the allocator that
 * the caller installed for this call (PyTorch's caching allocator when a torch
 * tensor is among the arguments). With no framework tensor among the
 * arguments there is no allocator and the call raises; EmptyLike checks first
 * and raises a ValueError that says what to do instead.
 */
#ifndef FFI_COOKBOOK_ENV_ALLOC_H_
#define FFI_COOKBOOK_ENV_ALLOC_H_

#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/c_env_api.h>

namespace ffi_cookbook {

/*!
 * \defgroup env_alloc Allocation through the framework
 * \{
 */

/*!
 * \brief True when the current call has a framework allocator installed.
 * \return Whether Tensor::FromEnvAlloc can succeed now.
 */
inline bool HasEnvAllocator() { return TVMFFIEnvGetDLPackManagedTensorAllocator() != nullptr; }

/*!
 * \brief A new, uninitialised tensor from the framework allocator.
 *
 * \code{.cpp}
 * tvm::ffi::Tensor out = ffi_cookbook::Empty(x.shape(), x.dtype(), x.device());
 * \endcode
 * \param shape The shape of the result.
 * \param dtype The dtype of the result.
 * \param device The device of the result.
 * \return An owning tensor whose memory belongs to the framework.
 * \throws ValueError when no framework allocator is installed for this call.
 */
inline tvm::ffi::Tensor Empty(tvm::ffi::ShapeView shape, DLDataType dtype, DLDevice device) {
  if (!HasEnvAllocator()) {
    TVM_FFI_THROW(ValueError)
        << "cannot allocate the result: no framework allocator is installed for this call "
           "(pass at least one torch tensor, or pass a preallocated output)";
  }
  return tvm::ffi::Tensor::FromEnvAlloc(TVMFFIEnvTensorAlloc, shape, dtype, device);
}

/*!
 * \brief A new tensor with the shape, dtype and device of `like`.
 * \param like The tensor to mirror.
 * \return An owning tensor whose memory belongs to the framework.
 * \throws ValueError when no framework allocator is installed for this call.
 */
inline tvm::ffi::Tensor EmptyLike(const tvm::ffi::TensorView& like) {
  return Empty(like.shape(), like.dtype(), like.device());
}

/*! \} */

}  // namespace ffi_cookbook

#endif  // FFI_COOKBOOK_ENV_ALLOC_H_
