/*!
 * \file ffi_cookbook/stream.h
 * \brief The CUDA stream a kernel should launch on.
 *
 * Callers publish their current stream per device through
 * `TVMFFIEnvSetStream` (tvm_ffi does it from the current torch stream when a
 * torch CUDA tensor is an argument, or inside `tvm_ffi.use_raw_stream`).
 * Kernels read it back with `TVMFFIEnvGetStream`; a null handle is the legacy
 * default stream.
 */
#ifndef FFI_COOKBOOK_STREAM_H_
#define FFI_COOKBOOK_STREAM_H_

#include <cuda_runtime.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/extra/c_env_api.h>

namespace ffi_cookbook {

/*!
 * \defgroup stream CUDA streams
 * \{
 */

/*!
 * \brief The caller's current stream for a CUDA device.
 *
 * \code{.cu}
 * cudaStream_t stream = ffi_cookbook::CurrentStream(x.device());
 * MyKernel<<<ffi_cookbook::BlocksFor(n), ffi_cookbook::kThreadsPerBlock, 0, stream>>>(data, n);
 * \endcode
 * \param device A CUDA device.
 * \return The stream to launch on (nullptr means the default stream).
 */
inline cudaStream_t CurrentStream(DLDevice device) {
  return static_cast<cudaStream_t>(TVMFFIEnvGetStream(device.device_type, device.device_id));
}

/*! \} */

}  // namespace ffi_cookbook

#endif  // FFI_COOKBOOK_STREAM_H_
