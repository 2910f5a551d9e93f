// y = factor * x through the CUDA driver API alone: no CUDA runtime (cudart),
// and no link to the driver either. libcuda.so.1 is opened when the first
// call needs it, so the library loads (and refuses bad arguments) on a machine
// without a GPU, and the same binary runs under any driver new enough for the
// GPU code it embeds. cuda.h is included for its types and prototypes only.
#include <cuda.h>
#include <dlfcn.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/ffi/function.h>

#include <map>
#include <mutex>

#include "scale_args.h"

// The fatbin CMake compiled from scale_kernel.cu and embedded into this object
// file under the name scale_driver_fatbin (what TVM_FFI_EMBED_CUBIN declares).
extern "C" const char __tvm_ffi__cubin_scale_driver_fatbin[];

namespace {

namespace ffi = tvm::ffi;

// [driver_api.begin]
// The driver functions this file calls, looked up in libcuda.so.1 by their real
// symbol names: cuda.h maps some to versioned ones (cuCtxPushCurrent ->
// cuCtxPushCurrent_v2), hence the two-step stringification.
#define PRECOMPILED_NAME(fn) #fn
#define PRECOMPILED_SYMBOL(fn) PRECOMPILED_NAME(fn)
#define PRECOMPILED_LOAD(fn) fn = reinterpret_cast<decltype(&::fn)>(Find(PRECOMPILED_SYMBOL(fn)))

struct Driver {
  decltype(&::cuInit) cuInit;
  decltype(&::cuDriverGetVersion) cuDriverGetVersion;
  decltype(&::cuGetErrorString) cuGetErrorString;
  decltype(&::cuDeviceGet) cuDeviceGet;
  decltype(&::cuDevicePrimaryCtxRetain) cuDevicePrimaryCtxRetain;
  decltype(&::cuCtxPushCurrent) cuCtxPushCurrent;
  decltype(&::cuCtxPopCurrent) cuCtxPopCurrent;
  decltype(&::cuLibraryLoadData) cuLibraryLoadData;
  decltype(&::cuLibraryGetKernel) cuLibraryGetKernel;
  decltype(&::cuLaunchKernel) cuLaunchKernel;
  void* handle;

  Driver() : handle(dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) {
    if (handle == nullptr) {
      TVM_FFI_THROW(RuntimeError) << "the CUDA driver (libcuda.so.1) cannot be loaded: " << dlerror();
    }
    PRECOMPILED_LOAD(cuInit);
    PRECOMPILED_LOAD(cuDriverGetVersion);
    PRECOMPILED_LOAD(cuGetErrorString);
    PRECOMPILED_LOAD(cuDeviceGet);
    PRECOMPILED_LOAD(cuDevicePrimaryCtxRetain);
    PRECOMPILED_LOAD(cuCtxPushCurrent);
    PRECOMPILED_LOAD(cuCtxPopCurrent);
    PRECOMPILED_LOAD(cuLibraryLoadData);
    PRECOMPILED_LOAD(cuLibraryGetKernel);
    PRECOMPILED_LOAD(cuLaunchKernel);
    Check(cuInit(0), "cuInit");
  }

  void* Find(const char* symbol) {
    void* fn = dlsym(handle, symbol);
    if (fn == nullptr) {
      TVM_FFI_THROW(RuntimeError) << "the CUDA driver has no " << symbol << " (too old?)";
    }
    return fn;
  }

  void Check(CUresult result, const char* call) {
    if (result != CUDA_SUCCESS) {
      const char* text = nullptr;
      if (cuGetErrorString(result, &text) != CUDA_SUCCESS || text == nullptr) text = "unknown error";
      TVM_FFI_THROW(RuntimeError) << call << " failed: " << text << " (" << static_cast<int>(result) << ")";
    }
  }
};

Driver& GetDriver() {
  static Driver driver;  // a constructor that threw is run again by the next call
  return driver;
}
// [driver_api.end]

// The driver's CUDA version, e.g. 13000 for 13.0: what the embedded PTX may need.
int64_t DriverVersion() {
  Driver& d = GetDriver();
  int version = 0;
  d.Check(d.cuDriverGetVersion(&version), "cuDriverGetVersion");
  return version;
}

// [driver_entry.begin]
// The primary context of a device (the one the runtime API and torch use), retained once.
CUcontext PrimaryContext(Driver& d, int device_id) {
  static std::mutex mutex;
  static std::map<int, CUcontext> contexts;
  std::lock_guard<std::mutex> lock(mutex);
  auto found = contexts.find(device_id);
  if (found != contexts.end()) return found->second;
  CUdevice device;
  d.Check(d.cuDeviceGet(&device, device_id), "cuDeviceGet");
  CUcontext context;
  d.Check(d.cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
  return contexts[device_id] = context;
}

void ScaleDriver(ffi::TensorView x, ffi::TensorView y, double factor) {
  precompiled::ScaleArgs a = precompiled::CheckScaleArgs(x, y, factor);
  if (a.n == 0) return;
  Driver& d = GetDriver();
  static CUkernel kernel = [&d] {  // a context-independent load, as the cubin launcher does
    CUlibrary library;
    d.Check(d.cuLibraryLoadData(&library, __tvm_ffi__cubin_scale_driver_fatbin, nullptr, nullptr, 0,
                                nullptr, nullptr, 0), "cuLibraryLoadData");
    CUkernel k;
    d.Check(d.cuLibraryGetKernel(&k, library, "scale_f32"), "cuLibraryGetKernel");
    return k;
  }();
  d.Check(d.cuCtxPushCurrent(PrimaryContext(d, x.device().device_id)), "cuCtxPushCurrent");
  auto stream = static_cast<CUstream>(TVMFFIEnvGetStream(kDLCUDA, x.device().device_id));
  void* args[] = {&a.x, &a.y, &a.factor, &a.n};
  CUresult launched = d.cuLaunchKernel(reinterpret_cast<CUfunction>(kernel), a.blocks, 1, 1,
                                       precompiled::kThreads, 1, 1, 0, stream, args, nullptr);
  CUcontext popped;
  d.cuCtxPopCurrent(&popped);
  d.Check(launched, "cuLaunchKernel");
}
// [driver_entry.end]

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(scale_driver, ScaleDriver);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(driver_version, DriverVersion);
