// What never to do: throw something that is not a std::exception.
// Built as its own small library (not part of the cookbook runtime): calling
// its function ends the process, so only a subprocess ever loads it.
#include <tvm/ffi/function.h>

#include <cstdint>

namespace {

// [throw_int.begin]
// tvm_ffi turns std::exception into a Python error; anything else escapes the
// exported C function and std::terminate ends the whole process.
int64_t ThrowInt(int64_t code) {
  if (code != 0) throw static_cast<int>(code);
  return 0;
}
// [throw_int.end]

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(throw_int_demo, ThrowInt);
