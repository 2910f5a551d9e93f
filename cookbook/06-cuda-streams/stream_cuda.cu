// y = alpha * x on a CUDA GPU, launched on the caller's current stream.
//
// The entry returns the stream handle it launched on, so a caller (and the
// tests) can check which stream the work went to.
#include <ffi_cookbook/check.h>
#include <ffi_cookbook/dtype.h>
#include <ffi_cookbook/launch.h>
#include <ffi_cookbook/stream.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/extra/cuda/device_guard.h>
#include <tvm/ffi/function.h>

#include <cstdint>

namespace {

namespace ffi = tvm::ffi;

template <typename T>
__global__ void ScaleKernel(const T* x, T* y, float alpha, int64_t n) {
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = ffi_cookbook::FromFloat<T>(alpha * ffi_cookbook::ToFloat(x[i]));
}

// [scale_on_stream_cuda_entry.begin]
int64_t ScaleOnStreamCUDA(ffi::TensorView x, ffi::TensorView y, double alpha) {
  ffi_cookbook::CheckElementwise(x, "x", y, "y", kDLCUDA);
  // Make x's GPU current for the launch; the guard restores the old one on return.
  ffi::CUDADeviceGuard guard(x.device().device_id);
  // The stream the caller published for this device (nullptr: the default stream).
  cudaStream_t stream = ffi_cookbook::CurrentStream(x.device());
  int64_t n = x.numel();
  ffi_cookbook::DispatchFloat(x.dtype(), "x", [&](auto tag) {
    using T = typename decltype(tag)::type;
    ScaleKernel<T><<<ffi_cookbook::BlocksFor(n), ffi_cookbook::kThreadsPerBlock, 0, stream>>>(
        static_cast<const T*>(x.data_ptr()), static_cast<T*>(y.data_ptr()),
        static_cast<float>(alpha), n);
  });
  ffi_cookbook::CheckLaunch();
  return static_cast<int64_t>(reinterpret_cast<intptr_t>(stream));
}
// [scale_on_stream_cuda_entry.end]

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(scale_on_stream_cuda, ScaleOnStreamCUDA);
