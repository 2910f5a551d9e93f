// Calls weighted_sum_cpu from C++ through tvm::ffi::Module and tvm::ffi::Function.
// Usage: caller_cpp <path to libweighted_sum.so>. Exits 0 when every result is as expected.
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/module.h>
#include <tvm/ffi/function.h>

#include <cstdint>
#include <iostream>

namespace ffi = tvm::ffi;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: " << argv[0] << " <path to libweighted_sum.so>\n";
    return 2;
  }
  // [cpp_lookup.begin]
  ffi::Module mod = ffi::Module::LoadFromFile(argv[1]);
  ffi::Optional<ffi::Function> found = mod->GetFunction("weighted_sum_cpu");
  if (!found.has_value()) return 1;
  ffi::Function weighted_sum = found.value();
  // A name the library does not export gives an empty Optional, not an exception.
  if (mod->GetFunction("no_such_function").has_value()) return 1;
  // [cpp_lookup.end]
  // [cpp_call.begin]
  float values[6] = {1, 2, 3, 4, 5, 6};
  int64_t shape[2] = {2, 3};
  DLTensor x{values, DLDevice{kDLCPU, 0}, 2, DLDataType{kDLFloat, 32, 1}, shape, nullptr, 0};
  // A DLTensor* converts to an argument without copying; the result is an ffi::Any.
  double sum = weighted_sum(&x, 0.5).cast<double>();
  std::cout << "weighted_sum_cpu(x, 0.5) = " << sum << "\n";
  // [cpp_call.end]
  if (sum != 10.5) return 1;
  // [cpp_error.begin]
  x.dtype = DLDataType{kDLInt, 32, 1};
  try {
    weighted_sum(&x, 0.5);
    return 1;  // not reached: the kernel rejects int32
  } catch (const ffi::Error& err) {
    std::cout << "error: " << err.kind() << ": " << err.message() << "\n";
  }
  // [cpp_error.end]
  return 0;
}
