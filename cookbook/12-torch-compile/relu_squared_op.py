"""relu_squared as a torch custom op, so torch.compile can trace through it.

The kernel lives in build/librelu_squared.so, built by the README's cmake commands.
"""

from pathlib import Path

import torch
import tvm_ffi

HERE = Path(__file__).resolve().parent
LIBRARY = HERE / "build" / "librelu_squared.so"
_mod = tvm_ffi.load_module(str(LIBRARY))


# [functional_op.begin]
@torch.library.custom_op("cookbook_compile::relu_squared", mutates_args=())
def relu_squared(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    _mod.relu_squared_cpu(x, out)
    return out


@relu_squared.register_fake
def _(x: torch.Tensor) -> torch.Tensor:
    # Shapes and dtypes only: this runs on fake tensors while tracing.
    return torch.empty_like(x)
# [functional_op.end]


# [mutating_op.begin]
@torch.library.custom_op("cookbook_compile::relu_squared_out", mutates_args=("out",))
def relu_squared_out(x: torch.Tensor, out: torch.Tensor) -> None:
    _mod.relu_squared_cpu(x, out)
# [mutating_op.end]
