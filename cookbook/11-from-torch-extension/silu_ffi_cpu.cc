// SiLU, y = x * sigmoid(x), on the tvm_ffi stable ABI: the code after migration.
// Same regions as silu_torch_ext.cpp so the notebook can show the two side by side.
#include <ffi_cookbook/check.h>
#include <ffi_cookbook/dtype.h>
#include <ffi_cookbook/env_alloc.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>

#include <cmath>
#include <sstream>
#include <string>

namespace {

namespace ffi = tvm::ffi;

void SiluLoop(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] / (1.0f + std::exp(-x[i]));
}

// [silu_entry.begin]
ffi::Tensor SiluFfiCPU(ffi::TensorView x) {
  // The check.h helpers raise ValueError / TypeError naming the argument.
  ffi_cookbook::CheckDevice(x, "x", kDLCPU);
  ffi_cookbook::CheckDtype(x, "x", ffi_cookbook::kFloat32);
  ffi_cookbook::CheckContiguous(x, "x");
  ffi::Tensor y = ffi_cookbook::EmptyLike(x);  // the caller's allocator (torch here)
  SiluLoop(static_cast<const float*>(x.data_ptr()), static_cast<float*>(y.data_ptr()),
           x.numel());
  return y;
}
// [silu_entry.end]

// [silu_describe.begin]
std::string DescribeFfiCPU(ffi::TensorView x) {
  std::ostringstream os;
  os << "ndim=" << x.ndim() << " numel=" << x.numel() << " contiguous=" << x.IsContiguous();
  for (int32_t i = 0; i < x.ndim(); ++i) os << " size" << i << "=" << x.size(i);
  for (int32_t i = 0; i < x.ndim(); ++i) os << " stride" << i << "=" << x.stride(i);
  return os.str();
}
// [silu_describe.end]

}  // namespace

// [silu_binding.begin]
TVM_FFI_DLL_EXPORT_TYPED_FUNC(silu_ffi_cpu, SiluFfiCPU);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(silu_ffi_describe_cpu, DescribeFfiCPU);
// [silu_binding.end]
