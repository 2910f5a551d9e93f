// Harness for the C++ examples in include/ffi_cookbook's Doxygen comments (the
// API reference shows them). The snippet checker puts each example in place of
// the SNIPPET line, where two tensor views `x` and `y` are in scope.
#include <ffi_cookbook/alloc_cpu.h>
#include <ffi_cookbook/check.h>
#include <ffi_cookbook/dtype.h>
#include <ffi_cookbook/env_alloc.h>
#include <tvm/ffi/container/tensor.h>

#include <cstdint>

namespace {

void Example(tvm::ffi::TensorView x, tvm::ffi::TensorView y) {
  /* SNIPPET */
}

}  // namespace

void (*keep_example)(tvm::ffi::TensorView, tvm::ffi::TensorView) = Example;
