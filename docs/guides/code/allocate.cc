// Three ways for a kernel to create a tensor: the framework's allocator
// (FromEnvAlloc), an allocator of your own (FromNDAlloc), and memory that
// arrives as a DLPack capsule (FromDLPack; see dlpack_demo.cc).
#include <ffi_cookbook/alloc_cpu.h>
#include <ffi_cookbook/env_alloc.h>
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/ffi/function.h>

#include <cstdint>

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

// [arange_nd_entry.begin]
// A float32 tensor 0, 1, ..., n-1 in memory this library allocates and frees.
ffi::Tensor ArangeND(int64_t n) {
  if (n < 0) TVM_FFI_THROW(ValueError) << "argument 'n': expected n >= 0, got " << n;
  ffi::Tensor t = ffi::Tensor::FromNDAlloc(ffi_cookbook::CPUAllocator(), ffi::Shape({n}),
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
