// CUDA launches done wrong and right, for recipe 19: a launch whose error
// nobody checks, the same launch checked, and a kernel that faults after its
// launch succeeded. Built only with -DCRASH_DEMOS=ON (libcrash_demos.so). The
// tensors are not checked on purpose: these entries exist to fail.
#include <ffi_cookbook/launch.h>
#include <ffi_cookbook/stream.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/function.h>

#include <cstdint>

namespace {

namespace ffi = tvm::ffi;

__global__ void FillKernel(float* out, int64_t n, float value) {
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = value;
}

__global__ void WriteAtKernel(float* out, int64_t offset) { out[offset] = 1.0f; }

// [fill_launches.begin]
// `threads` per block comes from the caller; a GPU allows at most 1024.
void LaunchFill(ffi::TensorView out, double value, int64_t threads) {
  int64_t blocks = threads > 0 && out.numel() > 0 ? (out.numel() + threads - 1) / threads : 1;
  cudaStream_t stream = ffi_cookbook::CurrentStream(out.device());
  FillKernel<<<static_cast<unsigned>(blocks), static_cast<unsigned>(threads), 0, stream>>>(
      static_cast<float*>(out.data_ptr()), out.numel(), static_cast<float>(value));
}

void FillUnchecked(ffi::TensorView out, double value, int64_t threads) {
  LaunchFill(out, value, threads);  // a failed launch is forgotten: out keeps its old values
}

void FillChecked(ffi::TensorView out, double value, int64_t threads) {
  LaunchFill(out, value, threads);
  ffi_cookbook::CheckLaunch();  // cudaGetLastError() -> RuntimeError naming the CUDA error
}
// [fill_launches.end]

// [write_at.begin]
// The launch is valid, so the check after it passes; the kernel then faults on
// the GPU, and the error reaches the host at the next synchronisation.
void WriteAt(ffi::TensorView out, int64_t offset) {
  WriteAtKernel<<<1, 1, 0, ffi_cookbook::CurrentStream(out.device())>>>(static_cast<float*>(out.data_ptr()), offset);
  ffi_cookbook::CheckLaunch();
}
// [write_at.end]

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(fill_unchecked, FillUnchecked);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(fill_checked, FillChecked);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(write_at, WriteAt);
