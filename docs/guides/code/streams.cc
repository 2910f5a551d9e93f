// Read and set the per-device stream table from C++. Compiled without CUDA:
// the table stores opaque handles, so it can be inspected on any machine.
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/ffi/function.h>

#include <cstdint>

namespace {

namespace ffi = tvm::ffi;

// [current_stream_entry.begin]
// The handle the caller published for (device_type, device_id); 0 if none.
int64_t CurrentStream(int32_t device_type, int32_t device_id) {
  TVMFFIStreamHandle stream = TVMFFIEnvGetStream(device_type, device_id);
  return reinterpret_cast<int64_t>(stream);
}
// [current_stream_entry.end]

// [stream_of_entry.begin]
// What a CUDA kernel does first: look up the stream of its input's device.
int64_t StreamOf(ffi::TensorView x) {
  DLDevice device = x.device();
  return reinterpret_cast<int64_t>(TVMFFIEnvGetStream(device.device_type, device.device_id));
}
// [stream_of_entry.end]

// [set_stream_entry.begin]
// Publish `handle`, read it back, restore the previous handle, read again.
ffi::Array<int64_t> SetStreamAndRestore(int32_t device_type, int32_t device_id, int64_t handle) {
  // The table grows to the largest (device_type, device_id) set: refuse values no device has.
  TVM_FFI_CHECK(device_type >= kDLCPU && device_type < 128, ValueError)
      << "argument 'device_type': expected a DLPack device type (1 to 127), got " << device_type;
  TVM_FFI_CHECK(device_id >= 0 && device_id < 1024, ValueError)
      << "argument 'device_id': expected 0 to 1023, got " << device_id;
  TVMFFIStreamHandle previous = nullptr;
  TVM_FFI_CHECK_SAFE_CALL(TVMFFIEnvSetStream(
      device_type, device_id, reinterpret_cast<TVMFFIStreamHandle>(handle), &previous));
  int64_t inside = CurrentStream(device_type, device_id);
  TVM_FFI_CHECK_SAFE_CALL(TVMFFIEnvSetStream(device_type, device_id, previous, nullptr));
  return {inside, CurrentStream(device_type, device_id)};
}
// [set_stream_entry.end]

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(guide_current_stream, CurrentStream);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(guide_stream_of, StreamOf);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(guide_set_stream_and_restore, SetStreamAndRestore);
