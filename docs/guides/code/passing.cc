// Tensors in and out: a preallocated output, a returned tensor, an optional
// argument, and an input handed straight back.
#include <ffi_cookbook/alloc_cpu.h>
#include <ffi_cookbook/env_alloc.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/dtype.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/optional.h>

#include <algorithm>
#include <cstdint>

namespace {

namespace ffi = tvm::ffi;

constexpr DLDataType kF32{kDLFloat, 32, 1};

// [f32_checks.begin]
// The checks of this file's kernels, with tvm_ffi's error macros: each raises
// the named Python exception with a message that names the argument.
void CheckF32Input(const ffi::TensorView& x, const char* name) {
  TVM_FFI_CHECK(x.device().device_type == kDLCPU, ValueError)
      << "argument '" << name << "': expected a CPU tensor";
  TVM_FFI_CHECK(x.dtype() == kF32, TypeError)
      << "argument '" << name << "': expected dtype float32";
  TVM_FFI_CHECK(x.IsContiguous(), ValueError)
      << "argument '" << name << "': expected a contiguous tensor";
  // The loops read whole floats from data_ptr(): DLPack allows the first one at
  // data + byte_offset, and numpy.frombuffer at an odd offset gives one that is not
  // at a multiple of 4 bytes.
  TVM_FFI_CHECK(x.byte_offset() == 0, ValueError)
      << "argument '" << name << "': expected byte_offset 0";
  TVM_FFI_CHECK(reinterpret_cast<uintptr_t>(x.data_ptr()) % alignof(float) == 0, ValueError)
      << "argument '" << name << "': expected data aligned to 4 bytes";
}

void CheckSameShape(const ffi::TensorView& a, const char* a_name, const ffi::TensorView& b,
                    const char* b_name) {
  ffi::ShapeView as = a.shape(), bs = b.shape();
  if (!std::equal(as.begin(), as.end(), bs.begin(), bs.end())) {
    TVM_FFI_THROW(ValueError) << "argument '" << b_name << "': expected the shape of '" << a_name
                              << "'";
  }
}
// [f32_checks.end]

void ScaleLoop(const ffi::TensorView& x, const ffi::TensorView& out, double alpha) {
  const float* src = static_cast<const float*>(x.data_ptr());
  float* dst = static_cast<float*>(out.data_ptr());
  for (int64_t i = 0; i < x.numel(); ++i) dst[i] = static_cast<float>(alpha) * src[i];
}

// [scale_into_entry.begin]
// The caller owns `out`; the kernel only writes into it and returns nothing.
void ScaleInto(ffi::TensorView x, ffi::TensorView out, double alpha) {
  CheckF32Input(x, "x");
  CheckF32Input(out, "out");
  CheckSameShape(x, "x", out, "out");
  ScaleLoop(x, out, alpha);
}
// [scale_into_entry.end]

// [scaled_entry.begin]
// The kernel allocates its result through the caller's framework.
ffi::Tensor Scaled(ffi::TensorView x, double alpha) {
  CheckF32Input(x, "x");
  ffi::Tensor out = ffi_cookbook::EmptyLike(x);
  ScaleLoop(x, out, alpha);
  return out;
}
// [scaled_entry.end]

// The same with memory from this library's own allocator: works for any caller.
ffi::Tensor ScaledND(ffi::TensorView x, double alpha) {
  CheckF32Input(x, "x");
  ffi::Tensor out = ffi::Tensor::FromNDAlloc(ffi_cookbook::CPUAllocator(), x.shape(), kF32,
                                             x.device());
  ScaleLoop(x, out, alpha);
  return out;
}

// [add_bias_entry.begin]
// out = x + bias, or out = x when the caller passes None for bias.
void AddBias(ffi::TensorView x, ffi::Optional<ffi::TensorView> bias, ffi::TensorView out) {
  CheckF32Input(x, "x");
  CheckF32Input(out, "out");
  CheckSameShape(x, "x", out, "out");
  const float* b = nullptr;
  if (bias.has_value()) {
    ffi::TensorView given = bias.value();
    CheckF32Input(given, "bias");
    CheckSameShape(x, "x", given, "bias");
    b = static_cast<const float*>(given.data_ptr());
  }
  const float* src = static_cast<const float*>(x.data_ptr());
  float* dst = static_cast<float*>(out.data_ptr());
  for (int64_t i = 0; i < x.numel(); ++i) dst[i] = src[i] + (b ? b[i] : 0.0f);
}
// [add_bias_entry.end]

// [identity_entry.begin]
// Takes an owning Tensor and returns it: no copy, one more reference.
ffi::Tensor Identity(ffi::Tensor x) {
  TVM_FFI_CHECK(x.defined(), TypeError) << "argument 'x': expected a tensor, got None";
  return x;
}
// [identity_entry.end]

// [copy_owned_entry.begin]
// Asks for owning Tensors although it keeps neither: callers that only hold a
// borrowed DLTensor (XLA, C programs) cannot call it.
void CopyOwned(ffi::Tensor x, ffi::Tensor out) {
  // An ffi::Tensor is an object reference: None arrives as an undefined one.
  TVM_FFI_CHECK(x.defined(), TypeError) << "argument 'x': expected a tensor, got None";
  TVM_FFI_CHECK(out.defined(), TypeError) << "argument 'out': expected a tensor, got None";
  CheckF32Input(x, "x");
  CheckF32Input(out, "out");
  CheckSameShape(x, "x", out, "out");
  ScaleLoop(x, out, 1.0);
}
// [copy_owned_entry.end]

}  // namespace

// [guide_exports.begin]
TVM_FFI_DLL_EXPORT_TYPED_FUNC(guide_scale_into, ScaleInto);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(guide_scaled, Scaled);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(guide_scaled_nd, ScaledND);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(guide_add_bias, AddBias);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(guide_identity, Identity);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(guide_copy_owned, CopyOwned);
// [guide_exports.end]
