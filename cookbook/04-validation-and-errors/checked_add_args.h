// The argument checks of checked_add_cpu and checked_add_cuda, in one place.
#ifndef COOKBOOK_04_CHECKED_ADD_ARGS_H_
#define COOKBOOK_04_CHECKED_ADD_ARGS_H_

#include <ffi_cookbook/check.h>
#include <ffi_cookbook/dtype.h>
#include <tvm/ffi/container/tensor.h>

#include <utility>

// [checked_add_args.begin]
// out = a + b needs: `a` a contiguous 2-d float32 tensor on `device`, and `b`
// and `out` shaped, typed and placed like `a`. Each check raises a Python
// exception naming the argument; none of them touches the data.
inline void CheckAddArgs(const tvm::ffi::TensorView& a, const tvm::ffi::TensorView& b,
                         const tvm::ffi::TensorView& out, DLDeviceType device) {
  ffi_cookbook::CheckDevice(a, "a", device);
  ffi_cookbook::CheckDtype(a, "a", ffi_cookbook::kFloat32);
  ffi_cookbook::CheckNdim(a, "a", 2);
  ffi_cookbook::CheckContiguous(a, "a");
  for (auto [t, name] : {std::pair{b, "b"}, std::pair{out, "out"}}) {
    ffi_cookbook::CheckSameDevice(a, "a", t, name);
    ffi_cookbook::CheckSameDtype(a, "a", t, name);
    ffi_cookbook::CheckSameShape(a, "a", t, name);
    ffi_cookbook::CheckContiguous(t, name);
  }
}
// [checked_add_args.end]

#endif  // COOKBOOK_04_CHECKED_ADD_ARGS_H_
