// Compile-time record of what the kernel library guide page states about the
// headers: the accessor table, the size of TVMFFIAny, what DLDevice lacks.
// If a tvm_ffi release changes any of it, this file stops compiling and the
// page is corrected with it. Exports nothing.
#include <tvm/ffi/c_api.h>
#include <tvm/ffi/container/tensor.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

namespace {

namespace ffi = tvm::ffi;

// HAS_<name><T>: does `declval<T>().<call>` compile? (T may be const-qualified.)
#define FFI_GUIDE_DETECT(name, call)                                                   \
  template <typename T, typename = void>                                               \
  struct Has_##name : std::false_type {};                                              \
  template <typename T>                                                                \
  struct Has_##name<T, std::void_t<decltype(std::declval<T&>().call)>> : std::true_type {}

FFI_GUIDE_DETECT(dim, dim());
FFI_GUIDE_DETECT(is_aligned, IsAligned(size_t{16}));
FFI_GUIDE_DETECT(dltensor_ptr, GetDLTensorPtr());
FFI_GUIDE_DETECT(to_dlpack, ToDLPack());
FFI_GUIDE_DETECT(to_dlpack_versioned, ToDLPackVersioned());
FFI_GUIDE_DETECT(use_count, use_count());

// DLDevice is the plain DLPack struct: no == and no << in tvm_ffi.
template <typename T, typename = void>
struct HasEqual : std::false_type {};
template <typename T>
struct HasEqual<T, std::void_t<decltype(std::declval<T>() == std::declval<T>())>>
    : std::true_type {};
static_assert(!HasEqual<DLDevice>::value && HasEqual<DLDataType>::value);

// Every argument and result of a packed call is one 16-byte TVMFFIAny.
static_assert(sizeof(TVMFFIAny) == 16);

// Members with the same name and return type on both classes (const access).
template <typename T>
constexpr bool SharedAccessors() {
  using C = const T&;
  return std::is_same_v<decltype(std::declval<C>().ndim()), int32_t> &&
         std::is_same_v<decltype(std::declval<C>().shape()), ffi::ShapeView> &&
         std::is_same_v<decltype(std::declval<C>().sizes()), ffi::ShapeView> &&
         std::is_same_v<decltype(std::declval<C>().strides()), ffi::ShapeView> &&
         std::is_same_v<decltype(std::declval<C>().size(0)), int64_t> &&
         std::is_same_v<decltype(std::declval<C>().stride(0)), int64_t> &&
         std::is_same_v<decltype(std::declval<C>().numel()), int64_t> &&
         std::is_same_v<decltype(std::declval<C>().data_ptr()), void*> &&
         std::is_same_v<decltype(std::declval<C>().device()), DLDevice> &&
         std::is_same_v<decltype(std::declval<C>().dtype()), DLDataType> &&
         std::is_same_v<decltype(std::declval<C>().byte_offset()), uint64_t> &&
         std::is_same_v<decltype(std::declval<C>().IsContiguous()), bool> &&
         std::is_same_v<decltype(std::declval<C>().is_contiguous()), bool>;
}

static_assert(SharedAccessors<ffi::Tensor>() && SharedAccessors<ffi::TensorView>());

// dim(): const on TensorView, but not const on Tensor (call it on a non-const Tensor).
static_assert(Has_dim<const ffi::TensorView>::value && Has_dim<ffi::Tensor>::value);
static_assert(!Has_dim<const ffi::Tensor>::value);

// Only the owning Tensor has these.
static_assert(Has_is_aligned<const ffi::Tensor>::value &&
              !Has_is_aligned<const ffi::TensorView>::value);
static_assert(Has_dltensor_ptr<const ffi::Tensor>::value &&
              !Has_dltensor_ptr<const ffi::TensorView>::value);
static_assert(Has_to_dlpack<const ffi::Tensor>::value &&
              !Has_to_dlpack<const ffi::TensorView>::value);
static_assert(Has_to_dlpack_versioned<const ffi::Tensor>::value &&
              !Has_to_dlpack_versioned<const ffi::TensorView>::value);
static_assert(Has_use_count<const ffi::Tensor>::value &&
              !Has_use_count<const ffi::TensorView>::value);

// A TensorView cannot be made from a temporary Tensor: it would dangle at once.
static_assert(!std::is_constructible_v<ffi::TensorView, ffi::Tensor&&>);
static_assert(std::is_constructible_v<ffi::TensorView, const ffi::Tensor&>);

// A TensorView is a DLTensor copy: no reference count to keep.
static_assert(sizeof(ffi::TensorView) == sizeof(DLTensor));

}  // namespace
