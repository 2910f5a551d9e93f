// Three ways for a kernel to create a tensor: the framework's allocator
// (FromEnvAlloc), an allocator of your own (FromNDAlloc), and memory that
// arrives as a DLPack capsule (FromDLPack; see dlpack_demo.cc).
#include <ffi_cookbook/env_alloc.h>
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/ffi/function.h>

#include <cstdint>
#include <cstdlib>

namespace {

namespace ffi = tvm::ffi;

// [empty_env_entry.begin]
// Asks whatever allocator the caller installed for this call. No checks: a
// caller without one gets tvm_ffi's own error.
ffi::Tensor EmptyEnv(ffi::TensorView like) {
  return ffi::Tensor::FromEnvAlloc(TVMFFIEnvTensorAlloc, like.shape(), like.dtype(),
                                   like.device());
}
// [empty_env_entry.end]

// [empty_like_entry.begin]
// The same through ffi_cookbook/env_alloc.h, which says what to do instead.
ffi::Tensor EmptyLike(ffi::TensorView like) { return ffi_cookbook::EmptyLike(like); }
// [empty_like_entry.end]

// [malloc_allocator.begin]
// What FromNDAlloc asks of an allocator: AllocData sets t->data for t's shape
// and dtype; FreeData releases it when the tensor's last owner lets go.
struct MallocAllocator {
  void AllocData(DLTensor* t) {
    t->data = std::malloc(ffi::GetDataSize(*t) + 1);  // + 1: never malloc(0)
    if (t->data == nullptr) TVM_FFI_THROW(RuntimeError) << "out of host memory";
  }
  void FreeData(DLTensor* t) { std::free(t->data); }
};
// [malloc_allocator.end]

// [arange_nd_entry.begin]
// A float32 tensor 0, 1, ..., n-1 in memory this library allocates and frees.
ffi::Tensor ArangeND(int64_t n) {
  // The cap keeps n * sizeof(float) far from overflowing size_t (2**62 floats
  // would wrap to a 0-byte allocation and the loop below would write past it).
  constexpr int64_t kMaxN = int64_t{1} << 30;
  TVM_FFI_CHECK(n >= 0, ValueError) << "argument 'n': expected n >= 0, got " << n;
  TVM_FFI_CHECK(n <= kMaxN, ValueError)
      << "argument 'n': expected n <= " << kMaxN << " (2**30), got " << n;
  ffi::Tensor t = ffi::Tensor::FromNDAlloc(MallocAllocator(), ffi::Shape({n}),
                                           DLDataType{kDLFloat, 32, 1}, DLDevice{kDLCPU, 0});
  float* data = static_cast<float*>(t.data_ptr());
  for (int64_t i = 0; i < n; ++i) data[i] = static_cast<float>(i);
  return t;
}
// [arange_nd_entry.end]

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(guide_empty_env, EmptyEnv);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(guide_empty_like, EmptyLike);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(guide_arange_nd, ArangeND);
