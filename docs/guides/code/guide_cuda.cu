// CUDA side of the guide: memory from cudaMalloc (FromNDAlloc) and a kernel
// that launches on the caller's stream.
#include <ffi_cookbook/alloc_cuda.h>
#include <ffi_cookbook/check.h>
#include <ffi_cookbook/launch.h>
#include <ffi_cookbook/stream.h>
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/ffi/extra/cuda/base.h>
#include <tvm/ffi/extra/cuda/device_guard.h>
#include <tvm/ffi/function.h>

#include <cstdint>

namespace {

namespace ffi = tvm::ffi;

__global__ void FillKernel(float* y, float value, int64_t n) {
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = value;
}

__global__ void TwiceKernel(const float* x, float* y, int64_t n) {
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i];
}

// [plain_cuda_entry.begin]
void TwiceCUDA(ffi::TensorView x, ffi::TensorView y) {
  // 1. Validate (float32 only here, so no dtype dispatch).
  TVM_FFI_CHECK(x.device().device_type == kDLCUDA, ValueError)
      << "argument 'x': expected a CUDA tensor";
  TVM_FFI_CHECK(y.device().device_type == kDLCUDA && y.device().device_id == x.device().device_id,
                ValueError) << "argument 'y': expected a tensor on the GPU of 'x'";
  TVM_FFI_CHECK(x.dtype() == DLDataType({kDLFloat, 32, 1}), TypeError)
      << "argument 'x': expected float32";
  TVM_FFI_CHECK(y.dtype() == x.dtype(), TypeError) << "argument 'y': expected the dtype of 'x'";
  TVM_FFI_CHECK(y.numel() == x.numel(), ValueError)
      << "argument 'y': expected as many elements as 'x'";
  TVM_FFI_CHECK(x.IsContiguous() && y.IsContiguous(), ValueError)
      << "arguments 'x', 'y': expected contiguous tensors";
  TVM_FFI_CHECK(x.byte_offset() == 0 && y.byte_offset() == 0, ValueError)  // read from data_ptr()
      << "arguments 'x', 'y': expected byte_offset 0";
  // 2. Make x's GPU current for this call, and launch on the stream the caller uses.
  ffi::CUDADeviceGuard guard(x.device().device_id);
  auto stream = static_cast<cudaStream_t>(TVMFFIEnvGetStream(kDLCUDA, x.device().device_id));
  // 3. Launch, and turn a failed launch into a Python RuntimeError.
  int64_t n = x.numel();
  unsigned int blocks = static_cast<unsigned int>(n > 0 ? (n + 255) / 256 : 1);
  TwiceKernel<<<blocks, 256, 0, stream>>>(static_cast<const float*>(x.data_ptr()),
                                          static_cast<float*>(y.data_ptr()), n);
  TVM_FFI_CHECK_CUDA_ERROR(cudaGetLastError());
}
// [plain_cuda_entry.end]

// [fill_cuda_entry.begin]
void FillCUDA(ffi::TensorView y, double value) {
  ffi_cookbook::CheckDevice(y, "y", kDLCUDA);
  ffi_cookbook::CheckDtype(y, "y", DLDataType{kDLFloat, 32, 1});
  ffi_cookbook::CheckContiguous(y, "y");
  ffi::CUDADeviceGuard guard(y.device().device_id);                // y's GPU is current
  cudaStream_t stream = ffi_cookbook::CurrentStream(y.device());  // the caller's stream
  int64_t n = y.numel();
  FillKernel<<<ffi_cookbook::BlocksFor(n), ffi_cookbook::kThreadsPerBlock, 0, stream>>>(
      static_cast<float*>(y.data_ptr()), static_cast<float>(value), n);
  ffi_cookbook::CheckLaunch();
}
// [fill_cuda_entry.end]

// [empty_cuda_entry.begin]
// Device memory this library owns: cudaMalloc now, cudaFree in the deleter.
ffi::Tensor EmptyCUDA(ffi::Shape shape, int32_t device_id) {
  return ffi::Tensor::FromNDAlloc(ffi_cookbook::CUDAAllocator(), shape,
                                  DLDataType{kDLFloat, 32, 1}, DLDevice{kDLCUDA, device_id});
}
// [empty_cuda_entry.end]

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(guide_twice_cuda, TwiceCUDA);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(guide_fill_cuda, FillCUDA);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(guide_empty_cuda, EmptyCUDA);
