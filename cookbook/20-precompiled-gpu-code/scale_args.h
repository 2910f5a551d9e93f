// What both launchers of this recipe share: the argument checks and the
// kernel's launch arguments. No CUDA header: the driver-API library includes
// this as well as the one built on tvm_ffi's cubin launcher.
#ifndef PRECOMPILED_SCALE_ARGS_H_
#define PRECOMPILED_SCALE_ARGS_H_

#include <ffi_cookbook/check.h>
#include <ffi_cookbook/dtype.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>

#include <cstdint>
#include <cstring>

namespace precompiled {

constexpr unsigned int kThreads = 256;

// [scale_args.begin]
// The values scale_f32(const float* x, float* y, float factor, long long n)
// receives, in its parameter order, and the grid that covers n elements.
struct ScaleArgs {
  const void* x;
  void* y;
  float factor;
  long long n;
  unsigned int blocks;
};

inline ScaleArgs CheckScaleArgs(const tvm::ffi::TensorView& x, const tvm::ffi::TensorView& y,
                                double factor) {
  ffi_cookbook::CheckElementwise(x, "x", y, "y", kDLCUDA);
  ffi_cookbook::CheckDtype(x, "x", ffi_cookbook::kFloat32);
  int64_t blocks = (x.numel() + kThreads - 1) / kThreads;
  if (blocks > INT32_MAX) {
    TVM_FFI_THROW(ValueError) << "argument 'x': " << x.numel() << " elements need more than "
                              << INT32_MAX << " blocks of " << kThreads << " threads";
  }
  return ScaleArgs{x.data_ptr(), y.data_ptr(), static_cast<float>(factor), x.numel(),
                   static_cast<unsigned int>(blocks)};
}
// [scale_args.end]

// [check_image.begin]
// A GPU image is read by the driver from its header alone (the load calls take
// no size), so bytes from outside are checked first: a 64-bit ELF (a cubin) or
// a fatbin whose header says it fits in the bytes given.
inline void CheckImage(const char* data, size_t size, const char* name) {
  auto read = [&](size_t offset, auto value) {
    std::memcpy(&value, data + offset, sizeof(value));
    return value;
  };
  bool fits = false;
  if (size >= 64 && std::memcmp(data, "\x7f" "ELF", 4) == 0 && data[4] == 2) {  // ELFCLASS64
    uint64_t sections = read(0x28, uint64_t{}) + uint64_t{read(0x3A, uint16_t{})} * read(0x3C, uint16_t{});
    uint64_t programs = read(0x20, uint64_t{}) + uint64_t{read(0x36, uint16_t{})} * read(0x38, uint16_t{});
    fits = read(0x28, uint64_t{}) <= size && sections <= size && read(0x20, uint64_t{}) <= size &&
           programs <= size;
  } else if (size >= 16 && read(0, uint32_t{}) == 0xBA55ED50u) {  // fatbin: magic, version,
    uint64_t header = read(6, uint16_t{}), body = read(8, uint64_t{});  // header size, body size
    fits = header >= 16 && body > 0 && body <= size && header + body <= size;
  }
  if (!fits) {
    TVM_FFI_THROW(ValueError) << "argument '" << name << "': expected a cubin (64-bit ELF) or a "
                              << "fatbin whose header fits in its " << size << " bytes";
  }
}
// [check_image.end]

}  // namespace precompiled

#endif  // PRECOMPILED_SCALE_ARGS_H_
