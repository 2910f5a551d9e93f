// y = a * x + b on the CPU, twice: over views of any strides, and over contiguous tensors only.
#include <ffi_cookbook/check.h>
#include <ffi_cookbook/dtype.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/function.h>

#include <cstdint>

#include "strided_views.h"

namespace {

namespace ffi = tvm::ffi;
using strided_views::kMaxRank;
using strided_views::Layout;

// [strided_axpb_cpu_walk.begin]
// The last dimension is a loop with its own strides; the ones before it count like an
// odometer: step index[d] and both offsets by one stride, and where index[d] reaches
// shape[d], reset it (and the offsets) and carry into dimension d - 1.
void StridedWalk(const float* x, float* y, float a, float b, const Layout& l) {
  if (l.rank == 0) {  // a scalar: one element, no strides
    *y = a * *x + b;
    return;
  }
  const int last = l.rank - 1;
  const int64_t n = l.shape[last], sx = l.x_strides[last], sy = l.y_strides[last];
  int64_t index[kMaxRank] = {}, ox = 0, oy = 0;  // offsets in elements, never pointers out of range
  for (int64_t row = 0; row < l.numel / n; ++row) {
    for (int64_t i = 0; i < n; ++i) y[oy + i * sy] = a * x[ox + i * sx] + b;
    for (int d = last - 1; d >= 0; --d) {
      ox += l.x_strides[d];
      oy += l.y_strides[d];
      if (++index[d] < l.shape[d]) break;
      ox -= l.shape[d] * l.x_strides[d];
      oy -= l.shape[d] * l.y_strides[d];
      index[d] = 0;
    }
  }
}
// [strided_axpb_cpu_walk.end]

// [strided_axpb_cpu_entry.begin]
void StridedAxpbCPU(ffi::TensorView x, ffi::TensorView y, float a, float b) {
  // 1. Validate: x and y alike, at most 6-d, strides in range, y neither aliased nor on x.
  const Layout layout = strided_views::CheckStrided(x, y, kDLCPU);
  if (layout.numel == 0) return;
  // 2. The first elements: DLPack puts them byte_offset bytes past the data pointer.
  const auto* in = reinterpret_cast<const float*>(static_cast<const char*>(x.data_ptr()) + x.byte_offset());
  auto* out = reinterpret_cast<float*>(static_cast<char*>(y.data_ptr()) + y.byte_offset());
  StridedWalk(in, out, a, b, layout);
}
// [strided_axpb_cpu_entry.end]

// [contiguous_axpb_cpu.begin]
void ContiguousAxpbCPU(ffi::TensorView x, ffi::TensorView y, float a, float b) {
  ffi_cookbook::CheckElementwise(x, "x", y, "y", kDLCPU);  // contiguous, offset 0, aligned
  ffi_cookbook::CheckDtype(x, "x", ffi_cookbook::kFloat32);
  const float* in = static_cast<const float*>(x.data_ptr());
  float* out = static_cast<float*>(y.data_ptr());
  for (int64_t i = 0; i < x.numel(); ++i) out[i] = a * in[i] + b;
}
// [contiguous_axpb_cpu.end]

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(strided_axpb_cpu, StridedAxpbCPU);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(contiguous_axpb_cpu, ContiguousAxpbCPU);
