// Candidate "widerows": a row over several warps, about two packs per thread, with the
// conversions of "remat" (packed.cu).
// Hypothesis: few registers per thread (two packs, no second row) let the most warps reside
// on each multiprocessor, so many small groups, rather than a few deep ones, keep the loads
// in flight; the price is a block-wide sum through shared memory for every row.
#include "lab.cuh"

namespace {

using rmsnorm_lab::LaunchWidth;

struct WideRows {
  template <typename T>
  static void Run(const rmsnorm_lab::Rows<T>& r) {
    if (r.packs() <= 2 * 32) return LaunchWidth<T, 32, 1, true, false, false, true>(r, false);
    if (r.packs() <= 2 * 64) return LaunchWidth<T, 64, 1, true, false, false, true>(r, false);
    if (r.packs() <= 2 * 128) return LaunchWidth<T, 128, 1, true, false, false, true>(r, false);
    return LaunchWidth<T, rmsnorm_lab::kThreads, 1, true, false, false, true>(r, false);
  }
};

void RMSNormLabWideRows(tvm::ffi::TensorView x, tvm::ffi::TensorView w, tvm::ffi::TensorView y, double eps) {
  rmsnorm_lab::Entry<WideRows>(x, w, y, eps);
}

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(rms_norm_lab_widerows, RMSNormLabWideRows);
