// The same functions as a PyTorch extension: pybind11 bindings taking at::Tensor
// (imported as a Python module) and TORCH_LIBRARY ops (called via torch.ops).
// Built by torch.utils.cpp_extension.load, not by CMake.
#include <torch/extension.h>

namespace {

using at::Tensor;

// [torch_noops.begin]
void Noop1(const Tensor&) {}
void Noop3(const Tensor&, const Tensor&, const Tensor&) {}
void Noop8(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
           const Tensor&, const Tensor&, const Tensor&) {}
// [torch_noops.end]

void Add(const Tensor& a, const Tensor& b, Tensor& out) {
  TORCH_CHECK(a.dtype() == at::kFloat && b.dtype() == at::kFloat && out.dtype() == at::kFloat,
              "add: expected float32 tensors");
  TORCH_CHECK(a.is_contiguous() && b.is_contiguous() && out.is_contiguous(),
              "add: expected contiguous tensors");
  TORCH_CHECK(a.numel() == b.numel() && a.numel() == out.numel(), "add: expected equal sizes");
  const float* x = a.data_ptr<float>();
  const float* y = b.data_ptr<float>();
  float* z = out.data_ptr<float>();
  const int64_t n = a.numel();  // read once, so the loop can vectorize
  for (int64_t i = 0; i < n; ++i) z[i] = x[i] + y[i];
}

}  // namespace

// [torch_bindings.begin]
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("noop1", &Noop1);
  m.def("noop3", &Noop3);
  m.def("noop8", &Noop8);
  m.def("add", &Add);
}

TORCH_LIBRARY(cookbook_overhead, m) {
  m.def("noop1(Tensor a) -> ()", &Noop1);
  m.def("noop3(Tensor a, Tensor b, Tensor c) -> ()", &Noop3);
  m.def("noop8(Tensor a, Tensor b, Tensor c, Tensor d, Tensor e, Tensor f, Tensor g, Tensor h) -> ()",
        &Noop8);
  m.def("add(Tensor a, Tensor b, Tensor(a!) out) -> ()", &Add);
}
// [torch_bindings.end]
