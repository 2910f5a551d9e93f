// add_one on a CUDA GPU: y = x + 1, elementwise, for float32 and float64.
// Needs apache-tvm-ffi and the CUDA toolkit.
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/ffi/extra/cuda/device_guard.h>
#include <tvm/ffi/function.h>

#include "add_one_args.h"

namespace {

namespace ffi = tvm::ffi;

template <typename T>
__global__ void AddOneKernel(const T* x, T* y, int64_t n) {
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] + T(1);
}

template <typename T>
void Launch(ffi::TensorView x, ffi::TensorView y, cudaStream_t stream) {
  int64_t n = x.numel();
  if (n == 0) return;
  constexpr int kThreads = 256;
  int64_t blocks = (n + kThreads - 1) / kThreads;
  AddOneKernel<T><<<blocks, kThreads, 0, stream>>>(static_cast<const T*>(x.data_ptr()),
                                                   static_cast<T*>(y.data_ptr()), n);
}

// [add_one_cuda_entry.begin]
void AddOneCUDA(ffi::TensorView x, ffi::TensorView y) {
  CheckAddOneArgs(x, y, kDLCUDA);
  // Run on x's GPU, on the stream the caller (e.g. torch) is using.
  ffi::CUDADeviceGuard guard(x.device().device_id);
  auto stream = static_cast<cudaStream_t>(TVMFFIEnvGetStream(kDLCUDA, x.device().device_id));
  if (x.dtype().bits == 32) {
    Launch<float>(x, y, stream);
  } else {
    Launch<double>(x, y, stream);
  }
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) TVM_FFI_THROW(RuntimeError) << "add_one_cuda: " << cudaGetErrorString(err);
}
// [add_one_cuda_entry.end]

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(add_one_cuda, AddOneCUDA);
