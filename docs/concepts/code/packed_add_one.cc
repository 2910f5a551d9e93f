// A packed function written by hand against the C ABI (y = x + 1 on float32
// vectors), the same operation called directly, and callers that show what an
// optimizing compiler makes of the packed convention.
#include <tvm/ffi/c_api.h>

#include <cstdint>
#include <type_traits>

namespace {

// [packed_helpers.begin]
// The DLTensor behind an argument, whichever tensor kind it is; nullptr otherwise.
inline DLTensor* AsTensor(const TVMFFIAny& arg) {
  if (arg.type_index == kTVMFFIDLTensorPtr) return static_cast<DLTensor*>(arg.v_ptr);
  if (arg.type_index == kTVMFFITensor) return TVMFFITensorGetDLTensorPtr(arg.v_obj);
  return nullptr;
}

inline bool IsContiguousFloat32Vector(const DLTensor* t) {
  return t->device.device_type == kDLCPU && t->ndim == 1 && t->dtype.code == kDLFloat &&
         t->dtype.bits == 32 && t->dtype.lanes == 1 &&
         (t->strides == nullptr || t->strides[0] == 1);
}

inline int Raise(const char* kind, const char* message) {
  TVMFFIErrorSetRaisedFromCStr(kind, message);
  return -1;
}

inline void AddOneLoop(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] + 1.0f;
}
// [packed_helpers.end]

// [packed_function.begin]
inline int AddOnePacked(void* /*handle*/, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  if (num_args != 2) return Raise("TypeError", "add_one_packed: expected 2 arguments (x, y)");
  DLTensor* x = AsTensor(args[0]);
  DLTensor* y = AsTensor(args[1]);
  if (x == nullptr || y == nullptr) {
    return Raise("TypeError", "add_one_packed: x and y must be tensors");
  }
  if (!IsContiguousFloat32Vector(x) || !IsContiguousFloat32Vector(y)) {
    return Raise("TypeError", "add_one_packed: expected contiguous 1-d float32 CPU tensors");
  }
  if (x->shape[0] != y->shape[0]) {
    return Raise("ValueError", "add_one_packed: x and y differ in length");
  }
  AddOneLoop(reinterpret_cast<const float*>(static_cast<char*>(x->data) + x->byte_offset),
             reinterpret_cast<float*>(static_cast<char*>(y->data) + y->byte_offset),
             x->shape[0]);
  result->type_index = kTVMFFINone;  // returns None
  return 0;
}
// The signature is exactly the ABI's function type.
static_assert(std::is_same_v<decltype(&AddOnePacked), TVMFFISafeCallType>);
// [packed_function.end]

}  // namespace

// [packed_export.begin]
// tvm_ffi.load_module finds a function `name` through the symbol __tvm_ffi_<name>.
extern "C" TVM_FFI_DLL_EXPORT int __tvm_ffi_concepts_add_one_packed(void* handle,
                                                                   const TVMFFIAny* args,
                                                                   int32_t num_args,
                                                                   TVMFFIAny* result) {
  return AddOnePacked(handle, args, num_args, result);
}

// Does nothing and returns None: the cost of a call and nothing else.
extern "C" TVM_FFI_DLL_EXPORT int __tvm_ffi_concepts_noop(void*, const TVMFFIAny*, int32_t,
                                                         TVMFFIAny* result) {
  result->type_index = kTVMFFINone;
  return 0;
}
// [packed_export.end]

// [packed_callers.begin]
// The direct call: four floats, no tensors, no checks.
extern "C" int CallDirect(const float* x, float* y) {
  AddOneLoop(x, y, 4);
  return 0;
}

// The same work through the packed convention: DLTensors and Anys on the stack.
extern "C" int CallPacked(float* x, float* y) {
  int64_t shape[1] = {4};
  DLTensor xt{x, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, shape, nullptr, 0};
  DLTensor yt{y, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, shape, nullptr, 0};
  TVMFFIAny args[2] = {};
  args[0].type_index = kTVMFFIDLTensorPtr;
  args[0].v_ptr = &xt;
  args[1].type_index = kTVMFFIDLTensorPtr;
  args[1].v_ptr = &yt;
  TVMFFIAny result{};
  result.type_index = kTVMFFINone;  // the caller's duty, per TVMFFISafeCallType
  constexpr TVMFFISafeCallType kFunction = &AddOnePacked;
  return kFunction(nullptr, args, 2, &result);
}

// The same call when the function is only a pointer, as from dlsym() in
// another library: the compiler cannot see the body, so nothing folds.
extern "C" int CallThroughPointer(TVMFFISafeCallType function, float* x, float* y) {
  int64_t shape[1] = {4};
  DLTensor xt{x, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, shape, nullptr, 0};
  DLTensor yt{y, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, shape, nullptr, 0};
  TVMFFIAny args[2] = {};
  args[0].type_index = kTVMFFIDLTensorPtr;
  args[0].v_ptr = &xt;
  args[1].type_index = kTVMFFIDLTensorPtr;
  args[1].v_ptr = &yt;
  TVMFFIAny result{};
  result.type_index = kTVMFFINone;
  return function(nullptr, args, 2, &result);
}
// [packed_callers.end]
