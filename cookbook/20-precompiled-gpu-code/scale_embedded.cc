// y = factor * x with GPU code that was compiled ahead of time, launched
// through tvm_ffi's cubin launcher (the CUDA runtime API underneath).
//
// scale_embedded: the fatbin CMake compiled from scale_kernel.cu and embedded
//   in this library (tvm_ffi_embed_bin_into, CMakeLists.txt).
// load_cubin: any cubin or fatbin given as bytes at run time (NVRTC's output,
//   a file), returned as a function that launches the named kernel.
// Nothing touches the GPU before the arguments are checked, and a machine
// without one gets a RuntimeError from the first CUDA call.
#include <cuda_runtime_api.h>
#include <tvm/ffi/extra/cuda/cubin_launcher.h>
#include <tvm/ffi/extra/cuda/device_guard.h>
#include <tvm/ffi/function.h>

#include <memory>

#include "scale_args.h"

namespace {

namespace ffi = tvm::ffi;

// [launch_cubin_kernel.begin]
void Launch(ffi::CubinKernel& kernel, ffi::TensorView x, ffi::TensorView y, double factor) {
  precompiled::ScaleArgs a = precompiled::CheckScaleArgs(x, y, factor);
  if (a.n == 0) return;  // a grid of 0 blocks is an error, and there is nothing to do
  ffi::CUDADeviceGuard guard(x.device().device_id);
  // The caller's stream for this device (torch's current stream when called from torch).
  auto stream = static_cast<cudaStream_t>(TVMFFIEnvGetStream(kDLCUDA, x.device().device_id));
  void* args[] = {&a.x, &a.y, &a.factor, &a.n};
  TVM_FFI_CHECK_CUBIN_LAUNCHER_CUDA_ERROR(
      kernel.Launch(args, ffi::dim3(a.blocks), ffi::dim3(precompiled::kThreads), stream));
}
// [launch_cubin_kernel.end]

// [embedded_entry.begin]
// The fatbin's start and end symbols, which CMake's tvm_ffi_embed_bin_into put
// into this object file under the name scale_fatbin.
TVM_FFI_EMBED_CUBIN(scale_fatbin);

void ScaleEmbedded(ffi::TensorView x, ffi::TensorView y, double factor) {
  precompiled::CheckScaleArgs(x, y, factor);  // before the first CUDA call
  // Loaded on first use (the driver picks the SASS for this GPU, or JIT-compiles
  // the PTX), then kept: a static that failed to initialise is retried next call.
  static ffi::CubinKernel kernel = TVM_FFI_EMBED_CUBIN_GET_KERNEL(scale_fatbin, "scale_f32");
  Launch(kernel, x, y, factor);
}
// [embedded_entry.end]

// [load_cubin_entry.begin]
ffi::Function LoadCubin(ffi::Bytes image, ffi::String kernel_name) {
  precompiled::CheckImage(image.data(), image.size(), "image");
  auto module = std::make_shared<ffi::CubinModule>(image);
  std::shared_ptr<ffi::CubinKernel> kernel;
  try {
    kernel = std::make_shared<ffi::CubinKernel>(module->GetKernel(kernel_name.c_str()));
  } catch (...) {
    // A name the image lacks leaves cudaErrorSymbolNotFound pending in the CUDA runtime:
    // cleared here, or the caller's next CUDA call (a torch op) raises it as its own.
    cudaGetLastError();
    throw;
  }
  // The function keeps the module loaded for as long as Python holds it.
  return ffi::Function::FromTyped([module, kernel](ffi::TensorView x, ffi::TensorView y, double factor) {
    Launch(*kernel, x, y, factor);
  });
}
// [load_cubin_entry.end]

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(scale_embedded, ScaleEmbedded);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(load_cubin, LoadCubin);
