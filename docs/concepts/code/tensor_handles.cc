// The three C++ handles to one tensor and what each does to the reference
// count: Tensor owns (like std::shared_ptr), TensorObj* and TensorView borrow.
#include <tvm/ffi/any.h>
#include <tvm/ffi/cast.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>

#include <cstdio>
#include <cstdlib>
#include <type_traits>
#include <utility>

namespace {

namespace ffi = tvm::ffi;

// What FromNDAlloc needs: AllocData sets t->data, FreeData releases it.
struct MallocAllocator {
  void AllocData(DLTensor* t) { t->data = std::malloc(ffi::GetDataSize(*t) + 1); }
  void FreeData(DLTensor* t) { std::free(t->data); }
};

// [handles_one_way.begin]
// A view is made from an owner, never the other way round ...
static_assert(std::is_constructible_v<ffi::TensorView, const ffi::Tensor&>);
static_assert(!std::is_constructible_v<ffi::Tensor, ffi::TensorView>);
// ... and never from a temporary owner, which would die before the view.
static_assert(!std::is_constructible_v<ffi::TensorView, ffi::Tensor&&>);
// [handles_one_way.end]

// [handles_get_is_protected.begin]
// Detects whether `ref.get()` may be called from outside the class.
template <typename Ref, typename = void>
struct HasPublicGet : std::false_type {};
template <typename Ref>
struct HasPublicGet<Ref, std::void_t<decltype(std::declval<const Ref&>().get())>>
    : std::true_type {};
// ObjectRef::get() is public, but Tensor re-declares get() as protected:
// outside the class, reach the TensorObj through as<TensorObj>().
static_assert(HasPublicGet<ffi::ObjectRef>::value);
static_assert(!HasPublicGet<ffi::Tensor>::value);
// [handles_get_is_protected.end]

void Show(const char* step, const ffi::Tensor& owner) {
  std::printf("%-44s use_count %d\n", step, owner.use_count());
}

}  // namespace

int main() {
  // [handles_walkthrough.begin]
  ffi::Tensor a = ffi::Tensor::FromNDAlloc(MallocAllocator(), {2, 3}, DLDataType{kDLFloat, 32, 1},
                                           DLDevice{kDLCPU, 0});
  Show("Tensor a = Tensor::FromNDAlloc(...)", a);

  const ffi::TensorObj* obj = a.as<ffi::TensorObj>();  // a raw pointer: borrows
  Show("const TensorObj* obj = a.as<TensorObj>()", a);
  {
    ffi::Tensor b = ffi::GetRef<ffi::Tensor>(obj);  // a new owner of the same object
    Show("Tensor b = GetRef<Tensor>(obj)", a);
  }
  Show("b out of scope", a);

  ffi::TensorView v = a;  // copies the DLTensor fields: borrows
  Show("TensorView v = a", a);

  ffi::Any owned = a;     // an owning Any holds a kTVMFFITensor
  ffi::AnyView seen = v;  // a view Any holds a kTVMFFIDLTensorPtr
  Show("Any owned = a; AnyView seen = v", a);
  std::printf("type_index: owned %d (kTVMFFITensor %d), seen %d (kTVMFFIDLTensorPtr %d)\n",
              owned.type_index(), kTVMFFITensor, seen.type_index(), kTVMFFIDLTensorPtr);
  // [handles_walkthrough.end]
  if (a.use_count() != 2 || v.data_ptr() != a.data_ptr() ||
      owned.type_index() != kTVMFFITensor || seen.type_index() != kTVMFFIDLTensorPtr) {
    return 1;
  }
  // [handles_view_to_owner.begin]
  try {
    ffi::Tensor back = seen.cast<ffi::Tensor>();  // view -> owner: refused at run time
    return 1;
  } catch (const ffi::Error& err) {
    std::printf("seen.cast<Tensor>() throws %s: %s\n", err.kind().c_str(), err.message().c_str());
  }
  // [handles_view_to_owner.end]
  return 0;
}
