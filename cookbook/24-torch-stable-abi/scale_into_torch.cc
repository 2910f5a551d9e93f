// scale_into as a PyTorch op registered with TORCH_LIBRARY: out = alpha * x for
// contiguous float32 CPU tensors. Written against torch's full C++ API (ATen, c10).
#include <utility>
#include <ATen/ATen.h>
#include <torch/library.h>

namespace {

// [scale_torch_entry.begin]
void ScaleInto(const at::Tensor& x, const at::Tensor& out, double alpha) {
  for (const auto& [t, name] : {std::pair{&x, "x"}, std::pair{&out, "out"}}) {
    TORCH_CHECK_VALUE(t->is_cpu(), "argument '", name, "': expected a CPU tensor");
    TORCH_CHECK_TYPE(t->scalar_type() == at::kFloat, "argument '", name, "': expected dtype float32");
    TORCH_CHECK_VALUE(t->is_contiguous(), "argument '", name, "': expected a contiguous tensor");
  }
  TORCH_CHECK_VALUE(out.sizes() == x.sizes(), "argument 'out': expected the shape of 'x'");
  const float* in = x.const_data_ptr<float>();
  float* y = out.mutable_data_ptr<float>();
  for (int64_t i = 0; i < x.numel(); ++i) y[i] = static_cast<float>(alpha) * in[i];
}
// [scale_torch_entry.end]

}  // namespace

// [scale_torch_register.begin]
TORCH_LIBRARY(cookbook_torch, m) { m.def("scale_into(Tensor x, Tensor(a!) out, float alpha) -> ()"); }
TORCH_LIBRARY_IMPL(cookbook_torch, CPU, m) { m.impl("scale_into", &ScaleInto); }
// [scale_torch_register.end]
