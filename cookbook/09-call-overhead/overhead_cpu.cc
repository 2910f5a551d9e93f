// Functions whose cost is the call itself: no-ops taking 1, 3 and 8 tensors,
// and a small kernel (out = a + b, float32), exported through tvm_ffi.
#include <ffi_cookbook/check.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/function.h>

namespace {

namespace ffi = tvm::ffi;
using TV = ffi::TensorView;

// [tvm_ffi_noops.begin]
void Noop1(TV) {}
void Noop3(TV, TV, TV) {}
void Noop8(TV, TV, TV, TV, TV, TV, TV, TV) {}
// [tvm_ffi_noops.end]

// [tvm_ffi_add.begin]
void AddCPU(TV a, TV b, TV out) {
  ffi_cookbook::CheckElementwise(a, "a", b, "b", kDLCPU);
  ffi_cookbook::CheckElementwise(a, "a", out, "out", kDLCPU);
  ffi_cookbook::CheckDtype(a, "a", DLDataType{kDLFloat, 32, 1});
  const float* x = static_cast<const float*>(a.data_ptr());
  const float* y = static_cast<const float*>(b.data_ptr());
  float* z = static_cast<float*>(out.data_ptr());
  const int64_t n = a.numel();  // read once, so the loop can vectorize
  for (int64_t i = 0; i < n; ++i) z[i] = x[i] + y[i];
}
// [tvm_ffi_add.end]

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(overhead_noop1_cpu, Noop1);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(overhead_noop3_cpu, Noop3);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(overhead_noop8_cpu, Noop8);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(overhead_add_cpu, AddCPU);
