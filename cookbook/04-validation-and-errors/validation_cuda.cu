// checked_add on a CUDA GPU: the same checks, expecting CUDA tensors.
#include <ffi_cookbook/launch.h>
#include <ffi_cookbook/stream.h>
#include <tvm/ffi/container/tensor.h>
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
  ffi::CUDADeviceGuard guard(a.device().device_id);
  cudaStream_t stream = ffi_cookbook::CurrentStream(a.device());
  int64_t n = a.numel();
  AddKernel<<<ffi_cookbook::BlocksFor(n), ffi_cookbook::kThreadsPerBlock, 0, stream>>>(
      static_cast<const float*>(a.data_ptr()), static_cast<const float*>(b.data_ptr()),
      static_cast<float*>(out.data_ptr()), n);
  ffi_cookbook::CheckLaunch();
}
// [checked_add_cuda.end]

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(checked_add_cuda, CheckedAddCUDA);
