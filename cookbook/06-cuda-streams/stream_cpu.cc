// The stream a kernel would launch on, read from the host side: no CUDA needed.
//
// tvm_ffi keeps one "current stream" per (device type, device id) in
// thread-local state. Python sets it (use_raw_stream, use_torch_stream, or a
// torch CUDA tensor among a call's arguments) and kernels read it back with
// TVMFFIEnvGetStream. This file reads it without touching a GPU, so a CPU-only
// machine can show what a CUDA kernel would see.
#include <tvm/ffi/device.h>  // lets DLDevice cross the FFI as an argument
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/ffi/function.h>

#include <cstdint>

namespace {

// [env_stream_cpu_entry.begin]
int64_t EnvStream(DLDevice device) {
  TVMFFIStreamHandle stream = TVMFFIEnvGetStream(device.device_type, device.device_id);
  // A handle is an opaque pointer; Python sees it as an integer (0 = default stream).
  return static_cast<int64_t>(reinterpret_cast<intptr_t>(stream));
}
// [env_stream_cpu_entry.end]

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(env_stream_cpu, EnvStream);
