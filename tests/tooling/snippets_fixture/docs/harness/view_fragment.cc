// Harness for good.md: a TensorView named `view` is in scope.
#include <tvm/ffi/container/tensor.h>

#include <cstdint>

void Fragment(tvm::ffi::TensorView view) {
  /* SNIPPET */
}
