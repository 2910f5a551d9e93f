// Candidate "persistent": as "rows2", with a grid of as many blocks as the device holds at
// once (multiprocessors times resident blocks of this kernel) looping over the rows, and each
// thread's packs of the weight loaded once, before that loop, and kept in registers.
// Hypothesis: no block ends and no new one starts while the memory streams, and the weight's
// loads and conversions leave the loop; the price is a grid that cannot grow past the device.
#include "lab.cuh"

namespace {

struct Persistent {
  template <typename T>
  static void Run(const rmsnorm_lab::Rows<T>& r) {
    rmsnorm_lab::LaunchWarpOrBlock<T, /*kRows=*/2, /*kPacked=*/true, /*kStream=*/false, /*kCacheW=*/true, /*kRemat=*/true>(r, true);
  }
};

void RMSNormLabPersistent(tvm::ffi::TensorView x, tvm::ffi::TensorView w, tvm::ffi::TensorView y, double eps) {
  rmsnorm_lab::Entry<Persistent>(x, w, y, eps);
}

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(rms_norm_lab_persistent, RMSNormLabPersistent);
