// Candidates "rows2" and "rows4": each group of threads loads two (four) rows before it
// reduces any, with the conversions of "remat" (packed.cu).
// Hypothesis: a 16-bit row of 1024 values is 4 packs per thread of a warp, 64 bytes in
// flight, half of what a float32 row gives each thread (the recipe's float32 reaches 0.95 of
// the copy, its 16-bit paths 0.72 to 0.91 on the H200). Two or four rows at once put 128 or
// 256 bytes per thread in flight, so fewer resident warps keep the memory busy.
#include "lab.cuh"

namespace {

using rmsnorm_lab::LaunchWidth;
using rmsnorm_lab::Rows;

struct Rows2 {
  template <typename T>
  static void Run(const Rows<T>& r) {
    rmsnorm_lab::LaunchWarpOrBlock<T, /*kRows=*/2, /*kPacked=*/true, /*kStream=*/false, /*kCacheW=*/false, /*kRemat=*/true>(r, false);
  }
};

// Four rows where each thread keeps at most 4 packs of a row, else two.
struct Rows4 {
  template <typename T>
  static void Run(const Rows<T>& r) {
    if (r.packs() <= 32 * 4) return LaunchWidth<T, 32, 4, true, false, false, true>(r, false);
    if (r.packs() <= rmsnorm_lab::kThreads * 4) return LaunchWidth<T, rmsnorm_lab::kThreads, 4, true, false, false, true>(r, false);
    return LaunchWidth<T, rmsnorm_lab::kThreads, 2, true, false, false, true>(r, false);
  }
};

void RMSNormLabRows2(tvm::ffi::TensorView x, tvm::ffi::TensorView w, tvm::ffi::TensorView y, double eps) {
  rmsnorm_lab::Entry<Rows2>(x, w, y, eps);
}

void RMSNormLabRows4(tvm::ffi::TensorView x, tvm::ffi::TensorView w, tvm::ffi::TensorView y, double eps) {
  rmsnorm_lab::Entry<Rows4>(x, w, y, eps);
}

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(rms_norm_lab_rows2, RMSNormLabRows2);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(rms_norm_lab_rows4, RMSNormLabRows4);
