// NVSHMEM on TVM FFI: start NVSHMEM from Python, allocate tensors on the
// symmetric heap, and have every PE put its tensor into its right neighbour's.
//
// Built with -rdc=true and linked against nvshmem_device / nvshmem_host (this
// folder's CMakeLists.txt does both).
#include <ffi_cookbook/alloc_nvshmem.h>
#include <ffi_cookbook/check.h>
#include <ffi_cookbook/stream.h>
#include <nvshmem.h>
#include <nvshmemx.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/extra/cuda/base.h>
#include <tvm/ffi/extra/cuda/device_guard.h>
#include <tvm/ffi/function.h>

#include <cstdint>
#include <cstring>

namespace {

namespace ffi = tvm::ffi;

int g_device = -1;     // the GPU this process's PE was started on
int64_t g_live = 0;    // symmetric tensors not yet freed

void RequireInitialised(const char* what) {
  if (nvshmemx_init_status() < NVSHMEM_STATUS_IS_INITIALIZED) {
    TVM_FFI_THROW(RuntimeError) << what << ": NVSHMEM is not initialised in this process "
                                << "(call shmem_init_nvshmem first)";
  }
}

// [shmem_init_nvshmem_entry.begin]
ffi::Bytes UniqueId() {
  nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;
  if (nvshmemx_get_uniqueid(&id) != 0) TVM_FFI_THROW(RuntimeError) << "nvshmemx_get_uniqueid failed";
  return ffi::Bytes(reinterpret_cast<const char*>(&id), sizeof(id));
}

// Every process calls this with its rank, the number of PEs and the same id.
int64_t Init(int64_t rank, int64_t npes, ffi::Bytes unique_id, int64_t device_id) {
  if (npes < 1) TVM_FFI_THROW(ValueError) << "argument 'npes': expected >= 1, got " << npes;
  if (rank < 0 || rank >= npes) {
    TVM_FFI_THROW(ValueError) << "argument 'rank': expected 0 <= rank < " << npes << ", got " << rank;
  }
  if (device_id < 0) TVM_FFI_THROW(ValueError) << "argument 'device_id': expected >= 0, got " << device_id;
  if (unique_id.size() != sizeof(nvshmemx_uniqueid_t)) {
    TVM_FFI_THROW(ValueError) << "argument 'unique_id': expected " << sizeof(nvshmemx_uniqueid_t)
                              << " bytes from shmem_unique_id_nvshmem, got " << unique_id.size();
  }
  if (nvshmemx_init_status() != NVSHMEM_STATUS_NOT_INITIALIZED) {
    TVM_FFI_THROW(RuntimeError) << "NVSHMEM is already initialised in this process";
  }
  // NVSHMEM binds the PE to the device that is current at init: keep it current.
  TVM_FFI_CHECK_CUDA_ERROR(cudaSetDevice(static_cast<int>(device_id)));
  nvshmemx_uniqueid_t id;
  std::memcpy(&id, unique_id.data(), sizeof(id));
  nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
  nvshmemx_set_attr_uniqueid_args(static_cast<int>(rank), static_cast<int>(npes), &id, &attr);
  nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr);  // blocks until all PEs arrive
  g_device = static_cast<int>(device_id);
  return nvshmem_my_pe();
}
// [shmem_init_nvshmem_entry.end]

// [shmem_empty_nvshmem_entry.begin]
// Counts live tensors so that finalize can refuse to pull the heap from under them.
struct CountingAllocator {
  void AllocData(DLTensor* t) {
    ffi_cookbook::NVSHMEMAllocator().AllocData(t);
    ++g_live;
  }
  void FreeData(DLTensor* t) {
    ffi_cookbook::NVSHMEMAllocator().FreeData(t);
    --g_live;
  }
};

// Collective: every PE must ask for the same shapes in the same order.
ffi::Tensor Empty(ffi::Shape shape, DLDataType dtype) {
  RequireInitialised("shmem_empty_nvshmem");
  return ffi::Tensor::FromNDAlloc(CountingAllocator(), shape, dtype, DLDevice{kDLCUDA, g_device});
}
// [shmem_empty_nvshmem_entry.end]

void Finalize() {
  RequireInitialised("shmem_finalize_nvshmem");
  if (g_live != 0) {
    TVM_FFI_THROW(RuntimeError) << "shmem_finalize_nvshmem: " << g_live
                                << " symmetric tensor(s) are still alive; free them first";
  }
  nvshmem_finalize();
}

// [ring_put_nvshmem_kernel.begin]
// Each block sends one contiguous chunk of bytes; its threads cooperate in the put.
__global__ void RingPutKernel(char* dst, const char* src, size_t bytes, int peer) {
  size_t chunk = (bytes + gridDim.x - 1) / gridDim.x;
  size_t begin = static_cast<size_t>(blockIdx.x) * chunk;
  if (begin >= bytes) return;  // uniform across the block
  size_t len = bytes - begin < chunk ? bytes - begin : chunk;
  nvshmemx_putmem_block(dst + begin, src + begin, len, peer);
}
// [ring_put_nvshmem_kernel.end]

void RequireSymmetric(const ffi::TensorView& t, const char* name) {
  if (t.numel() != 0 && nvshmem_ptr(t.data_ptr(), nvshmem_my_pe()) == nullptr) {
    TVM_FFI_THROW(ValueError) << "argument '" << name << "': expected a tensor on the NVSHMEM "
                              << "symmetric heap (allocate it with shmem_empty_nvshmem)";
  }
}

// [ring_put_nvshmem_entry.begin]
void RingPut(ffi::TensorView src, ffi::TensorView dst) {
  ffi_cookbook::CheckElementwise(src, "src", dst, "dst", kDLCUDA);
  RequireInitialised("ring_put_nvshmem");
  RequireSymmetric(src, "src");
  RequireSymmetric(dst, "dst");
  ffi::CUDADeviceGuard guard(dst.device().device_id);
  cudaStream_t stream = ffi_cookbook::CurrentStream(dst.device());
  size_t bytes = ffi::GetDataSize(dst.numel(), dst.dtype());
  int peer = (nvshmem_my_pe() + 1) % nvshmem_n_pes();
  // Wait until every PE's earlier work on its buffers is done, then put.
  nvshmemx_barrier_all_on_stream(stream);
  if (bytes != 0) {
    unsigned int blocks = static_cast<unsigned int>((bytes + (1 << 16) - 1) >> 16);  // 64 KiB each
    RingPutKernel<<<blocks < 1024 ? blocks : 1024, 256, 0, stream>>>(
        static_cast<char*>(dst.data_ptr()), static_cast<const char*>(src.data_ptr()), bytes, peer);
    TVM_FFI_CHECK_CUDA_ERROR(cudaGetLastError());
  }
  // Once the stream passes this barrier, every PE's puts have landed.
  nvshmemx_barrier_all_on_stream(stream);
}
// [ring_put_nvshmem_entry.end]

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(shmem_unique_id_nvshmem, UniqueId);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(shmem_init_nvshmem, Init);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(shmem_empty_nvshmem, Empty);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(shmem_finalize_nvshmem, Finalize);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(ring_put_nvshmem, RingPut);
