// y = factor * x with the Triton kernel of scale_triton.py, compiled ahead of time into
// scale_triton.cubin (SASS for one architecture, sm_90 by default) and embedded in this
// library by CMake; launched through tvm_ffi's cubin launcher on the caller's stream.
// What Triton fixed when it compiled the kernel (its name, threads per block, shared
// memory, the parameters it appends) comes from scale_triton_launch.h, written beside
// the cubin by the same compile. Every argument is checked before the first CUDA call.
#include <cuda_runtime_api.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/ffi/extra/cuda/cubin_launcher.h>
#include <tvm/ffi/extra/cuda/device_guard.h>
#include <tvm/ffi/function.h>

#include <array>
#include <cstdint>
#include <string>

#include "scale_triton_launch.h"

namespace {

namespace ffi = tvm::ffi;

// [check_tensor.begin]
// A float32, contiguous CUDA tensor; the messages name the argument.
void CheckTensor(const ffi::TensorView& t, const char* name) {
  DLDeviceType type = t.device().device_type;
  if (type != kDLCUDA) {
    TVM_FFI_THROW(ValueError) << "argument '" << name << "': expected a CUDA tensor, got one on "
                              << (type == kDLCPU ? std::string("cpu") : "device type " + std::to_string(type));
  }
  DLDataType dtype = t.dtype();
  if (dtype.code != kDLFloat || dtype.bits != 32 || dtype.lanes != 1) {
    TVM_FFI_THROW(TypeError) << "argument '" << name << "': expected float32, got DLPack type code "
                             << int(dtype.code) << " of " << int(dtype.bits) << " bits x " << dtype.lanes;
  }
  if (!t.IsContiguous()) {
    TVM_FFI_THROW(ValueError) << "argument '" << name << "': expected a contiguous tensor";
  }
}
// [check_tensor.end]

// [check_device.begin]
// The cubin holds SASS for kArch only: another GPU is told so, instead of the driver's
// "no kernel image is available" at launch.
void CheckArchitecture(int device_id) {
  int major = 0, minor = 0;
  TVM_FFI_CHECK_CUBIN_LAUNCHER_CUDA_ERROR(
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device_id));
  TVM_FFI_CHECK_CUBIN_LAUNCHER_CUDA_ERROR(
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device_id));
  if (major * 10 + minor != scale_triton::kArch) {
    TVM_FFI_THROW(RuntimeError) << "scale_triton was compiled for sm_" << scale_triton::kArch
                                << "; GPU " << device_id << " is sm_" << major * 10 + minor
                                << " (build with -DTRITON_ARCH=" << major * 10 + minor << ")";
  }
}
// [check_device.end]

// [embedded_entry.begin]
// The cubin's start and end symbols, put into this object file by CMake's
// tvm_ffi_embed_bin_into under the name scale_triton_cubin.
TVM_FFI_EMBED_CUBIN(scale_triton_cubin);

void ScaleTriton(ffi::TensorView x, ffi::TensorView y, double factor) {
  CheckTensor(x, "x");
  CheckTensor(y, "y");
  if (y.device().device_id != x.device().device_id) {
    TVM_FFI_THROW(ValueError) << "argument 'y': expected a tensor on cuda:" << x.device().device_id
                              << ", got one on cuda:" << y.device().device_id;
  }
  bool same_shape = y.ndim() == x.ndim();
  for (int i = 0; same_shape && i < x.ndim(); ++i) same_shape = y.shape()[i] == x.shape()[i];
  if (!same_shape) {
    TVM_FFI_THROW(ValueError) << "argument 'y': expected the shape of 'x'";
  }
  if (x.numel() > INT32_MAX) {  // the kernel's n is an i32
    TVM_FFI_THROW(ValueError) << "argument 'x': " << x.numel() << " elements, at most " << INT32_MAX;
  }
  if (x.numel() == 0) return;  // a grid of 0 blocks is an error, and there is nothing to do
  int device_id = x.device().device_id;
  ffi::CUDADeviceGuard guard(device_id);
  CheckArchitecture(device_id);
  // Loaded on the first call that gets here, then kept.
  static ffi::CubinKernel kernel =
      TVM_FFI_EMBED_CUBIN_GET_KERNEL(scale_triton_cubin, scale_triton::kKernel);

  // scale_kernel(x_ptr, y_ptr, factor, n) in Triton's types (*fp32, *fp32, fp32, i32), then
  // the pointers Triton appends for scratch memory, which this kernel does not use.
  void* x_ptr = static_cast<char*>(x.data_ptr()) + x.byte_offset();
  void* y_ptr = static_cast<char*>(y.data_ptr()) + y.byte_offset();
  float f = static_cast<float>(factor);
  int32_t n = static_cast<int32_t>(x.numel());
  std::array<void*, scale_triton::kAppendedPointers + 1> unused{};  // +1: never a zero-length array
  std::array<void*, 4 + scale_triton::kAppendedPointers> args{&x_ptr, &y_ptr, &f, &n};
  for (int i = 0; i < scale_triton::kAppendedPointers; ++i) args[4 + i] = &unused[i];

  // Triton's grid: one block of kThreads threads per kBlock elements, on the caller's stream.
  auto stream = static_cast<cudaStream_t>(TVMFFIEnvGetStream(kDLCUDA, device_id));
  unsigned blocks = static_cast<unsigned>((x.numel() + scale_triton::kBlock - 1) / scale_triton::kBlock);
  TVM_FFI_CHECK_CUBIN_LAUNCHER_CUDA_ERROR(kernel.Launch(args.data(), ffi::dim3(blocks),
                                                       ffi::dim3(scale_triton::kThreads), stream,
                                                       scale_triton::kSharedBytes));
}
// [embedded_entry.end]

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(scale_triton, ScaleTriton);
