// Validation and errors: what each check and each kind of C++ error becomes in Python.
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>

#include <cstdint>
#include <stdexcept>

#include "checked_add_args.h"

namespace {

namespace ffi = tvm::ffi;

// [checked_add_cpu.begin]
void CheckedAddCPU(ffi::TensorView a, ffi::TensorView b, ffi::TensorView out) {
  CheckAddArgs(a, b, out, kDLCPU);
  const float* x = static_cast<const float*>(a.data_ptr());
  const float* y = static_cast<const float*>(b.data_ptr());
  float* z = static_cast<float*>(out.data_ptr());
  for (int64_t i = 0; i < a.numel(); ++i) z[i] = x[i] + y[i];
}
// [checked_add_cpu.end]

// [custom_error_kind.begin]
// Any identifier works as an error kind. Python maps it to the class registered
// under that name with tvm_ffi.register_error, and to RuntimeError otherwise.
void CheckWorkspaceCPU(int64_t bytes) {
  constexpr int64_t kLimit = 1 << 20;
  if (bytes > kLimit) {
    TVM_FFI_THROW(WorkspaceLimitError) << "argument 'bytes': asked for " << bytes
                                       << " bytes of workspace, the limit is " << kLimit;
  }
}
// [custom_error_kind.end]

// [internal_errors.begin]
// TVM_FFI_ICHECK is for the kernel's own invariants, not for user input: it
// raises RuntimeError with the failed condition, and stays on in release builds.
int64_t ICheckCPU(int64_t n) {
  TVM_FFI_ICHECK_GE(n, 0) << "a count cannot be negative";
  return n;
}

// A standard exception from a library the kernel calls also becomes a
// RuntimeError; its what() is the message.
void StdExceptionCPU(int64_t n) {
  if (n != 0) throw std::out_of_range("std::out_of_range thrown inside the kernel");
}
// [internal_errors.end]

}  // namespace

// [validation_exports.begin]
TVM_FFI_DLL_EXPORT_TYPED_FUNC(checked_add_cpu, CheckedAddCPU);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(check_workspace_cpu, CheckWorkspaceCPU);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(icheck_demo_cpu, ICheckCPU);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(std_exception_demo_cpu, StdExceptionCPU);
// [validation_exports.end]
