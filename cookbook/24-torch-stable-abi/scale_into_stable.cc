// scale_into as a PyTorch op registered with STABLE_TORCH_LIBRARY: out = alpha * x for
// contiguous float32 CPU tensors. Written against LibTorch's stable ABI only: torch's
// C shim and header-only types, for the oldest torch named by TORCH_TARGET_VERSION
// (set in CMakeLists.txt).
#include <utility>
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/tensor.h>
#include <torch/headeronly/core/ScalarType.h>
#include <torch/headeronly/util/Exception.h>

namespace {

using torch::stable::Tensor;

// [scale_stable_entry.begin]
void ScaleInto(Tensor x, Tensor out, double alpha) {
  for (const auto& [t, name] : {std::pair{&x, "x"}, std::pair{&out, "out"}}) {
    STD_TORCH_CHECK(t->is_cpu(), "argument '", name, "': expected a CPU tensor");
    STD_TORCH_CHECK(t->scalar_type() == torch::headeronly::ScalarType::Float,
                    "argument '", name, "': expected dtype float32");
    STD_TORCH_CHECK(t->is_contiguous(), "argument '", name, "': expected a contiguous tensor");
  }
  bool same_shape = x.dim() == out.dim();
  for (int64_t i = 0; same_shape && i < x.dim(); ++i) same_shape = x.size(i) == out.size(i);
  STD_TORCH_CHECK(same_shape, "argument 'out': expected the shape of 'x'");
  const float* in = x.const_data_ptr<float>();
  float* y = out.mutable_data_ptr<float>();
  for (int64_t i = 0; i < x.numel(); ++i) y[i] = static_cast<float>(alpha) * in[i];
}
// [scale_stable_entry.end]

}  // namespace

// [scale_stable_register.begin]
STABLE_TORCH_LIBRARY(cookbook_stable, m) {
  m.def("scale_into(Tensor x, Tensor(a!) out, float alpha) -> ()");
}
STABLE_TORCH_LIBRARY_IMPL(cookbook_stable, CPU, m) { m.impl("scale_into", TORCH_BOX(&ScaleInto)); }
// [scale_stable_register.end]
