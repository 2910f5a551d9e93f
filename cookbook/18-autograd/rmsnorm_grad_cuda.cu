// RMSNorm for training on a CUDA GPU (see rmsnorm_grad_cpu.cc for the formulas):
// one block per row for y and dx, one thread per column for dweight.
#include <ffi_cookbook/launch.h>
#include <ffi_cookbook/stream.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/extra/cuda/device_guard.h>
#include <tvm/ffi/function.h>

#include "rmsnorm_grad_check.h"

namespace {

namespace ffi = tvm::ffi;
using rmsnorm_grad::CheckInputs;
using rmsnorm_grad::CheckLike;
using rmsnorm_grad::CheckVector;
constexpr int kThreads = 256;

// Sum of one value per thread over the block; every thread gets the total.
template <typename T>
__device__ T BlockSum(T value) {
  __shared__ T partial[kThreads];
  partial[threadIdx.x] = value;
  __syncthreads();
  for (int stride = kThreads / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  T total = partial[0];
  __syncthreads();  // partial is reused by the next call
  return total;
}

template <typename T>
__global__ void ForwardKernel(const T* x, const T* w, T* y, T* rstd, int64_t n, double eps) {
  const T* xr = x + blockIdx.x * n;
  T squares = 0;
  for (int64_t i = threadIdx.x; i < n; i += kThreads) squares += xr[i] * xr[i];
  const T inv = rsqrt(BlockSum(squares) / n + static_cast<T>(eps));
  if (threadIdx.x == 0) rstd[blockIdx.x] = inv;
  for (int64_t i = threadIdx.x; i < n; i += kThreads) y[blockIdx.x * n + i] = xr[i] * inv * w[i];
}

template <typename T>
__global__ void BackwardRowKernel(const T* dy, const T* x, const T* w, const T* rstd, T* dx, int64_t n) {
  const int64_t base = blockIdx.x * n;
  T dot = 0;
  for (int64_t i = threadIdx.x; i < n; i += kThreads) dot += dy[base + i] * w[i] * x[base + i];
  const T inv = rstd[blockIdx.x];
  const T correction = inv * inv * inv * BlockSum(dot) / n;
  for (int64_t i = threadIdx.x; i < n; i += kThreads) {
    dx[base + i] = inv * dy[base + i] * w[i] - x[base + i] * correction;
  }
}

template <typename T>
__global__ void WeightGradKernel(const T* dy, const T* x, const T* rstd, T* dw, int64_t rows, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  T sum = 0;  // neighbouring threads read neighbouring columns: coalesced
  for (int64_t r = 0; r < rows; ++r) sum += dy[r * n + i] * x[r * n + i] * rstd[r];
  dw[i] = sum;
}

void RMSNormForwardCUDA(ffi::TensorView x, ffi::TensorView weight, ffi::TensorView y,
                        ffi::TensorView rstd, double eps) {
  CheckInputs(x, weight, rstd, kDLCUDA);
  CheckLike(y, "y", x, "x");
  if (!(eps > 0.0)) TVM_FFI_THROW(ValueError) << "argument 'eps': expected > 0, got " << eps;
  if (x.size(0) == 0) return;
  ffi::CUDADeviceGuard guard(x.device().device_id);
  cudaStream_t stream = ffi_cookbook::CurrentStream(x.device());
  rmsnorm_grad::DispatchFloat32Or64(x, [&](auto zero) {
    using T = decltype(zero);
    ForwardKernel<T><<<x.size(0), kThreads, 0, stream>>>(
        static_cast<const T*>(x.data_ptr()), static_cast<const T*>(weight.data_ptr()),
        static_cast<T*>(y.data_ptr()), static_cast<T*>(rstd.data_ptr()), x.size(1), eps);
  });
  ffi_cookbook::CheckLaunch();
}

void RMSNormBackwardCUDA(ffi::TensorView dy, ffi::TensorView x, ffi::TensorView weight,
                         ffi::TensorView rstd, ffi::TensorView dx, ffi::TensorView dweight) {
  CheckInputs(x, weight, rstd, kDLCUDA);
  CheckLike(dy, "dy", x, "x");
  CheckLike(dx, "dx", x, "x");
  CheckVector(dweight, "dweight", x.size(1), x, "x");
  ffi::CUDADeviceGuard guard(x.device().device_id);
  cudaStream_t stream = ffi_cookbook::CurrentStream(x.device());
  const int64_t rows = x.size(0), n = x.size(1);
  rmsnorm_grad::DispatchFloat32Or64(x, [&](auto zero) {
    using T = decltype(zero);
    const T *dyp = static_cast<const T*>(dy.data_ptr()), *xp = static_cast<const T*>(x.data_ptr());
    const T* rp = static_cast<const T*>(rstd.data_ptr());
    if (rows > 0) {
      BackwardRowKernel<T><<<rows, kThreads, 0, stream>>>(
          dyp, xp, static_cast<const T*>(weight.data_ptr()), rp, static_cast<T*>(dx.data_ptr()), n);
    }
    WeightGradKernel<T><<<ffi_cookbook::BlocksFor(n), ffi_cookbook::kThreadsPerBlock, 0, stream>>>(
        dyp, xp, rp, static_cast<T*>(dweight.data_ptr()), rows, n);
  });
  ffi_cookbook::CheckLaunch();
}

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(rmsnorm_forward_cuda, RMSNormForwardCUDA);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(rmsnorm_backward_cuda, RMSNormBackwardCUDA);
