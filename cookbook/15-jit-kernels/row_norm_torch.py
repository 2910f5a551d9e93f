"""The same specialised row-norm loop as a torch extension, JIT-built by torch.

For comparison with tvm_ffi's JIT: same loop header, same compiler, torch's
binding (pybind11 and at::Tensor) instead of tvm_ffi's.
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent

# [row_norm_torch_source.begin]
TORCH_SOURCE = r"""
#include <torch/extension.h>
#include "row_norm_loop.h"

torch::Tensor row_norm_torch(torch::Tensor x) {
  TORCH_CHECK(x.device().is_cpu() && x.scalar_type() == torch::kFloat32 && x.dim() == 2 &&
              x.size(1) == 128 && x.is_contiguous(),
              "x: expected a contiguous float32 CPU tensor of shape [rows, 128]");
  torch::Tensor out = torch::empty({x.size(0)}, x.options());
  row_norm::RowNormLoop<float, 128, 4>(x.data_ptr<float>(), out.data_ptr<float>(), x.size(0));
  return out;
}
"""


def torch_extension(build_directory: str | Path):
    """Compile (or reuse from ``build_directory``) and import the torch extension."""
    from torch.utils.cpp_extension import load_inline

    Path(build_directory).mkdir(mode=0o700, parents=True, exist_ok=True)
    return load_inline("row_norm_torch_ext", cpp_sources=TORCH_SOURCE, functions=["row_norm_torch"],
                       extra_include_paths=[str(HERE)], build_directory=str(build_directory))
# [row_norm_torch_source.end]
