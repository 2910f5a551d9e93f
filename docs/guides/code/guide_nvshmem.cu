// Tensors on the NVSHMEM symmetric heap, visible to every PE for one-sided
// puts and gets. Built into its own library (libguide_nvshmem.so).
#include <ffi_cookbook/alloc_nvshmem.h>
#include <cuda_runtime.h>
#include <nvshmem.h>
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/extra/cuda/base.h>
#include <tvm/ffi/function.h>

#include <cstdint>

namespace {

namespace ffi = tvm::ffi;

// [empty_nvshmem_entry.begin]
// Collective: every PE must call it with the same shape, after nvshmem_init.
ffi::Tensor EmptyNVSHMEM(ffi::Shape shape) {
  int device_id = 0;
  TVM_FFI_CHECK_CUDA_ERROR(cudaGetDevice(&device_id));
  return ffi::Tensor::FromNDAlloc(ffi_cookbook::NVSHMEMAllocator(), shape,
                                  DLDataType{kDLFloat, 32, 1}, DLDevice{kDLCUDA, device_id});
}
// [empty_nvshmem_entry.end]

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(guide_empty_nvshmem, EmptyNVSHMEM);
