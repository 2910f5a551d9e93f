// checked_add on a CUDA GPU: the same checks, expecting CUDA tensors.
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/ffi/extra/cuda/device_guard.h>
#include <tvm/ffi/function.h>

#include <cstdint>

#include "checked_add_args.h"

namespace {

namespace ffi = tvm::ffi;

__global__ void AddKernel(const float* x, const float* y, float* z, int64_t n) {
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) z[i] = x[i] + y[i];
}

// [checked_add_cuda.begin]
void CheckedAddCUDA(ffi::TensorView a, ffi::TensorView b, ffi::TensorView out) {
  CheckAddArgs(a, b, out, kDLCUDA);
  // Run on a's GPU, on the stream the caller (e.g. torch) is using.
  ffi::CUDADeviceGuard guard(a.device().device_id);
  auto stream = static_cast<cudaStream_t>(TVMFFIEnvGetStream(kDLCUDA, a.device().device_id));
  int64_t n = a.numel();
  if (n == 0) return;
  constexpr int kThreads = 256;
  int64_t blocks = (n + kThreads - 1) / kThreads;
  AddKernel<<<blocks, kThreads, 0, stream>>>(static_cast<const float*>(a.data_ptr()),
                                             static_cast<const float*>(b.data_ptr()),
                                             static_cast<float*>(out.data_ptr()), n);
  // A failed launch (no kernel image for this GPU, a bad configuration) raises RuntimeError.
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) TVM_FFI_THROW(RuntimeError) << "checked_add_cuda: " << cudaGetErrorString(err);
}
// [checked_add_cuda.end]

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(checked_add_cuda, CheckedAddCUDA);
