// The prebuilt row-norm kernels: the specialisations most callers ask for,
// compiled ahead of time. Others are generated and compiled on first use
// (row_norm_jit.py), from the same template and with the same export line.
#include "row_norm_entry.h"

// [row_norm_prebuilt.begin]
TVM_FFI_DLL_EXPORT_TYPED_FUNC(row_norm_float32_n128_u4_cpu, (row_norm::RowNorm<float, 128, 4>));
TVM_FFI_DLL_EXPORT_TYPED_FUNC(row_norm_float32_n256_u8_cpu, (row_norm::RowNorm<float, 256, 8>));
// [row_norm_prebuilt.end]
