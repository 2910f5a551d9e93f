// y = alpha * x on a CUDA GPU, launched on the caller's current stream.
//
// The entry returns the stream handle it launched on, so a caller (and the
// tests) can check which stream the work went to.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/ffi/extra/cuda/device_guard.h>
#include <tvm/ffi/function.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

namespace {

namespace ffi = tvm::ffi;

// [scale_kernel_cuda.begin]
// The kernel computes in float; CUDA's own conversions widen and narrow the
// 16-bit types (rounding to nearest even).
__device__ float ToFloat(float v) { return v; }
__device__ float ToFloat(__half v) { return __half2float(v); }
__device__ float ToFloat(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ void Store(float* p, float v) { *p = v; }
__device__ void Store(__half* p, float v) { *p = __float2half(v); }
__device__ void Store(__nv_bfloat16* p, float v) { *p = __float2bfloat16(v); }

template <typename T>
__global__ void ScaleKernel(const T* x, T* y, float alpha, int64_t n) {
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) Store(&y[i], alpha * ToFloat(x[i]));
}

template <typename T>
void Launch(const ffi::TensorView& x, const ffi::TensorView& y, double alpha, cudaStream_t stream) {
  int64_t n = x.numel();
  if (n == 0) return;
  constexpr int kThreads = 256;  // one thread per element, enough blocks to cover n
  int64_t blocks = (n + kThreads - 1) / kThreads;
  ScaleKernel<T><<<blocks, kThreads, 0, stream>>>(  // the fourth value: the stream
      static_cast<const T*>(x.data_ptr()), static_cast<T*>(y.data_ptr()), static_cast<float>(alpha), n);
}
// [scale_kernel_cuda.end]

// [scale_args_cuda.begin]
// "float32", "float16" or "bfloat16"; nullptr for any other dtype.
const char* ScaledDtypeName(DLDataType dtype) {
  if (dtype == DLDataType{kDLFloat, 32, 1}) return "float32";
  if (dtype == DLDataType{kDLFloat, 16, 1}) return "float16";
  if (dtype == DLDataType{kDLBfloat, 16, 1}) return "bfloat16";
  return nullptr;
}

// "cpu:0", "cuda:1"; other device types by their DLPack number.
std::string DeviceName(DLDevice device) {
  int type = device.device_type;
  std::string name = type == kDLCPU ? "cpu" : type == kDLCUDA ? "cuda" : "device_type=" + std::to_string(type);
  return name + ":" + std::to_string(device.device_id);
}

// Each check raises a Python exception naming the argument, before any memory is touched.
void CheckScaleArgs(const ffi::TensorView& x, const ffi::TensorView& y) {
  if (x.device().device_type != kDLCUDA) {
    TVM_FFI_THROW(ValueError) << "argument 'x': expected a tensor on cuda, got one on "
                              << DeviceName(x.device());
  }
  if (y.device().device_type != kDLCUDA || y.device().device_id != x.device().device_id) {
    TVM_FFI_THROW(ValueError) << "argument 'y': expected a tensor on " << DeviceName(x.device())
                              << " (the device of 'x'), got one on " << DeviceName(y.device());
  }
  const char* dtype = ScaledDtypeName(x.dtype());
  if (dtype == nullptr) {
    TVM_FFI_THROW(TypeError) << "argument 'x': expected dtype float32, float16 or bfloat16";
  }
  if (y.dtype() != x.dtype()) {
    TVM_FFI_THROW(TypeError) << "argument 'y': expected dtype " << dtype << " (the dtype of 'x')";
  }
  ffi::ShapeView xs = x.shape(), ys = y.shape();
  if (!std::equal(xs.begin(), xs.end(), ys.begin(), ys.end())) {
    TVM_FFI_THROW(ValueError) << "argument 'y': expected shape equal to the shape of 'x'";
  }
  // The kernel reads and writes whole elements from data_ptr() on.
  for (auto [t, name] : {std::pair{&x, "x"}, std::pair{&y, "y"}}) {
    if (!t->IsContiguous()) {
      TVM_FFI_THROW(ValueError) << "argument '" << name << "': expected a contiguous tensor";
    }
    if (t->byte_offset() != 0) {
      TVM_FFI_THROW(ValueError) << "argument '" << name << "': expected byte_offset 0";
    }
    if (t->numel() != 0 && reinterpret_cast<uintptr_t>(t->data_ptr()) % (t->dtype().bits / 8) != 0) {
      TVM_FFI_THROW(ValueError) << "argument '" << name << "': expected data aligned to its "
                                << t->dtype().bits / 8 << "-byte elements";
    }
  }
}
// [scale_args_cuda.end]

// [scale_on_stream_cuda_entry.begin]
int64_t ScaleOnStreamCUDA(ffi::TensorView x, ffi::TensorView y, double alpha) {
  CheckScaleArgs(x, y);
  // Make x's GPU current for the launch; the guard restores the old one on return.
  ffi::CUDADeviceGuard guard(x.device().device_id);
  // The stream the caller published for this device (nullptr: the default stream).
  auto stream = static_cast<cudaStream_t>(TVMFFIEnvGetStream(kDLCUDA, x.device().device_id));
  if (x.dtype() == DLDataType{kDLFloat, 32, 1}) {  // one of the three CheckScaleArgs allows
    Launch<float>(x, y, alpha, stream);
  } else if (x.dtype() == DLDataType{kDLFloat, 16, 1}) {
    Launch<__half>(x, y, alpha, stream);
  } else {
    Launch<__nv_bfloat16>(x, y, alpha, stream);
  }
  cudaError_t err = cudaGetLastError();  // a failed launch becomes a Python RuntimeError
  if (err != cudaSuccess) TVM_FFI_THROW(RuntimeError) << "scale_on_stream_cuda: " << cudaGetErrorString(err);
  return static_cast<int64_t>(reinterpret_cast<intptr_t>(stream));
}
// [scale_on_stream_cuda_entry.end]

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(scale_on_stream_cuda, ScaleOnStreamCUDA);
