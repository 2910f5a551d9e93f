// gather on the CPU: out[i] = x[index[i]], every index checked first. The fixed
// version of broken_kernels.cc's gather_unchecked; it is what the library ships.
#include <ffi_cookbook/check.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>

#include <cstdint>

namespace {

namespace ffi = tvm::ffi;

// [gather_cpu_entry.begin]
void GatherCPU(ffi::TensorView x, ffi::TensorView index, ffi::TensorView out) {
  constexpr DLDataType f32{kDLFloat, 32, 1}, i64{kDLInt, 64, 1};
  ffi_cookbook::CheckDevice(x, "x", kDLCPU);
  ffi_cookbook::CheckNdim(x, "x", 1);
  ffi_cookbook::CheckDtype(x, "x", f32);
  ffi_cookbook::CheckContiguous(x, "x");
  ffi_cookbook::CheckDevice(index, "index", kDLCPU);
  ffi_cookbook::CheckNdim(index, "index", 1);
  ffi_cookbook::CheckDtype(index, "index", i64);
  ffi_cookbook::CheckContiguous(index, "index");
  ffi_cookbook::CheckDevice(out, "out", kDLCPU);
  ffi_cookbook::CheckDtype(out, "out", f32);
  ffi_cookbook::CheckSameShape(index, "index", out, "out");
  ffi_cookbook::CheckContiguous(out, "out");
  const float* xs = static_cast<const float*>(x.data_ptr());
  const int64_t* idx = static_cast<const int64_t*>(index.data_ptr());
  int64_t n = x.size(0), m = index.size(0);
  for (int64_t i = 0; i < m; ++i) {  // check everything before writing anything
    if (idx[i] < 0 || idx[i] >= n) {
      TVM_FFI_THROW(IndexError) << "argument 'index': index[" << i << "] = " << idx[i]
                                << " is out of range for 'x' of " << n << " elements";
    }
  }
  float* o = static_cast<float*>(out.data_ptr());
  for (int64_t i = 0; i < m; ++i) o[i] = xs[idx[i]];
}
// [gather_cpu_entry.end]

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(gather_cpu, GatherCPU);
