/*!
 * \file ffi_cookbook/alloc_nvshmem.h
 * \brief An NVSHMEM symmetric-heap allocator for tvm::ffi::Tensor::FromNDAlloc.
 *
 * `nvshmem_malloc` is collective: every PE must allocate the same sizes in the
 * same order, after `nvshmem_init`. Build with `-rdc=true` and link
 * `nvshmem_device`, `nvshmem_host` and `cudart`.
 */
#ifndef FFI_COOKBOOK_ALLOC_NVSHMEM_H_
#define FFI_COOKBOOK_ALLOC_NVSHMEM_H_

#include <ffi_cookbook/alloc_cpu.h>
#include <nvshmem.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>

namespace ffi_cookbook {

/*!
 * \defgroup alloc_nvshmem NVSHMEM allocator for FromNDAlloc
 * \{
 */

/*!
 * \brief Allocates tensors on the NVSHMEM symmetric heap.
 *
 * \code{.cu}
 * tvm::ffi::Tensor t = tvm::ffi::Tensor::FromNDAlloc(
 *     ffi_cookbook::NVSHMEMAllocator(), {1024}, DLDataType{kDLFloat, 32, 1},
 *     DLDevice{kDLCUDA, 0});
 * \endcode
 */
struct NVSHMEMAllocator {
  /*! \brief nvshmem_malloc `CheckedDataSize(*t)` bytes (collective across PEs). */
  void AllocData(DLTensor* t) {
    size_t bytes = CheckedDataSize(*t);
    t->data = nvshmem_malloc(bytes);
    if (t->data == nullptr && bytes != 0) {
      TVM_FFI_THROW(RuntimeError) << "NVSHMEMAllocator: nvshmem_malloc of " << bytes
                                  << " bytes failed (is NVSHMEM initialised?)";
    }
  }

  /*! \brief nvshmem_free the storage (collective across PEs). */
  void FreeData(DLTensor* t) { nvshmem_free(t->data); }
};

/*! \} */

}  // namespace ffi_cookbook

#endif  // FFI_COOKBOOK_ALLOC_NVSHMEM_H_
