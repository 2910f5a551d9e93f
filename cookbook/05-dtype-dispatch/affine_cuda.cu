// y = a * x + b on a CUDA GPU for float32, float16 and bfloat16, with double a and b.
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

// Same element function as affine_cpu.cc: one rounding to T per element.
template <typename T>
__device__ inline T AffineElement(T x, double a, double b) {
  double wide = a * static_cast<double>(ffi_cookbook::ToFloat(x)) + b;
  return ffi_cookbook::FromFloat<T>(static_cast<float>(wide));
}

template <typename T>
__global__ void AffineKernel(const T* x, T* y, int64_t n, double a, double b) {
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = AffineElement(x[i], a, b);
}

// [affine_cuda_entry.begin]
void AffineCUDA(ffi::TensorView x, ffi::TensorView y, double a, double b) {
  ffi_cookbook::CheckElementwise(x, "x", y, "y", kDLCUDA);
  ffi::CUDADeviceGuard guard(x.device().device_id);
  cudaStream_t stream = ffi_cookbook::CurrentStream(x.device());
  int64_t n = x.numel();
  // The same dispatch picks the kernel template's instantiation.
  ffi_cookbook::DispatchFloat(x.dtype(), "x", [&](auto tag) {
    using T = typename decltype(tag)::type;
    AffineKernel<T><<<ffi_cookbook::BlocksFor(n), ffi_cookbook::kThreadsPerBlock, 0, stream>>>(
        static_cast<const T*>(x.data_ptr()), static_cast<T*>(y.data_ptr()), n, a, b);
  });
  ffi_cookbook::CheckLaunch();
}
// [affine_cuda_entry.end]

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(affine_cuda, AffineCUDA);
