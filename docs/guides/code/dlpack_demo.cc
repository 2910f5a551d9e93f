// DLPack in and out of ffi::Tensor, both the pre-1.0 struct (DLManagedTensor)
// and the 1.0 one (DLManagedTensorVersioned). Run it and read the output.
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>

#include <cstdint>
#include <cstdlib>
#include <iostream>

namespace ffi = tvm::ffi;

// What FromNDAlloc needs: AllocData sets t->data, FreeData releases it.
struct MallocAllocator {
  void AllocData(DLTensor* t) { t->data = std::malloc(ffi::GetDataSize(*t) + 1); }
  void FreeData(DLTensor* t) { std::free(t->data); }
};

namespace {

// [dlpack_legacy_import.begin]
// A producer's buffer, exported as a pre-1.0 DLManagedTensor whose deleter
// tells us when the consumer lets go.
float g_buffer[6] = {0, 1, 2, 3, 4, 5};
int64_t g_shape[1] = {6};

DLManagedTensor* ExportLegacy() {
  auto* managed = new DLManagedTensor{};
  managed->dl_tensor.data = g_buffer;
  managed->dl_tensor.device = DLDevice{kDLCPU, 0};
  managed->dl_tensor.ndim = 1;
  managed->dl_tensor.dtype = DLDataType{kDLFloat, 32, 1};
  managed->dl_tensor.shape = g_shape;
  managed->deleter = [](DLManagedTensor* self) {
    std::cout << "  producer's deleter called\n";
    delete self;
  };
  return managed;
}

void ImportLegacy() {
  std::cout << "FromDLPack (pre-1.0 DLManagedTensor):\n";
  {
    ffi::Tensor t = ffi::Tensor::FromDLPack(ExportLegacy());
    std::cout << "  shape " << ffi::Shape(t.shape()) << ", zero-copy: " << std::boolalpha
              << (t.data_ptr() == g_buffer) << "\n";
    std::cout << "  leaving the Tensor's scope\n";
  }
}
// [dlpack_legacy_import.end]

// [dlpack_versioned_roundtrip.begin]
void RoundTripVersioned() {
  std::cout << "ToDLPackVersioned / FromDLPackVersioned:\n";
  ffi::Tensor t = ffi::Tensor::FromNDAlloc(MallocAllocator(), {4},
                                           DLDataType{kDLFloat, 32, 1}, DLDevice{kDLCPU, 0});
  DLManagedTensorVersioned* managed = t.ToDLPackVersioned();  // takes a reference
  std::cout << "  DLPack version " << managed->version.major << "." << managed->version.minor
            << ", use_count " << t.use_count() << "\n";
  {
    ffi::Tensor back = ffi::Tensor::FromDLPackVersioned(managed);  // consumes `managed`
    std::cout << "  imported back, same data: " << std::boolalpha
              << (back.data_ptr() == t.data_ptr()) << ", use_count " << t.use_count() << "\n";
  }
  std::cout << "  import released, use_count " << t.use_count() << "\n";
}
// [dlpack_versioned_roundtrip.end]

// [dlpack_legacy_export.begin]
void ExportLegacyAndRelease() {
  std::cout << "ToDLPack (pre-1.0) handed to a consumer that calls the deleter:\n";
  ffi::Tensor t = ffi::Tensor::FromNDAlloc(MallocAllocator(), {4},
                                           DLDataType{kDLFloat, 32, 1}, DLDevice{kDLCPU, 0});
  DLManagedTensor* managed = t.ToDLPack();
  std::cout << "  exported, use_count " << t.use_count() << "\n";
  managed->deleter(managed);  // the consumer is done with it
  std::cout << "  consumer done, use_count " << t.use_count() << "\n";
}
// [dlpack_legacy_export.end]

// [dlpack_require_contiguous.begin]
void RejectStrided() {
  std::cout << "FromDLPack with require_contiguous=true on a strided tensor:\n";
  int64_t shape[2] = {3, 2};
  int64_t strides[2] = {1, 3};  // a transpose of a 2x3 row-major buffer
  DLManagedTensor* managed = ExportLegacy();
  managed->dl_tensor.ndim = 2;
  managed->dl_tensor.shape = shape;
  managed->dl_tensor.strides = strides;
  try {
    ffi::Tensor::FromDLPack(managed, /*require_alignment=*/0, /*require_contiguous=*/true);
  } catch (const ffi::Error& err) {
    std::cout << "  " << err.kind() << ": " << err.message() << "\n";
    managed->deleter(managed);  // a failed import leaves ownership with us
  }
}
// [dlpack_require_contiguous.end]

}  // namespace

int main() {
  ImportLegacy();
  RoundTripVersioned();
  ExportLegacyAndRelease();
  RejectStrided();
  return 0;
}
