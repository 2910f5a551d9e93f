// Allocating tensors inside a kernel, and handing tensors across DLPack.
#include <ffi_cookbook/alloc_cpu.h>
#include <ffi_cookbook/check.h>
#include <ffi_cookbook/dtype.h>
#include <ffi_cookbook/env_alloc.h>
#include <tvm/ffi/container/map.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>

#include <cstdint>

namespace {

namespace ffi = tvm::ffi;

// y = 2 * x for a contiguous float32 CPU tensor; y has x's shape.
void TwiceInto(ffi::TensorView x, ffi::TensorView y) {
  const float* in = static_cast<const float*>(x.data_ptr());
  float* out = static_cast<float*>(y.data_ptr());
  for (int64_t i = 0; i < x.numel(); ++i) out[i] = 2.0f * in[i];
}

void CheckInput(ffi::TensorView x) {
  ffi_cookbook::CheckDevice(x, "x", kDLCPU);
  ffi_cookbook::CheckDtype(x, "x", ffi_cookbook::kFloat32);
  ffi_cookbook::CheckContiguous(x, "x");
}

// [alloc_env_cpu.begin]
// The result comes from the caller's framework (torch's allocator for torch
// inputs); EmptyLike raises a ValueError when the call has no such allocator.
ffi::Tensor TwiceEnvCPU(ffi::TensorView x) {
  CheckInput(x);
  ffi::Tensor y = ffi_cookbook::EmptyLike(x);
  TwiceInto(x, y);
  return y;
}
// [alloc_env_cpu.end]

// [alloc_raw_env_cpu.begin]
// The same without the helper: FromEnvAlloc fails inside tvm_ffi when no
// framework allocator is installed for this call.
ffi::Tensor TwiceRawEnvCPU(ffi::TensorView x) {
  CheckInput(x);
  ffi::Tensor y =
      ffi::Tensor::FromEnvAlloc(TVMFFIEnvTensorAlloc, x.shape(), x.dtype(), x.device());
  TwiceInto(x, y);
  return y;
}
// [alloc_raw_env_cpu.end]

// [alloc_nd_cpu.begin]
// The library allocates itself. The tensor keeps a copy of CPUAllocator and
// calls its FreeData, code in this library, when the last owner lets go.
ffi::Tensor TwiceNDCPU(ffi::TensorView x) {
  CheckInput(x);
  ffi::Tensor y = ffi::Tensor::FromNDAlloc(ffi_cookbook::CPUAllocator(), x.shape(), x.dtype(),
                                           x.device());
  TwiceInto(x, y);
  return y;
}
// [alloc_nd_cpu.end]

// [dlpack_counting_deleter.begin]
// Wraps a capsule made by ToDLPack[Versioned] so that its deleter is counted:
// the wrapper's deleter bumps *calls, then runs the original deleter.
template <typename Managed>
struct CountedCapsule {
  Managed outer;   // handed to FromDLPack[Versioned]
  Managed* inner;  // made by ToDLPack[Versioned]
  int64_t* calls;

  static Managed* Wrap(Managed* inner, int64_t* calls) {
    auto* self = new CountedCapsule{*inner, inner, calls};
    self->outer.manager_ctx = self;
    self->outer.deleter = &Delete;
    return &self->outer;
  }
  static void Delete(Managed* outer) {
    auto* self = static_cast<CountedCapsule*>(outer->manager_ctx);
    ++*self->calls;
    self->inner->deleter(self->inner);
    delete self;
  }
};
// [dlpack_counting_deleter.end]

// [dlpack_round_trip_cpu.begin]
// Tensor -> DLPack capsule -> Tensor, and what happened on the way.
ffi::Map<ffi::String, int64_t> DLPackRoundTripCPU(ffi::Tensor x, bool versioned) {
  ffi_cookbook::CheckDefined(x, "x");  // an ffi::Tensor parameter also accepts None
  int64_t calls = 0;
  ffi::Map<ffi::String, int64_t> seen;
  {
    ffi::Tensor back =
        versioned ? ffi::Tensor::FromDLPackVersioned(
                        CountedCapsule<DLManagedTensorVersioned>::Wrap(x.ToDLPackVersioned(), &calls))
                  : ffi::Tensor::FromDLPack(
                        CountedCapsule<DLManagedTensor>::Wrap(x.ToDLPack(), &calls));
    seen.Set("same_data", back.data_ptr() == x.data_ptr());
    seen.Set("x_use_count_while_back_lives", x.use_count());
    seen.Set("deleter_calls_while_back_lives", calls);
  }  // `back` dies here: its capsule's deleter runs
  seen.Set("deleter_calls_after", calls);
  seen.Set("x_use_count_after", x.use_count());
  return seen;
}
// [dlpack_round_trip_cpu.end]

}  // namespace

// [allocation_exports.begin]
TVM_FFI_DLL_EXPORT_TYPED_FUNC(alloc_twice_env_cpu, TwiceEnvCPU);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(alloc_twice_raw_env_cpu, TwiceRawEnvCPU);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(alloc_twice_nd_cpu, TwiceNDCPU);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(alloc_dlpack_round_trip_cpu, DLPackRoundTripCPU);
// [allocation_exports.end]
