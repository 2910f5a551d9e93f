// out = a @ b on a CUDA GPU through cuBLAS: one handle per device and thread, set to the
// caller's stream, with a workspace from the caller's framework.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <ffi_cookbook/check.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/ffi/extra/cuda/base.h>
#include <tvm/ffi/extra/cuda/device_guard.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>

#include <climits>
#include <cstdint>
#include <string>
#include <unordered_map>

#include "gemm.h"

namespace {

namespace ffi = tvm::ffi;

// [cublas_check.begin]
// A cuBLAS status other than success becomes a RuntimeError in Python naming the call:
// "cublasCreate(&handle) failed: CUBLAS_STATUS_NOT_INITIALIZED (the library was not initialized)".
[[noreturn]] void ThrowCublasError(const char* call, cublasStatus_t status) {
  const char* name = cublasGetStatusName(status);
  const char* text = cublasGetStatusString(status);
  TVM_FFI_THROW(RuntimeError) << call << " failed: " << (name ? name : "unknown status") << " ("
                              << (text ? text : "no description") << ")";
  TVM_FFI_UNREACHABLE();
}

#define GEMM_CHECK_CUBLAS(call)                                        \
  do {                                                                 \
    const cublasStatus_t gemm_status_ = (call);                        \
    if (gemm_status_ != CUBLAS_STATUS_SUCCESS) ThrowCublasError(#call, gemm_status_); \
  } while (0)
// [cublas_check.end]

// [cublas_handles.begin]
// A handle belongs to the device that was current when it was made, and its stream and
// workspace are settings that two threads calling at once would overwrite: so one handle
// per device and thread, made on first use and destroyed when its thread ends.
struct DeviceHandle {
  cublasHandle_t handle = nullptr;
  size_t workspace_bytes = 0;  // cuBLAS's advice: 32 MiB from Hopper (sm_90) on, 4 MiB before
};

class ThreadHandles {
 public:
  ~ThreadHandles() {
    for (auto& entry : handles_) cublasDestroy(entry.second.handle);  // nothing to report to at exit
  }
  // This thread's handle for `device`, which the caller has made the current device.
  const DeviceHandle& For(int device) {
    auto found = handles_.find(device);
    if (found != handles_.end()) return found->second;
    DeviceHandle made;
    int major = 0;
    TVM_FFI_CHECK_CUDA_ERROR(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    made.workspace_bytes = (major >= 9 ? size_t{32} : size_t{4}) << 20;
    cublasHandle_t handle = nullptr;
    GEMM_CHECK_CUBLAS(cublasCreate(&handle));
    made.handle = handle;
    return handles_.emplace(device, made).first->second;
  }

 private:
  std::unordered_map<int, DeviceHandle> handles_;
};

thread_local ThreadHandles thread_handles;
// [cublas_handles.end]

// cuBLAS's name for a dtype, or a TypeError naming the argument.
cudaDataType CublasType(DLDataType dtype, const char* name) {
  if (dtype == DLDataType{kDLFloat, 32, 1}) return CUDA_R_32F;
  if (dtype == DLDataType{kDLFloat, 16, 1}) return CUDA_R_16F;
  if (dtype == DLDataType{kDLBfloat, 16, 1}) return CUDA_R_16BF;
  TVM_FFI_THROW(TypeError) << "argument '" << name << "': expected dtype float32, float16 or bfloat16, got "
                           << ffi_cookbook::DtypeName(dtype);
  TVM_FFI_UNREACHABLE();
}

// [gemm_cublas_entry.begin]
void GemmCublas(ffi::TensorView a, ffi::TensorView b, ffi::TensorView out) {
  // 1. Validate: [m, k] @ [k, n] -> [m, n] on one CUDA device, one dtype, row-major, and
  //    sizes that fit cuBLAS's int parameters.
  gemm::CheckGemmArgs(a, b, out, kDLCUDA);
  const cudaDataType type = CublasType(a.dtype(), "a");
  const int64_t m = a.size(0), k = a.size(1), n = b.size(1);
  if (m > INT_MAX || k > INT_MAX || n > INT_MAX) {
    TVM_FFI_THROW(ValueError) << "argument 'a': expected sizes below 2^31 (cuBLAS takes int), got "
                              << ffi_cookbook::ShapeText(a) << " @ " << ffi_cookbook::ShapeText(b);
  }
  if (m == 0 || n == 0) return;  // nothing to write
  // 2. a's device, the caller's stream (torch's current one, for torch tensors).
  const int device = a.device().device_id;
  ffi::CUDADeviceGuard guard(device);
  auto stream = static_cast<cudaStream_t>(TVMFFIEnvGetStream(kDLCUDA, device));
  if (k == 0) {  // a sum of nothing; cuBLAS would refuse the leading dimension k = 0 of a
    TVM_FFI_CHECK_CUDA_ERROR(cudaMemsetAsync(out.data_ptr(), 0, m * n * out.dtype().bits / 8, stream));
    return;
  }
  // 3. This thread's handle, on that stream. cublasSetStream also puts the handle back on
  //    cuBLAS's own workspace, so the caller's framework's workspace is set after it, for
  //    this call. Like any tensor here, it returns to torch's caching allocator when this
  //    function returns, which reuses it only for work queued after this GEMM on the stream.
  const DeviceHandle& h = thread_handles.For(device);
  GEMM_CHECK_CUBLAS(cublasSetStream(h.handle, stream));
  ffi::Tensor workspace;
  if (TVMFFIEnvGetDLPackManagedTensorAllocator() != nullptr) {  // none for DLPack-only callers
    workspace = ffi::Tensor::FromEnvAlloc(TVMFFIEnvTensorAlloc, ffi::Shape({static_cast<int64_t>(h.workspace_bytes)}),
                                          DLDataType{kDLUInt, 8, 1}, a.device());
    GEMM_CHECK_CUBLAS(cublasSetWorkspace(h.handle, workspace.data_ptr(), h.workspace_bytes));
  }
  // 4. cuBLAS is column-major: a row-major [m, n] out is a column-major [n, m] out^T, and
  //    out^T = b^T a^T. So pass b before a, no transposes, with n, m, k and the row lengths
  //    as leading dimensions. Products are summed in float32 for every dtype.
  const float one = 1.0f, zero = 0.0f;
  GEMM_CHECK_CUBLAS(cublasGemmEx(h.handle, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(m),
                                 static_cast<int>(k), &one, b.data_ptr(), type, static_cast<int>(n),
                                 a.data_ptr(), type, static_cast<int>(k), &zero, out.data_ptr(), type,
                                 static_cast<int>(n), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}
// [gemm_cublas_entry.end]

// The cuBLAS this process loaded (not the headers it was built with), "13.10.0".
ffi::String CublasVersion() {
  int major = 0, minor = 0, patch = 0;
  GEMM_CHECK_CUBLAS(cublasGetProperty(MAJOR_VERSION, &major));
  GEMM_CHECK_CUBLAS(cublasGetProperty(MINOR_VERSION, &minor));
  GEMM_CHECK_CUBLAS(cublasGetProperty(PATCH_LEVEL, &patch));
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(gemm_cublas, GemmCublas);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(cublas_version_cublas, CublasVersion);
