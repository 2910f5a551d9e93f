// Candidate "streaming": as "rows2", with x read by ld.global.cs and y written by
// st.global.cs (__ldcs / __stcs: evict first, data used once).
// Hypothesis: x and y pass through the L2 cache once; marking them so leaves the weight (read
// by every row) in the caches and spares the L2 replacing lines that are never read again.
#include "lab.cuh"

namespace {

struct Streaming {
  template <typename T>
  static void Run(const rmsnorm_lab::Rows<T>& r) {
    rmsnorm_lab::LaunchWarpOrBlock<T, /*kRows=*/2, /*kPacked=*/true, /*kStream=*/true, /*kCacheW=*/false, /*kRemat=*/true>(r, false);
  }
};

void RMSNormLabStreaming(tvm::ffi::TensorView x, tvm::ffi::TensorView w, tvm::ffi::TensorView y, double eps) {
  rmsnorm_lab::Entry<Streaming>(x, w, y, eps);
}

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(rms_norm_lab_streaming, RMSNormLabStreaming);
