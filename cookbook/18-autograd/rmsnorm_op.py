"""RMSNorm as a differentiable torch operator backed by tvm_ffi kernels.

Two custom ops, the forward (returning y and the per-row rstd it saves) and the
backward, each with a fake implementation so torch.compile can trace them; the
autograd formula connects them. The kernels are in build/librmsnorm_grad.so, built by
the README's cmake commands.
"""

from pathlib import Path

import torch
import tvm_ffi

HERE = Path(__file__).resolve().parent
LIBRARY = HERE / "build" / "librmsnorm_grad.so"
_mod = tvm_ffi.load_module(str(LIBRARY))


def _kernel(name: str, device: torch.device):
    """The CPU or CUDA export for a tensor's device, e.g. rmsnorm_forward_cpu."""
    return getattr(_mod, f"{name}_{device.type}")


# [rmsnorm_custom_ops.begin]
@torch.library.custom_op("cookbook_autograd::rms_norm_forward", mutates_args=())
def rms_norm_forward(x: torch.Tensor, weight: torch.Tensor, eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    y, rstd = torch.empty_like(x), x.new_empty(x.shape[0])
    _kernel("rmsnorm_forward", x.device)(x, weight, y, rstd, eps)
    return y, rstd


@rms_norm_forward.register_fake
def _(x, weight, eps):
    return torch.empty_like(x), x.new_empty(x.shape[0])


@torch.library.custom_op("cookbook_autograd::rms_norm_backward", mutates_args=())
def rms_norm_backward(dy: torch.Tensor, x: torch.Tensor, weight: torch.Tensor,
                      rstd: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    dx, dweight = torch.empty_like(x), torch.empty_like(weight)
    _kernel("rmsnorm_backward", x.device)(dy, x, weight, rstd, dx, dweight)
    return dx, dweight


@rms_norm_backward.register_fake
def _(dy, x, weight, rstd):
    return torch.empty_like(x), torch.empty_like(weight)
# [rmsnorm_custom_ops.end]


# [rmsnorm_autograd.begin]
def _setup_context(ctx, inputs, output):
    x, weight, _ = inputs
    _, rstd = output
    ctx.save_for_backward(x, weight, rstd)
    ctx.mark_non_differentiable(rstd)


def _backward(ctx, dy, _drstd):
    x, weight, rstd = ctx.saved_tensors
    # dy can be a broadcast view (the gradient of .sum() is an expanded scalar):
    # the kernel reads rows of contiguous memory.
    dx, dweight = rms_norm_backward(dy.contiguous(), x, weight, rstd)
    return dx, dweight, None  # eps gets no gradient


rms_norm_forward.register_autograd(_backward, setup_context=_setup_context)


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """RMSNorm over the last dimension of x (any leading dimensions), differentiable."""
    y, _ = rms_norm_forward(x.reshape(-1, x.shape[-1]).contiguous(), weight, eps)
    return y.view(x.shape)
# [rmsnorm_autograd.end]
