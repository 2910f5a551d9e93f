"""The Pythonic layer over clamp_ffi_api: keyword arguments, defaults, an optional out.

The raw function takes five positional arguments, one of them the output it
writes. This wrapper is what callers import: the same kernel, called as
``scaled_clamp(x, scale=2.0, high=1.0)``, returning a new tensor of x's kind
unless ``out=`` names one to write into.
"""

from __future__ import annotations

from typing import TypeVar

import numpy as np
import numpy.typing as npt
import torch

import clamp_ffi_api

# [clamp_api_wrapper.begin]
# The input's own kind comes back: numpy in, numpy out; torch in, torch out.
TensorT = TypeVar("TensorT", npt.NDArray[np.float32], torch.Tensor)


def scaled_clamp(x: TensorT, *, scale: float = 1.0, low: float | None = None,
                 high: float | None = None, out: TensorT | None = None) -> TensorT:
    """clamp(x * scale, low, high), float32; None leaves a side unbounded.

    Writes into ``out`` when given (and returns it), else into a new tensor like ``x``.
    """
    if out is None:
        out = torch.empty_like(x) if isinstance(x, torch.Tensor) else np.empty_like(x)
    clamp_ffi_api.scaled_clamp(x, out, scale, low, high)
    return out
# [clamp_api_wrapper.end]
