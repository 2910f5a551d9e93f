// CUDA side of the guide: memory from cudaMalloc (FromNDAlloc) and a kernel
// that launches on the caller's stream.
#include <ffi_cookbook/alloc_cuda.h>
#include <ffi_cookbook/check.h>
#include <ffi_cookbook/launch.h>
#include <ffi_cookbook/stream.h>
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/extra/cuda/device_guard.h>
#include <tvm/ffi/function.h>

#include <cstdint>

namespace {

namespace ffi = tvm::ffi;

__global__ void FillKernel(float* y, float value, int64_t n) {
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = value;
}

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

TVM_FFI_DLL_EXPORT_TYPED_FUNC(guide_fill_cuda, FillCUDA);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(guide_empty_cuda, EmptyCUDA);
