// A stateful kernel as a tvm_ffi object: running mean and variance of feature
// columns over a stream of batches, with the buffers it needs owned by the object.
//
// Registered types and global functions are process-wide names, so this file is
// deliberately not named *_cpu.cc: the cookbook's runtime library does not
// compile it, and a process that loads both libraries cannot abort on a
// second registration of the same type (see notebook.md).
#include <ffi_cookbook/check.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/object.h>
#include <tvm/ffi/reflection/registry.h>

#include <atomic>
#include <vector>

namespace {

namespace ffi = tvm::ffi;

std::atomic<int64_t> live_objects{0};  // made visible to Python by a global function

// [running_stats_object.begin]
class RunningStatsObj : public ffi::Object {
 public:
  int64_t features;
  int64_t count = 0;

  explicit RunningStatsObj(int64_t features) : features(features) {
    if (features <= 0 || features > (int64_t{1} << 24)) {
      TVM_FFI_THROW(ValueError) << "argument 'features': expected 1 to 2^24, got " << features;
    }
    mean_.assign(features, 0.0);  // the workspace: allocated once, reused by every update
    m2_.assign(features, 0.0);
    batch_mean_.assign(features, 0.0);
    ++live_objects;
  }
  ~RunningStatsObj() { --live_objects; }

  void Update(ffi::TensorView x);
  void Mean(ffi::TensorView out) const { Write(out, 1, 0); }
  void Variance(ffi::TensorView out) const { Write(out, count > 0 ? count : 1, 1); }

  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("cookbook.RunningStats", RunningStatsObj, ffi::Object);

 private:
  void Write(ffi::TensorView out, int64_t divisor, int which) const;
  std::vector<double> mean_, m2_, batch_mean_;
};
// [running_stats_object.end]

// [running_stats_update.begin]
// x: [batch, features] float32. Chan et al.'s pairwise update merges the batch's
// mean and sum of squared deviations into the running ones.
void RunningStatsObj::Update(ffi::TensorView x) {
  ffi_cookbook::CheckDevice(x, "x", kDLCPU);
  ffi_cookbook::CheckDtype(x, "x", DLDataType{kDLFloat, 32, 1});
  ffi_cookbook::CheckNdim(x, "x", 2);
  if (x.size(1) != features) {
    TVM_FFI_THROW(ValueError) << "argument 'x': expected " << features << " features, got "
                              << x.size(1);
  }
  ffi_cookbook::CheckContiguous(x, "x");
  const int64_t batch = x.size(0);
  if (batch == 0) return;
  const float* data = static_cast<const float*>(x.data_ptr());
  const double n_old = static_cast<double>(count), n = n_old + batch;
  for (int64_t f = 0; f < features; ++f) {
    double sum = 0, squares = 0;
    for (int64_t b = 0; b < batch; ++b) sum += data[b * features + f];
    batch_mean_[f] = sum / batch;
    for (int64_t b = 0; b < batch; ++b) {
      const double d = data[b * features + f] - batch_mean_[f];
      squares += d * d;
    }
    const double delta = batch_mean_[f] - mean_[f];
    mean_[f] += delta * batch / n;
    m2_[f] += squares + delta * delta * n_old * batch / n;
  }
  count += batch;
}
// [running_stats_update.end]

void RunningStatsObj::Write(ffi::TensorView out, int64_t divisor, int which) const {
  ffi_cookbook::CheckDevice(out, "out", kDLCPU);
  ffi_cookbook::CheckDtype(out, "out", DLDataType{kDLFloat, 32, 1});
  ffi_cookbook::CheckNdim(out, "out", 1);
  if (out.size(0) != features) {
    TVM_FFI_THROW(ValueError) << "argument 'out': expected " << features << " elements, got "
                              << out.size(0);
  }
  ffi_cookbook::CheckContiguous(out, "out");
  const std::vector<double>& source = which == 0 ? mean_ : m2_;
  float* dst = static_cast<float*>(out.data_ptr());
  for (int64_t f = 0; f < features; ++f) dst[f] = static_cast<float>(source[f] / divisor);
}

}  // namespace

// [running_stats_registration.begin]
TVM_FFI_STATIC_INIT_BLOCK() {
  namespace refl = tvm::ffi::reflection;
  refl::ObjectDef<RunningStatsObj>()
      .def(refl::init<int64_t>())
      .def_ro("features", &RunningStatsObj::features)
      .def_ro("count", &RunningStatsObj::count)
      .def("update", &RunningStatsObj::Update, "Add a [batch, features] float32 batch")
      .def("mean", &RunningStatsObj::Mean, "Write the running mean into out")
      .def("variance", &RunningStatsObj::Variance, "Write the population variance into out");
  refl::GlobalDef().def("cookbook.running_stats_live_count", []() -> int64_t { return live_objects; });
}
// [running_stats_registration.end]
