// A library whose tensors free their memory with code from the library itself.
// Built as its own small library (not part of the cookbook runtime) so that a
// subprocess can unload it and show what happens to such a tensor afterwards.
#include <ffi_cookbook/alloc_cpu.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/function.h>

#include <cstdint>

namespace {

namespace ffi = tvm::ffi;

// [nd_hazard_ones.begin]
// n float32 ones in memory from CPUAllocator; FreeData runs when the tensor dies.
ffi::Tensor OnesND(int64_t n) {
  ffi::Tensor y = ffi::Tensor::FromNDAlloc(ffi_cookbook::CPUAllocator(), ffi::Shape({n}),
                                           DLDataType{kDLFloat, 32, 1}, DLDevice{kDLCPU, 0});
  float* data = static_cast<float*>(y.data_ptr());
  for (int64_t i = 0; i < n; ++i) data[i] = 1.0f;
  return y;
}
// [nd_hazard_ones.end]

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(nd_hazard_ones, OnesND);
