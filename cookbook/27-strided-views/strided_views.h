// The checks a kernel that walks any strides needs, shared by the CPU and CUDA entries,
// and the layout (shape and strides of x and y) both walk.
#ifndef STRIDED_VIEWS_H_
#define STRIDED_VIEWS_H_

#include <ffi_cookbook/check.h>
#include <ffi_cookbook/dtype.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>

#include <algorithm>
#include <cstdint>

namespace strided_views {

namespace ffi = tvm::ffi;

// [strided_layout.begin]
constexpr int kMaxRank = 6;  // a fixed-size struct passes to a CUDA kernel by value
// Shape and strides in elements; x and y point at their first elements (byte_offset added).
struct Layout {
  int32_t rank;
  int64_t numel;
  int64_t shape[kMaxRank], x_strides[kMaxRank], y_strides[kMaxRank];
};
// [strided_layout.end]

// [strided_reach.begin]
// The rule for strides: along each dimension a view may reach at most 2^46 elements (2^48
// bytes of float32). No process holds that much memory (x86-64 gives it 2^47 bytes), so a
// view reaching further has strides its producer made up; within the bound no sum of
// offsets over 6 dimensions can overflow int64. A producer allocates what its strides reach
// (DLPack's contract), and the kernels read and write exactly those elements, no others.
constexpr int64_t kMaxReach = int64_t{1} << 46;
struct Span { int64_t low, high; };  // lowest and highest element offset from the first element

inline Span Reach(const ffi::TensorView& t, const char* name) {
  Span span{0, 0};
  for (int32_t d = 0; d < t.ndim(); ++d) {
    const int64_t last = t.size(d) - 1, stride = t.strides()[d];  // sizes are >= 1 here
    // A division, not last * stride: that product overflows for a made-up stride.
    if (stride < -kMaxReach || stride > kMaxReach ||
        (stride != 0 && last > kMaxReach / std::abs(stride))) {
      TVM_FFI_THROW(ValueError) << "argument '" << name << "': strides "
                                << ffi_cookbook::StridesText(t) << " for shape "
                                << ffi_cookbook::ShapeText(t) << " reach beyond 2^46 elements";
    }
    (stride < 0 ? span.low : span.high) += last * stride;
  }
  return span;
}
// [strided_reach.end]

// [strided_overlap.begin]
// Two elements of y at one address: which write wins would be undefined. Rule (sufficient,
// simple): sorted by |stride|, each dimension of size > 1 steps past all the smaller ones reach.
inline void CheckNoOverlap(const ffi::TensorView& y, const char* name) {
  int32_t dims[kMaxRank], count = 0;
  for (int32_t d = 0; d < y.ndim(); ++d) {
    if (y.size(d) == 1) continue;  // its stride is never used
    if (y.strides()[d] == 0) {
      TVM_FFI_THROW(ValueError) << "argument '" << name << "': has overlapping elements (a zero stride)";
    }
    dims[count++] = d;
  }
  auto step = [&](int32_t d) { return std::abs(y.strides()[d]); };
  std::sort(dims, dims + count, [&](int32_t a, int32_t b) { return step(a) < step(b); });
  int64_t reach = 0;
  for (int32_t i = 0; i < count; ++i) {
    if (step(dims[i]) <= reach) {
      TVM_FFI_THROW(ValueError) << "argument '" << name << "': has overlapping elements (strides "
                                << ffi_cookbook::StridesText(y) << " for shape "
                                << ffi_cookbook::ShapeText(y) << ")";
    }
    reach += (y.size(dims[i]) - 1) * step(dims[i]);
  }
}

// y may be x itself (the same first element and strides: each element is read, then written
// in its place), or apart from x. Any other overlap is refused: where a write would land on
// an element still to be read depends on the order of the walk.
inline void CheckApart(const ffi::TensorView& x, Span sx, const ffi::TensorView& y, Span sy) {
  const char* px = static_cast<const char*>(x.data_ptr()) + x.byte_offset();
  const char* py = static_cast<const char*>(y.data_ptr()) + y.byte_offset();
  bool same = px == py;
  for (int32_t d = 0; same && d < x.ndim(); ++d) {
    same = x.size(d) == 1 || x.strides()[d] == y.strides()[d];
  }
  const auto first = [](const char* p, Span s) { return reinterpret_cast<uintptr_t>(p) + s.low * 4; };
  const auto end = [](const char* p, Span s) { return reinterpret_cast<uintptr_t>(p) + s.high * 4 + 4; };
  if (!same && first(px, sx) < end(py, sy) && first(py, sy) < end(px, sx)) {
    TVM_FFI_THROW(ValueError) << "argument 'y': overlaps 'x' in memory; pass the same view as "
                                 "both to compute in place, or memory apart from x";
  }
}
// [strided_overlap.end]

inline void CheckAligned(const ffi::TensorView& t, const char* name) {
  const auto address = reinterpret_cast<uintptr_t>(t.data_ptr()) + t.byte_offset();
  if (address % alignof(float) != 0) {
    TVM_FFI_THROW(ValueError) << "argument '" << name << "': expected data aligned to 4 bytes "
                              << "for float32, got an address " << address % 4 << " byte(s) off";
  }
}

// [strided_checks.begin]
inline Layout CheckStrided(const ffi::TensorView& x, const ffi::TensorView& y, DLDeviceType device) {
  ffi_cookbook::CheckDevice(x, "x", device);
  ffi_cookbook::CheckSameDevice(x, "x", y, "y");
  ffi_cookbook::CheckDtype(x, "x", ffi_cookbook::kFloat32);
  ffi_cookbook::CheckSameDtype(x, "x", y, "y");
  ffi_cookbook::CheckSameShape(x, "x", y, "y");
  if (x.ndim() > kMaxRank) {
    TVM_FFI_THROW(ValueError) << "argument 'x': expected at most " << kMaxRank
                              << " dimensions, got " << x.ndim() << " with shape " << ffi_cookbook::ShapeText(x);
  }
  Layout layout{x.ndim(), 0, {}, {}, {}};
  for (int32_t d = 0; d < x.ndim(); ++d) {
    if (x.size(d) == 0) return layout;  // no element: nothing is read, any strides will do
  }
  CheckAligned(x, "x");
  CheckAligned(y, "y");
  const Span sx = Reach(x, "x"), sy = Reach(y, "y");
  CheckNoOverlap(y, "y");  // x may repeat elements (a zero stride broadcasts it)
  CheckApart(x, sx, y, sy);
  layout.numel = 1;  // y's elements are distinct and within its reach: no overflow
  for (int32_t d = 0; d < x.ndim(); ++d) {
    layout.numel *= x.size(d);
    layout.shape[d] = x.size(d);
    layout.x_strides[d] = x.strides()[d];  // tvm_ffi fills strides when DLPack passes none
    layout.y_strides[d] = y.strides()[d];
  }
  return layout;
}
// [strided_checks.end]

}  // namespace strided_views

#endif  // STRIDED_VIEWS_H_
