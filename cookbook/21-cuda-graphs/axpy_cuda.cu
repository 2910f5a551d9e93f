// out = alpha * x + y for float32 on a CUDA GPU, in the variants the CUDA-graph
// notebook compares: launched on the caller's stream (returning that stream's
// handle), on the legacy default stream instead, and with the output allocated
// by the framework (FromEnvAlloc) or by cudaMalloc (FromNDAlloc).
#include <ffi_cookbook/alloc_cuda.h>
#include <ffi_cookbook/check.h>
#include <ffi_cookbook/dtype.h>
#include <ffi_cookbook/env_alloc.h>
#include <ffi_cookbook/launch.h>
#include <ffi_cookbook/stream.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/extra/cuda/device_guard.h>
#include <tvm/ffi/function.h>

#include <cstdint>

namespace {

namespace ffi = tvm::ffi;

__global__ void AxpyKernel(const float* x, const float* y, float alpha, float* out, int64_t n) {
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = alpha * x[i] + y[i];
}

void CheckInputs(ffi::TensorView x, ffi::TensorView y) {
  ffi_cookbook::CheckElementwise(x, "x", y, "y", kDLCUDA);
  ffi_cookbook::CheckDtype(x, "x", ffi_cookbook::kFloat32);
}

void Launch(ffi::TensorView x, ffi::TensorView y, double alpha, ffi::TensorView out,
            cudaStream_t stream) {
  int64_t n = x.numel();
  if (n == 0) return;
  AxpyKernel<<<ffi_cookbook::BlocksFor(n), ffi_cookbook::kThreadsPerBlock, 0, stream>>>(
      static_cast<const float*>(x.data_ptr()), static_cast<const float*>(y.data_ptr()),
      static_cast<float>(alpha), static_cast<float*>(out.data_ptr()), n);
  ffi_cookbook::CheckLaunch();
}

// [axpy_cuda_entry.begin]
// On the stream the caller published for x's device: torch's current stream,
// which inside `torch.cuda.graph(...)` is the stream being captured.
int64_t AxpyCUDA(ffi::TensorView x, ffi::TensorView y, double alpha, ffi::TensorView out) {
  CheckInputs(x, y);
  ffi_cookbook::CheckElementwise(x, "x", out, "out", kDLCUDA);
  ffi::CUDADeviceGuard guard(x.device().device_id);
  cudaStream_t stream = ffi_cookbook::CurrentStream(x.device());
  Launch(x, y, alpha, out, stream);
  return static_cast<int64_t>(reinterpret_cast<intptr_t>(stream));
}
// [axpy_cuda_entry.end]

// [axpy_null_stream.begin]
// The mistake: the legacy default stream (0), whatever the caller is using.
void AxpyNullStreamCUDA(ffi::TensorView x, ffi::TensorView y, double alpha, ffi::TensorView out) {
  CheckInputs(x, y);
  ffi_cookbook::CheckElementwise(x, "x", out, "out", kDLCUDA);
  ffi::CUDADeviceGuard guard(x.device().device_id);
  Launch(x, y, alpha, out, /*stream=*/nullptr);
}
// [axpy_null_stream.end]

// [axpy_alloc.begin]
// The output from the framework's allocator: torch's caching allocator, which
// during a capture hands out memory of the graph's private pool.
ffi::Tensor AxpyEnvAllocCUDA(ffi::TensorView x, ffi::TensorView y, double alpha) {
  CheckInputs(x, y);
  ffi::CUDADeviceGuard guard(x.device().device_id);
  ffi::Tensor out = ffi_cookbook::EmptyLike(x);
  Launch(x, y, alpha, out, ffi_cookbook::CurrentStream(x.device()));
  return out;
}

// The output from cudaMalloc (ffi_cookbook::CUDAAllocator).
ffi::Tensor AxpyNDAllocCUDA(ffi::TensorView x, ffi::TensorView y, double alpha) {
  CheckInputs(x, y);
  ffi::CUDADeviceGuard guard(x.device().device_id);
  ffi::Tensor out = ffi::Tensor::FromNDAlloc(ffi_cookbook::CUDAAllocator(), x.shape(), x.dtype(),
                                             x.device());
  Launch(x, y, alpha, out, ffi_cookbook::CurrentStream(x.device()));
  return out;
}
// [axpy_alloc.end]

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(graph_axpy_cuda, AxpyCUDA);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(graph_axpy_null_stream_cuda, AxpyNullStreamCUDA);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(graph_axpy_env_alloc_cuda, AxpyEnvAllocCUDA);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(graph_axpy_nd_alloc_cuda, AxpyNDAllocCUDA);
