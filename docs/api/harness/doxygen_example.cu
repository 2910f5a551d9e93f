// Harness for the CUDA examples in include/ffi_cookbook's Doxygen comments.
// In scope for each example: tensor views `x` and `y`, `data` (x's float
// elements), their count `n`, and a kernel `MyKernel(float*, int64_t)`.
#include <ffi_cookbook/alloc_cuda.h>
#include <ffi_cookbook/alloc_nvshmem.h>
#include <ffi_cookbook/launch.h>
#include <ffi_cookbook/stream.h>
#include <tvm/ffi/container/tensor.h>

#include <cstdint>

namespace {

__global__ void MyKernel(float* data, int64_t n) {
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) data[i] *= 2.0f;
}

void Example(tvm::ffi::TensorView x, tvm::ffi::TensorView y) {
  float* data = static_cast<float*>(x.data_ptr());
  int64_t n = x.numel();
  (void)data;
  (void)n;
  /* SNIPPET */
}

}  // namespace

void (*keep_example)(tvm::ffi::TensorView, tvm::ffi::TensorView) = Example;
