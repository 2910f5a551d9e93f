// Candidate "packed": recipe 10's kernel with 16-bit values converted in pairs.
// Hypothesis: the 16-bit path spends its issue slots and registers on one conversion per
// value (bfloat16: a shift or a mask per value in, one F2FP per value out; ptxas gives the
// recipe's bfloat16 warp kernel 76 registers against 48 for float16). __nv_bfloat162 /
// __half2 conversions halve the F2FP count and keep pairs in one register; the arithmetic
// and its rounding stay the recipe's, so the result is the same bit for bit.
// Candidate "remat": "packed", and each value converted to float again for the scaling.
// Hypothesis: the compiler keeps the floats of the sum's conversions alive until the scaling
// (8 registers per pack where the pack itself takes 4); hiding the packs' values between the
// two (an empty asm) makes it keep the packs and convert twice. ptxas: bfloat16 rows of 1024
// on a warp take 46 registers instead of 64 ("packed") and 76 (the recipe).
#include "lab.cuh"

namespace {

struct Packed {
  template <typename T>
  static void Run(const rmsnorm_lab::Rows<T>& r) {
    rmsnorm_lab::LaunchWarpOrBlock<T, /*kRows=*/1, /*kPacked=*/true, /*kStream=*/false, /*kCacheW=*/false>(r, false);
  }
};

struct Remat {
  template <typename T>
  static void Run(const rmsnorm_lab::Rows<T>& r) {
    rmsnorm_lab::LaunchWarpOrBlock<T, 1, true, false, false, /*kRemat=*/true>(r, false);
  }
};

void RMSNormLabRemat(tvm::ffi::TensorView x, tvm::ffi::TensorView w, tvm::ffi::TensorView y, double eps) {
  rmsnorm_lab::Entry<Remat>(x, w, y, eps);
}

void RMSNormLabPacked(tvm::ffi::TensorView x, tvm::ffi::TensorView w, tvm::ffi::TensorView y, double eps) {
  rmsnorm_lab::Entry<Packed>(x, w, y, eps);
}

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(rms_norm_lab_packed, RMSNormLabPacked);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(rms_norm_lab_remat, RMSNormLabRemat);
