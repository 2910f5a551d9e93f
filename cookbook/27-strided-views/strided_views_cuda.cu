// y = a * x + b on a CUDA GPU over views of any strides: each thread turns an element's
// index into one offset per tensor, dimension by dimension.
#include <ffi_cookbook/launch.h>
#include <ffi_cookbook/stream.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/extra/cuda/device_guard.h>
#include <tvm/ffi/function.h>

#include <algorithm>
#include <cstdint>

#include "strided_views.h"

namespace {

namespace ffi = tvm::ffi;
using strided_views::Layout;

// [strided_axpb_cuda_kernel.begin]
// The layout arrives by value, in the kernel's parameter space: no copy to device memory.
// Element i's index in dimension d is (i / product of the sizes after d) % shape[d].
__global__ void StridedAxpbKernel(const float* x, float* y, float a, float b, Layout l) {
  const int64_t step = int64_t{gridDim.x} * blockDim.x;
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < l.numel; i += step) {
    int64_t rest = i, ox = 0, oy = 0;
    for (int d = l.rank - 1; d >= 0; --d) {
      const int64_t k = rest % l.shape[d];
      rest /= l.shape[d];
      ox += k * l.x_strides[d];
      oy += k * l.y_strides[d];
    }
    y[oy] = a * x[ox] + b;
  }
}
// [strided_axpb_cuda_kernel.end]

// [strided_axpb_cuda_entry.begin]
void StridedAxpbCUDA(ffi::TensorView x, ffi::TensorView y, float a, float b) {
  // 1. Validate: the CPU entry's checks, on a CUDA device.
  const Layout layout = strided_views::CheckStrided(x, y, kDLCUDA);
  if (layout.numel == 0) return;
  // 2. x's device and the caller's stream (torch's current one, for torch tensors).
  ffi::CUDADeviceGuard guard(x.device().device_id);
  cudaStream_t stream = ffi_cookbook::CurrentStream(x.device());
  // 3. First elements at byte_offset; a grid-stride loop covers any numel.
  const auto* in = reinterpret_cast<const float*>(static_cast<const char*>(x.data_ptr()) + x.byte_offset());
  auto* out = reinterpret_cast<float*>(static_cast<char*>(y.data_ptr()) + y.byte_offset());
  const unsigned blocks = std::min(ffi_cookbook::BlocksFor(layout.numel), 65535u);
  StridedAxpbKernel<<<blocks, ffi_cookbook::kThreadsPerBlock, 0, stream>>>(in, out, a, b, layout);
  ffi_cookbook::CheckLaunch();
}
// [strided_axpb_cuda_entry.end]

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(strided_axpb_cuda, StridedAxpbCUDA);
