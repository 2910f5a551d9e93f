// Where each tensor struct keeps its fields. The layout facts the page relies on
// are static_asserts (a wrong fact fails the build); main() prints every field's
// offset and size as JSON so the page can draw the figure from real numbers.
#include <tvm/ffi/c_api.h>
#include <tvm/ffi/container/tensor.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <type_traits>
#include <vector>

namespace {

namespace ffi = tvm::ffi;

// What FromNDAlloc needs: AllocData sets t->data, FreeData releases it.
struct MallocAllocator {
  void AllocData(DLTensor* t) { t->data = std::malloc(ffi::GetDataSize(*t) + 1); }
  void FreeData(DLTensor* t) { std::free(t->data); }
};

// [layout_prefix_checks.begin]
// DLManagedTensor starts with its DLTensor: a pointer to one is a pointer to the other.
static_assert(offsetof(DLManagedTensor, dl_tensor) == 0);
// DLManagedTensorVersioned starts with its version instead; the DLTensor comes last.
static_assert(offsetof(DLManagedTensorVersioned, version) == 0);
static_assert(offsetof(DLManagedTensorVersioned, dl_tensor) + sizeof(DLTensor) ==
              sizeof(DLManagedTensorVersioned));
// Every object starts with the reference count, then its type index.
static_assert(offsetof(TVMFFIObject, combined_ref_count) == 0);
static_assert(offsetof(TVMFFIObject, type_index) == 8);
// An Any is 16 bytes: the type index, 4 bytes of padding, then one 8-byte value.
static_assert(sizeof(TVMFFIAny) == 16 && offsetof(TVMFFIAny, v_ptr) == 8);
// [layout_prefix_checks.end]

// TensorObj derives from two bases, so it is not standard layout and offsetof
// on it is only conditionally supported; GCC and Clang compute it correctly.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winvalid-offsetof"
// [layout_tensor_obj_checks.begin]
// No vtable: the object header is the first thing in a TensorObj ...
static_assert(!std::is_polymorphic_v<ffi::TensorObj>);
// ... and the DLTensor follows it directly, with nothing after it.
static_assert(offsetof(ffi::TensorObj, data) == sizeof(TVMFFIObject));
static_assert(sizeof(ffi::TensorObj) == sizeof(TVMFFIObject) + sizeof(DLTensor));
// [layout_tensor_obj_checks.end]
constexpr size_t kDLTensorInTensorObj = offsetof(ffi::TensorObj, data);
#pragma GCC diagnostic pop

struct Field {
  const char* name;
  size_t offset;
  size_t size;
};
using Fields = std::vector<Field>;

#define FIELD(Struct, member) Field{#member, offsetof(Struct, member), sizeof(Struct::member)}

// One JSON object per struct: its name, total size and fields.
void PrintStruct(const char* name, size_t size, const Fields& fields, const char* end = ",") {
  std::printf("  {\"name\": \"%s\", \"size\": %zu, \"fields\": [", name, size);
  const char* sep = "";
  for (const Field& f : fields) {
    std::printf("%s{\"name\": \"%s\", \"offset\": %zu, \"size\": %zu}", sep, f.name,
                f.offset, f.size);
    sep = ", ";
  }
  std::printf("]}%s\n", end);
}

// Same placement at run time, on a real tensor: the DLTensor that
// TVMFFITensorGetDLTensorPtr finds is the TensorObj's own DLTensor base.
bool TensorObjPlacementHolds() {
  ffi::Tensor t = ffi::Tensor::FromNDAlloc(MallocAllocator(), {2, 3}, DLDataType{kDLFloat, 32, 1},
                                           DLDevice{kDLCPU, 0});
  const ffi::TensorObj* obj = t.as<ffi::TensorObj>();
  const char* header = reinterpret_cast<const char*>(static_cast<const ffi::Object*>(obj));
  const DLTensor* base = obj;
  return TVMFFITensorGetDLTensorPtr(const_cast<char*>(header)) == base &&
         reinterpret_cast<const char*>(base) - header == static_cast<ptrdiff_t>(kDLTensorInTensorObj);
}

}  // namespace

int main() {
  if (!TensorObjPlacementHolds()) {
    std::fprintf(stderr, "TensorObj layout differs from the static checks\n");
    return 1;
  }
  const Fields dl_tensor = {FIELD(DLTensor, data),    FIELD(DLTensor, device),
                            FIELD(DLTensor, ndim),    FIELD(DLTensor, dtype),
                            FIELD(DLTensor, shape),   FIELD(DLTensor, strides),
                            FIELD(DLTensor, byte_offset)};
  // TensorObj: the object header, then the DLTensor fields shifted past it.
  Fields tensor_obj = {Field{"object header", 0, sizeof(TVMFFIObject)}};
  for (Field f : dl_tensor) tensor_obj.push_back({f.name, f.offset + kDLTensorInTensorObj, f.size});

  std::printf("[\n");
  PrintStruct("DLTensor", sizeof(DLTensor), dl_tensor);
  PrintStruct("DLManagedTensor", sizeof(DLManagedTensor),
              {FIELD(DLManagedTensor, dl_tensor), FIELD(DLManagedTensor, manager_ctx),
               FIELD(DLManagedTensor, deleter)});
  PrintStruct("DLManagedTensorVersioned", sizeof(DLManagedTensorVersioned),
              {FIELD(DLManagedTensorVersioned, version),
               FIELD(DLManagedTensorVersioned, manager_ctx),
               FIELD(DLManagedTensorVersioned, deleter), FIELD(DLManagedTensorVersioned, flags),
               FIELD(DLManagedTensorVersioned, dl_tensor)});
  PrintStruct("TVMFFIObject", sizeof(TVMFFIObject),
              {FIELD(TVMFFIObject, combined_ref_count), FIELD(TVMFFIObject, type_index),
               FIELD(TVMFFIObject, __padding), FIELD(TVMFFIObject, deleter)});
  PrintStruct("TensorObj", sizeof(ffi::TensorObj), tensor_obj);
  PrintStruct("TVMFFIAny", sizeof(TVMFFIAny),
              {FIELD(TVMFFIAny, type_index), FIELD(TVMFFIAny, zero_padding),
               Field{"value (union)", offsetof(TVMFFIAny, v_ptr), sizeof(TVMFFIAny::v_ptr)}}, "");
  std::printf("]\n");
  return 0;
}
