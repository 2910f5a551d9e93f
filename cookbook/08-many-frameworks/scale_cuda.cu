// scale on a CUDA GPU: out = alpha * x for float32, on the caller's stream.
#include <ffi_cookbook/check.h>
#include <ffi_cookbook/launch.h>
#include <ffi_cookbook/stream.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/extra/cuda/device_guard.h>
#include <tvm/ffi/function.h>

namespace {

namespace ffi = tvm::ffi;

constexpr DLDataType kFloat32{kDLFloat, 32, 1};

__global__ void ScaleKernel(const float* x, float alpha, float* out, int64_t n) {
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = alpha * x[i];
}

// [scale_cuda_entry.begin]
void ScaleCUDA(ffi::TensorView x, double alpha, ffi::TensorView out) {
  ffi_cookbook::CheckElementwise(x, "x", out, "out", kDLCUDA);
  ffi_cookbook::CheckDtype(x, "x", kFloat32);
  // The stream is whatever the caller made current: torch's current stream for
  // torch tensors, or the one set with tvm_ffi.use_raw_stream (CuPy, JAX).
  ffi::CUDADeviceGuard guard(x.device().device_id);
  cudaStream_t stream = ffi_cookbook::CurrentStream(x.device());
  int64_t n = x.numel();
  ScaleKernel<<<ffi_cookbook::BlocksFor(n), ffi_cookbook::kThreadsPerBlock, 0, stream>>>(
      static_cast<const float*>(x.data_ptr()), static_cast<float>(alpha),
      static_cast<float*>(out.data_ptr()), n);
  ffi_cookbook::CheckLaunch();
}
// [scale_cuda_entry.end]

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(scale_cuda, ScaleCUDA);
