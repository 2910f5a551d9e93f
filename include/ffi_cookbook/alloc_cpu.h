/*!
 * \file ffi_cookbook/alloc_cpu.h
 * \brief A host-memory allocator for tvm::ffi::Tensor::FromNDAlloc.
 *
 * FromNDAlloc takes any object with `AllocData(DLTensor*)` and
 * `FreeData(DLTensor*)`. The tensor keeps a copy of the allocator and calls
 * FreeData when its last reference goes away, so the code of FreeData must
 * still be loaded then: prefer FromEnvAlloc (env_alloc.h) in kernel libraries
 * and load modules with `keep_module_alive=True` (the default) otherwise.
 */
#ifndef FFI_COOKBOOK_ALLOC_CPU_H_
#define FFI_COOKBOOK_ALLOC_CPU_H_

#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>

#include <cstdint>
#include <cstdlib>

namespace ffi_cookbook {

/*!
 * \defgroup alloc_cpu CPU allocator for FromNDAlloc
 * \{
 */

/*!
 * \brief Bytes a tensor of `t`'s shape and dtype needs, refusing what cannot be allocated.
 *
 * `GetDataSize` multiplies without checking: a shape of 2^62 float32 wraps to 0
 * bytes, and a kernel then writes far past a tiny block. This throws instead.
 *
 * \code{.cpp}
 * int64_t shape[2] = {2, 3};
 * DLTensor t{nullptr, DLDevice{kDLCPU, 0}, 2, DLDataType{kDLFloat, 32, 1}, shape, nullptr, 0};
 * size_t bytes = ffi_cookbook::CheckedDataSize(t);  // 24; ValueError for {-1} or {1 << 62}
 * \endcode
 *
 * \throws ValueError when a dimension is negative or the size overflows.
 */
inline size_t CheckedDataSize(const DLTensor& t) {
  const uint64_t limit = static_cast<uint64_t>(PTRDIFF_MAX);
  uint64_t elements = 1;
  for (int i = 0; i < t.ndim; ++i) {
    if (t.shape[i] < 0) {
      TVM_FFI_THROW(ValueError) << "cannot allocate a tensor with a negative dimension ("
                                << t.shape[i] << ")";
    }
    uint64_t dim = static_cast<uint64_t>(t.shape[i]);
    if (dim != 0 && elements > limit / dim) {
      TVM_FFI_THROW(ValueError) << "cannot allocate a tensor of more than " << limit << " bytes";
    }
    elements *= dim;
  }
  uint64_t bits_per_element = static_cast<uint64_t>(t.dtype.bits) * t.dtype.lanes;
  if (elements != 0 && (bits_per_element == 0 || elements > (limit * 8) / bits_per_element)) {
    TVM_FFI_THROW(ValueError) << "cannot allocate a tensor of " << elements
                              << " elements of this dtype";
  }
  return static_cast<size_t>((elements * bits_per_element + 7) / 8);
}

/*!
 * \brief Allocates tensor storage with 64-byte aligned `std::aligned_alloc`.
 *
 * \code{.cpp}
 * tvm::ffi::Tensor t = tvm::ffi::Tensor::FromNDAlloc(
 *     ffi_cookbook::CPUAllocator(), {2, 3}, DLDataType{kDLFloat, 32, 1}, DLDevice{kDLCPU, 0});
 * \endcode
 */
struct CPUAllocator {
  /*! \brief Alignment of every allocation, in bytes. */
  static constexpr size_t kAlignment = 64;

  /*! \brief Fill `t->data` with fresh storage of `GetDataSize(*t)` bytes. */
  void AllocData(DLTensor* t) {
    size_t bytes = CheckedDataSize(*t);
    size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
    // aligned_alloc(…, 0) may return nullptr; always ask for at least one block.
    t->data = std::aligned_alloc(kAlignment, rounded == 0 ? kAlignment : rounded);
    if (t->data == nullptr) {
      TVM_FFI_THROW(RuntimeError) << "CPUAllocator: out of memory allocating " << bytes
                                  << " bytes";
    }
  }

  /*! \brief Release the storage made by AllocData. */
  void FreeData(DLTensor* t) { std::free(t->data); }
};

/*! \} */

}  // namespace ffi_cookbook

#endif  // FFI_COOKBOOK_ALLOC_CPU_H_
