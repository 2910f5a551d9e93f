"""axpy as a torch custom op (recipe 12's pattern), so torch.compile can trace it
and, with mode="reduce-overhead", replay it in a CUDA graph.

The kernels live in libaxpy_graphs.so, built by this folder's CMakeLists into
build/ (the README's two cmake commands).
"""

from pathlib import Path

import torch
import tvm_ffi

HERE = Path(__file__).resolve().parent
LIBRARY = HERE / "build" / "libaxpy_graphs.so"
mod = tvm_ffi.load_module(str(LIBRARY))


# [axpy_op.begin]
@torch.library.custom_op("cookbook_graphs::axpy", mutates_args=())
def axpy(x: torch.Tensor, y: torch.Tensor, alpha: float) -> torch.Tensor:
    out = torch.empty_like(x)  # torch's allocator: the graph's pool while capturing
    kernel = mod.graph_axpy_cuda if x.is_cuda else mod.graph_axpy_cpu
    kernel(x, y, alpha, out)  # tvm_ffi publishes torch's current stream for the call
    return out


@axpy.register_fake
def _(x: torch.Tensor, y: torch.Tensor, alpha: float) -> torch.Tensor:
    return torch.empty_like(x)
# [axpy_op.end]
