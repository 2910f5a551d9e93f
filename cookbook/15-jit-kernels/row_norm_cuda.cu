// The prebuilt row-norm kernels for CUDA GPUs (see row_norm_cpu.cc).
#include "row_norm_cuda.cuh"

TVM_FFI_DLL_EXPORT_TYPED_FUNC(row_norm_float32_n128_u4_cuda, (row_norm::RowNormCUDA<float, 128, 4>));
