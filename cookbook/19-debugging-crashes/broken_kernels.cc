// Two CPU kernels with bugs planted on purpose, for recipe 19 to find: an
// off-by-one write past the end of a tensor, and a gather that trusts its
// indices. Built only with -DCRASH_DEMOS=ON, into libcrash_demos.so, a library
// that no default build produces and nothing loads unless asked to.
#include <ffi_cookbook/check.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/function.h>

#include <cstdint>

namespace {

namespace ffi = tvm::ffi;

constexpr DLDataType kF32{kDLFloat, 32, 1};

// [exclusive_scan_off_by_one.begin]
// Exclusive prefix sum: out[0] = 0, out[i] = x[0] + ... + x[i-1].
void ExclusiveScanOffByOne(ffi::TensorView x, ffi::TensorView out) {
  ffi_cookbook::CheckElementwise(x, "x", out, "out", kDLCPU);
  ffi_cookbook::CheckDtype(x, "x", kF32);
  const float* in = static_cast<const float*>(x.data_ptr());
  float* o = static_cast<float*>(out.data_ptr());
  int64_t n = x.numel();
  if (n == 0) return;
  o[0] = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    o[i + 1] = o[i] + in[i];  // BUG: the last pass writes o[n], one float past the end
  }
}
// [exclusive_scan_off_by_one.end]

// [gather_unchecked.begin]
// out[i] = x[index[i]]: the shapes and dtypes are checked, the index values are not.
void GatherUnchecked(ffi::TensorView x, ffi::TensorView index, ffi::TensorView out) {
  ffi_cookbook::CheckDtype(x, "x", kF32);
  ffi_cookbook::CheckDtype(index, "index", DLDataType{kDLInt, 64, 1});
  ffi_cookbook::CheckDtype(out, "out", kF32);
  ffi_cookbook::CheckSameShape(index, "index", out, "out");
  const float* xs = static_cast<const float*>(x.data_ptr());
  const int64_t* idx = static_cast<const int64_t*>(index.data_ptr());
  float* o = static_cast<float*>(out.data_ptr());
  for (int64_t i = 0; i < index.numel(); ++i) {
    o[i] = xs[idx[i]];  // BUG: an index outside x reads whatever lies there, or faults
  }
}
// [gather_unchecked.end]

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(exclusive_scan_off_by_one, ExclusiveScanOffByOne);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(gather_unchecked, GatherUnchecked);
