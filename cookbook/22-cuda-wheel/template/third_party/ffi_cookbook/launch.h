/*!
 * \file ffi_cookbook/launch.h
 * \brief Grid sizing and launch-error checks for elementwise CUDA kernels.
 */
#ifndef FFI_COOKBOOK_LAUNCH_H_
#define FFI_COOKBOOK_LAUNCH_H_

#include <cuda_runtime.h>
#include <tvm/ffi/extra/cuda/base.h>

#include <cstdint>

namespace ffi_cookbook {

/*!
 * \defgroup launch CUDA launches
 * \{
 */

/*! \brief Threads per block used by the cookbook's elementwise kernels. */
constexpr int kThreadsPerBlock = 256;

/*!
 * \brief Number of blocks covering `n` elements, one thread each.
 * \param n The element count (may be 0).
 * \return At least one block, so a launch with n == 0 stays valid.
 */
inline unsigned int BlocksFor(int64_t n) {
  int64_t blocks = (n + kThreadsPerBlock - 1) / kThreadsPerBlock;
  return static_cast<unsigned int>(blocks > 0 ? blocks : 1);
}

/*!
 * \brief Raise a RuntimeError if the last kernel launch failed.
 *
 * \code{.cu}
 * cudaStream_t stream = ffi_cookbook::CurrentStream(x.device());
 * MyKernel<<<ffi_cookbook::BlocksFor(n), ffi_cookbook::kThreadsPerBlock, 0, stream>>>(data, n);
 * ffi_cookbook::CheckLaunch();
 * \endcode
 */
inline void CheckLaunch() { TVM_FFI_CHECK_CUDA_ERROR(cudaGetLastError()); }

/*! \} */

}  // namespace ffi_cookbook

#endif  // FFI_COOKBOOK_LAUNCH_H_
