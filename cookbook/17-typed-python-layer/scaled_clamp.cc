// out = clamp(x * scale, low, high) for float32, registered as the global function
// cookbook_typed.scaled_clamp, so tvm-ffi-stubgen can read its signature from the
// registry and write a typed stub for it (clamp_ffi_api.py).
//
// Registered names are process-wide (recipe 16), so this file is not named
// *_cpu.cc: the cookbook's runtime library would register the same name again.
#include <ffi_cookbook/check.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/optional.h>
#include <tvm/ffi/reflection/registry.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace {

namespace ffi = tvm::ffi;

// [scaled_clamp_entry.begin]
// low and high are optional: None leaves that side unbounded.
void ScaledClamp(ffi::TensorView x, ffi::TensorView out, double scale, ffi::Optional<double> low,
                 ffi::Optional<double> high) {
  ffi_cookbook::CheckElementwise(x, "x", out, "out", kDLCPU);
  ffi_cookbook::CheckDtype(x, "x", DLDataType{kDLFloat, 32, 1});
  const float lo = low.has_value() ? static_cast<float>(*low) : -std::numeric_limits<float>::infinity();
  const float hi = high.has_value() ? static_cast<float>(*high) : std::numeric_limits<float>::infinity();
  if (std::isnan(lo) || std::isnan(hi) || lo > hi) {
    TVM_FFI_THROW(ValueError) << "arguments 'low', 'high': expected low <= high, got " << lo
                              << " and " << hi;
  }
  const float s = static_cast<float>(scale);
  const float* src = static_cast<const float*>(x.data_ptr());
  float* dst = static_cast<float*>(out.data_ptr());
  for (int64_t i = 0, n = x.numel(); i < n; ++i) dst[i] = std::min(std::max(src[i] * s, lo), hi);
}
// [scaled_clamp_entry.end]

}  // namespace

// [scaled_clamp_registration.begin]
TVM_FFI_STATIC_INIT_BLOCK() {
  tvm::ffi::reflection::GlobalDef().def("cookbook_typed.scaled_clamp", ScaledClamp,
                                        "out = clamp(x * scale, low, high); None leaves a side open");
}
// [scaled_clamp_registration.end]
