"""Shared test helpers: skip markers and per-dtype tolerances, defined once.

Recipe tests import these so that a recipe folder copied on its own still has
them (the package is a prerequisite of every recipe build anyway).
"""

from __future__ import annotations

import shutil

import pytest


def cuda_available() -> bool:
    """True when torch sees a CUDA GPU."""
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def nvshmem_available() -> bool:
    """True when the NVSHMEM wheel (nvidia-nvshmem-cu13) is importable."""
    try:
        import nvidia.nvshmem  # noqa: F401
    except ImportError:
        return False
    return True


needs_cuda = pytest.mark.skipif(not cuda_available(), reason="needs a CUDA GPU (none visible to torch)")
needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc on PATH")
needs_nvshmem = pytest.mark.skipif(
    not (cuda_available() and nvshmem_available()),
    reason="needs a CUDA GPU and the nvidia-nvshmem-cu13 package",
)

#: (rtol, atol) per torch dtype name: one rounding step of the output dtype.
TOLERANCE = {
    "float32": (1.3e-6, 1e-5),
    "float16": (1e-3, 1e-3),
    "bfloat16": (8e-3, 8e-3),
}
