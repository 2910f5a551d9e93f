// add_one on a CUDA GPU: y = x + 1, elementwise, for float32, float16 and bfloat16.
#include <ffi_cookbook/check.h>
#include <ffi_cookbook/dtype.h>
#include <ffi_cookbook/launch.h>
#include <ffi_cookbook/stream.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/extra/cuda/device_guard.h>
#include <tvm/ffi/function.h>

namespace {

namespace ffi = tvm::ffi;

template <typename T>
__global__ void AddOneKernel(const T* x, T* y, int64_t n) {
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = ffi_cookbook::FromFloat<T>(ffi_cookbook::ToFloat(x[i]) + 1.0f);
}

// [add_one_cuda_entry.begin]
void AddOneCUDA(ffi::TensorView x, ffi::TensorView y) {
  // 1. Validate.
  ffi_cookbook::CheckElementwise(x, "x", y, "y", kDLCUDA);
  // 2. Run on x's GPU, on the stream the caller is using.
  ffi::CUDADeviceGuard guard(x.device().device_id);
  cudaStream_t stream = ffi_cookbook::CurrentStream(x.device());
  int64_t n = x.numel();
  // 3. Dispatch on dtype and launch.
  ffi_cookbook::DispatchFloat(x.dtype(), "x", [&](auto tag) {
    using T = typename decltype(tag)::type;
    AddOneKernel<T><<<ffi_cookbook::BlocksFor(n), ffi_cookbook::kThreadsPerBlock, 0, stream>>>(
        static_cast<const T*>(x.data_ptr()), static_cast<T*>(y.data_ptr()), n);
  });
  ffi_cookbook::CheckLaunch();
}
// [add_one_cuda_entry.end]

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(add_one_cuda, AddOneCUDA);
