/*!
 * \file ffi_cookbook/alloc_cuda.h
 * \brief A `cudaMalloc` allocator for tvm::ffi::Tensor::FromNDAlloc.
 *
 * Needs the CUDA runtime (`cuda_runtime.h`, link `cudart`). The same caveat
 * as for CPUAllocator applies: the tensor's deleter lives in your library.
 */
#ifndef FFI_COOKBOOK_ALLOC_CUDA_H_
#define FFI_COOKBOOK_ALLOC_CUDA_H_

#include <cuda_runtime.h>
#include <ffi_cookbook/alloc_cpu.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/extra/cuda/base.h>
#include <tvm/ffi/extra/cuda/device_guard.h>

namespace ffi_cookbook {

/*!
 * \defgroup alloc_cuda CUDA allocator for FromNDAlloc
 * \{
 */

/*!
 * \brief Allocates device memory with `cudaMalloc` on the tensor's device.
 *
 * \code{.cu}
 * tvm::ffi::Tensor t = tvm::ffi::Tensor::FromNDAlloc(
 *     ffi_cookbook::CUDAAllocator(), {1024}, DLDataType{kDLFloat, 32, 1}, DLDevice{kDLCUDA, 0});
 * \endcode
 */
struct CUDAAllocator {
  /*! \brief cudaMalloc `CheckedDataSize(*t)` bytes on `t->device`. */
  void AllocData(DLTensor* t) {
    tvm::ffi::CUDADeviceGuard guard(t->device.device_id);
    TVM_FFI_CHECK_CUDA_ERROR(cudaMalloc(&t->data, CheckedDataSize(*t)));
  }

  /*! \brief cudaFree the storage; errors are not thrown from a deleter. */
  void FreeData(DLTensor* t) {
    tvm::ffi::CUDADeviceGuard guard(t->device.device_id);
    cudaFree(t->data);
  }
};

/*! \} */

}  // namespace ffi_cookbook

#endif  // FFI_COOKBOOK_ALLOC_CUDA_H_
