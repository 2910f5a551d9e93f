// SiLU, y = x * sigmoid(x), written as a PyTorch C++ extension: the code before migration.
// Built with torch.utils.cpp_extension.load (see the notebook); it is not part of the
// cookbook's runtime library, which is why the name does not end in _cpu.cc.
#include <torch/extension.h>

#include <cmath>
#include <sstream>
#include <string>

namespace {

void SiluLoop(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] / (1.0f + std::exp(-x[i]));
}

// [silu_entry.begin]
at::Tensor SiluTorch(const at::Tensor& x) {
  // TORCH_CHECK_VALUE / _TYPE raise ValueError / TypeError in Python.
  TORCH_CHECK_VALUE(x.device().is_cpu(), "argument 'x': expected a tensor on cpu, got ",
                    x.device());
  TORCH_CHECK_TYPE(x.scalar_type() == at::kFloat, "argument 'x': expected dtype float32, got ",
                   x.scalar_type());
  TORCH_CHECK_VALUE(x.is_contiguous(), "argument 'x': expected a contiguous tensor");
  at::Tensor y = torch::empty_like(x);
  SiluLoop(x.data_ptr<float>(), y.data_ptr<float>(), x.numel());
  return y;
}
// [silu_entry.end]

// [silu_describe.begin]
std::string DescribeTorch(const at::Tensor& x) {
  std::ostringstream os;
  os << "ndim=" << x.dim() << " numel=" << x.numel() << " contiguous=" << x.is_contiguous();
  for (int64_t i = 0; i < x.dim(); ++i) os << " size" << i << "=" << x.size(i);
  for (int64_t i = 0; i < x.dim(); ++i) os << " stride" << i << "=" << x.stride(i);
  return os.str();
}
// [silu_describe.end]

}  // namespace

// [silu_binding.begin]
// Two ways to expose it: a Python module through pybind11 ...
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("silu", &SiluTorch, "y = x * sigmoid(x)");
  m.def("describe", &DescribeTorch, "shape queries of x as text");
}
// ... and a dispatcher operator, torch.ops.cookbook_ext.silu.
TORCH_LIBRARY(cookbook_ext, m) { m.def("silu(Tensor x) -> Tensor"); }
TORCH_LIBRARY_IMPL(cookbook_ext, CPU, m) { m.impl("silu", &SiluTorch); }
// [silu_binding.end]
