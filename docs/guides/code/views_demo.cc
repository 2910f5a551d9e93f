// Tensor (owning, reference counted) versus TensorView (a borrowed DLTensor),
// shown without Python: run it and read the output.
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>

#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <vector>

namespace ffi = tvm::ffi;

// What FromNDAlloc needs: AllocData sets t->data, FreeData releases it.
struct MallocAllocator {
  void AllocData(DLTensor* t) { t->data = std::malloc(ffi::GetDataSize(*t) + 1); }
  void FreeData(DLTensor* t) { std::free(t->data); }
};

namespace {

// [views_refcount.begin]
void ReferenceCounts() {
  ffi::Tensor t = ffi::Tensor::FromNDAlloc(MallocAllocator(), {2, 3},
                                           DLDataType{kDLFloat, 32, 1}, DLDevice{kDLCPU, 0});
  std::cout << "one Tensor:             use_count " << t.use_count() << "\n";
  ffi::Tensor copy = t;  // a second owner
  std::cout << "after copying it:       use_count " << t.use_count() << "\n";
  ffi::TensorView view = t;  // borrows: no count taken
  std::cout << "after viewing it:       use_count " << t.use_count()
            << ", same data: " << std::boolalpha << (view.data_ptr() == t.data_ptr()) << "\n";
}
// [views_refcount.end]

// [views_raw_dltensor.begin]
void RawDLTensor() {
  std::vector<float> storage(12, 1.0f);
  int64_t shape[2] = {3, 4};
  DLTensor raw{};  // what XLA and C callers hand over: memory they own
  raw.data = storage.data();
  raw.device = DLDevice{kDLCPU, 0};
  raw.ndim = 2;
  raw.dtype = DLDataType{kDLFloat, 32, 1};
  raw.shape = shape;  // strides == nullptr means compact row-major

  auto numel_of_view = ffi::Function::FromTyped([](ffi::TensorView x) { return x.numel(); });
  auto numel_of_tensor = ffi::Function::FromTyped([](ffi::Tensor x) { return x.numel(); });
  std::cout << "TensorView parameter, DLTensor* argument: numel "
            << numel_of_view(&raw).cast<int64_t>() << "\n";
  try {
    numel_of_tensor(&raw);
  } catch (const ffi::Error& err) {
    std::cout << "Tensor parameter, DLTensor* argument: " << err.kind() << ": " << err.message()
              << "\n";
  }
}
// [views_raw_dltensor.end]

}  // namespace

int main() {
  ReferenceCounts();
  RawDLTensor();
  return 0;
}
