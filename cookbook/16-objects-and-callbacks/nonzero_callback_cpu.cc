// A kernel whose output size depends on the data: the indices of the nonzero
// elements of x. It asks the caller for the output through a callback, so the
// memory comes from whichever framework the caller uses (numpy, torch, ...).
#include <ffi_cookbook/check.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/function.h>

#include <algorithm>
#include <optional>
#include <vector>

namespace {

namespace ffi = tvm::ffi;

// [nonzero_indices_cpu.begin]
ffi::Tensor NonzeroIndicesCPU(ffi::TensorView x, ffi::Function alloc) {
  // ffi::Function is nullable: Python's None arrives as an undefined function.
  TVM_FFI_CHECK(alloc.defined(), TypeError) << "argument 'alloc': expected a callable, got None";
  ffi_cookbook::CheckDevice(x, "x", kDLCPU);
  ffi_cookbook::CheckDtype(x, "x", DLDataType{kDLFloat, 32, 1});
  ffi_cookbook::CheckContiguous(x, "x");
  // 1. Read x completely first: the callback may run any code, even change x.
  const float* data = static_cast<const float*>(x.data_ptr());
  std::vector<int64_t> found;
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (data[i] != 0.0f) found.push_back(i);
  }
  // 2. Call back into the caller for an int64 tensor of that length. An exception
  //    raised there passes through this frame, which owns nothing to clean up by hand.
  const int64_t n = static_cast<int64_t>(found.size());
  ffi::Any result = alloc(n);
  std::optional<ffi::Tensor> maybe = result.as<ffi::Tensor>();
  if (!maybe.has_value() || !maybe->defined()) {
    TVM_FFI_THROW(TypeError) << "argument 'alloc(n)': expected a tensor, got "
                             << result.GetTypeKey();
  }
  ffi::Tensor out = *std::move(maybe);
  // 3. Trust nothing about what came back.
  ffi_cookbook::CheckDevice(out, "alloc(n)", kDLCPU);
  ffi_cookbook::CheckDtype(out, "alloc(n)", DLDataType{kDLInt, 64, 1});
  ffi_cookbook::CheckNdim(out, "alloc(n)", 1);
  if (out.size(0) != n) {
    TVM_FFI_THROW(ValueError) << "argument 'alloc(n)': expected " << n << " elements, got "
                              << out.size(0);
  }
  ffi_cookbook::CheckContiguous(out, "alloc(n)");
  std::copy(found.begin(), found.end(), static_cast<int64_t*>(out.data_ptr()));
  return out;
}
// [nonzero_indices_cpu.end]

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(nonzero_indices_cpu, NonzeroIndicesCPU);
