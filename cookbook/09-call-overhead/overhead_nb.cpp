// The same functions as a nanobind module taking nb::ndarray (DLPack) arguments.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstdint>

namespace nb = nanobind;

namespace {

using Array = nb::ndarray<>;
using Floats = nb::ndarray<float, nb::c_contig, nb::device::cpu>;

// [nanobind_noops.begin]
void Noop1(Array) {}
void Noop3(Array, Array, Array) {}
void Noop8(Array, Array, Array, Array, Array, Array, Array, Array) {}
// [nanobind_noops.end]

void Add(Floats a, Floats b, Floats out) {
  if (a.size() != b.size() || a.size() != out.size()) throw nb::value_error("add: expected equal sizes");
  const float* x = a.data();
  const float* y = b.data();
  float* z = out.data();
  const size_t n = a.size();  // read once, so the loop can vectorize
  for (size_t i = 0; i < n; ++i) z[i] = x[i] + y[i];
}

}  // namespace

// [nanobind_module.begin]
NB_MODULE(overhead_nb, m) {
  m.def("noop1", &Noop1);
  m.def("noop3", &Noop3);
  m.def("noop8", &Noop8);
  m.def("add", &Add);
}
// [nanobind_module.end]
