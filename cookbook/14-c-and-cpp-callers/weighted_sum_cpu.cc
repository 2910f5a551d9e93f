// weighted_sum on the CPU: w * sum(x) for a contiguous float32 tensor. The kernel that the
// C and C++ programs of this recipe call without Python.
#include <ffi_cookbook/check.h>
#include <ffi_cookbook/dtype.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/function.h>

namespace {

namespace ffi = tvm::ffi;

// [weighted_sum_entry.begin]
double WeightedSumCPU(ffi::TensorView x, double w) {
  ffi_cookbook::CheckDevice(x, "x", kDLCPU);
  ffi_cookbook::CheckDtype(x, "x", ffi_cookbook::kFloat32);
  ffi_cookbook::CheckContiguous(x, "x");
  const float* data = static_cast<const float*>(x.data_ptr());
  double total = 0.0;
  for (int64_t i = 0; i < x.numel(); ++i) total += data[i];
  return w * total;
}
// [weighted_sum_entry.end]

}  // namespace

// [weighted_sum_export.begin]
// Exports the C symbol __tvm_ffi_weighted_sum_cpu with the TVMFFISafeCallType signature.
TVM_FFI_DLL_EXPORT_TYPED_FUNC(weighted_sum_cpu, WeightedSumCPU);
// [weighted_sum_export.end]
