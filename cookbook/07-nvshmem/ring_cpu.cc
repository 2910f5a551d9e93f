// The ring exchange on one host, one row per PE: row p of y receives row p-1
// of x (row 0 receives the last row). It is the reference the NVSHMEM run is
// checked against, and it builds without CUDA.
#include <ffi_cookbook/check.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>

#include <cstdint>
#include <cstring>

namespace {

namespace ffi = tvm::ffi;

// [ring_shift_cpu_entry.begin]
void RingShiftCPU(ffi::TensorView x, ffi::TensorView y) {
  ffi_cookbook::CheckElementwise(x, "x", y, "y", kDLCPU);
  // Rows are copied as bytes: an element narrower than a byte would split one.
  if (x.dtype().bits % 8 != 0) {
    TVM_FFI_THROW(TypeError) << "argument 'x': expected a dtype of whole bytes, got "
                             << ffi_cookbook::DtypeName(x.dtype());
  }
  // No PEs or empty rows: nothing to exchange (and an empty tensor's data may be
  // null, which memcpy must not get even for 0 bytes).
  if (x.ndim() < 1 || x.numel() == 0) return;
  int64_t npes = x.size(0);
  size_t row_bytes = ffi::GetDataSize(x.numel() / npes, x.dtype());
  const char* src = static_cast<const char*>(x.data_ptr());
  char* dst = static_cast<char*>(y.data_ptr());
  for (int64_t pe = 0; pe < npes; ++pe) {
    int64_t right = (pe + 1) % npes;  // each PE writes into its right neighbour
    std::memcpy(dst + right * row_bytes, src + pe * row_bytes, row_bytes);
  }
}
// [ring_shift_cpu_entry.end]

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(ring_shift_cpu, RingShiftCPU);
