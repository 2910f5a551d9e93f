// A kernel's options as one tvm_ffi object: cookbook.ClampConfig holds scale, low
// and high; scaled_clamp takes it as its third argument. Needs apache-tvm-ffi alone.
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/object.h>
#include <tvm/ffi/optional.h>
#include <tvm/ffi/reflection/registry.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace {

namespace ffi = tvm::ffi;

// [clamp_config_object.begin]
// The object: plain fields with their defaults. A tree node compares and hashes by
// its fields, so two configs made apart with the same values are structurally equal.
class ClampConfigObj : public ffi::Object {
 public:
  double scale = 1.0;
  ffi::Optional<double> low;   // None: no lower bound
  ffi::Optional<double> high;  // None: no upper bound

  static constexpr TVMFFISEqHashKind _type_s_eq_hash_kind = kTVMFFISEqHashKindTreeNode;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("cookbook.ClampConfig", ClampConfigObj, ffi::Object);
};

// The reference a function takes. Not nullable: a call with None is refused.
class ClampConfig : public ffi::ObjectRef {
 public:
  TVM_FFI_DEFINE_OBJECT_REF_METHODS_NOTNULLABLE(ClampConfig, ffi::ObjectRef, ClampConfigObj);
};
// [clamp_config_object.end]

void CheckFloat32Array(const ffi::TensorView& t, const char* name) {
  if (t.device().device_type != kDLCPU) {
    TVM_FFI_THROW(ValueError) << "argument '" << name << "': expected a tensor on cpu";
  }
  DLDataType dtype = t.dtype();
  if (dtype.code != kDLFloat || dtype.bits != 32 || dtype.lanes != 1) {
    TVM_FFI_THROW(TypeError) << "argument '" << name << "': expected dtype float32";
  }
  if (!t.IsContiguous()) {
    TVM_FFI_THROW(ValueError) << "argument '" << name << "': expected a contiguous tensor";
  }
  // The loop reads from data_ptr(); DLPack allows the first element at data + byte_offset.
  if (t.byte_offset() != 0) {
    TVM_FFI_THROW(ValueError) << "argument '" << name << "': expected byte_offset 0";
  }
  if (reinterpret_cast<uintptr_t>(t.data_ptr()) % sizeof(float) != 0) {
    TVM_FFI_THROW(ValueError) << "argument '" << name << "': expected data aligned to 4-byte elements";
  }
}

// [scaled_clamp_entry.begin]
// y = clamp(x * scale, low, high) for float32, the options read from one object.
void ScaledClamp(ffi::TensorView x, ffi::TensorView y, ClampConfig config) {
  CheckFloat32Array(x, "x");
  CheckFloat32Array(y, "y");
  bool same_shape = x.ndim() == y.ndim();
  for (int i = 0; same_shape && i < x.ndim(); ++i) same_shape = x.size(i) == y.size(i);
  if (!same_shape) TVM_FFI_THROW(ValueError) << "argument 'y': expected the shape of 'x'";
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const double low = config->low.value_or(-kInf), high = config->high.value_or(kInf);
  if (std::isnan(config->scale) || std::isnan(low) || std::isnan(high) || low > high) {
    TVM_FFI_THROW(ValueError) << "argument 'config': expected numbers with low <= high, got scale="
                              << config->scale << ", low=" << low << ", high=" << high;
  }
  const float* in = static_cast<const float*>(x.data_ptr());
  float* out = static_cast<float*>(y.data_ptr());
  const float scale = static_cast<float>(config->scale);
  const float lo = static_cast<float>(low), hi = static_cast<float>(high);
  for (int64_t i = 0; i < x.numel(); ++i) out[i] = std::clamp(in[i] * scale, lo, hi);
}
// [scaled_clamp_entry.end]

}  // namespace

// [clamp_config_registration.begin]
// Reflection: field names, defaults and keyword-only, read by Python's dataclass
// (tvm_ffi.dataclasses.c_class) to write __init__, __repr__, __eq__ and __hash__.
TVM_FFI_STATIC_INIT_BLOCK() {
  namespace refl = tvm::ffi::reflection;
  refl::ObjectDef<ClampConfigObj>()
      .def_ro("scale", &ClampConfigObj::scale, refl::DefaultValue(1.0), refl::kw_only(true))
      .def_ro("low", &ClampConfigObj::low, refl::DefaultValue(ffi::Any(nullptr)), refl::kw_only(true))
      .def_ro("high", &ClampConfigObj::high, refl::DefaultValue(ffi::Any(nullptr)), refl::kw_only(true));
}

TVM_FFI_DLL_EXPORT_TYPED_FUNC(scaled_clamp, ScaledClamp);
// [clamp_config_registration.end]
