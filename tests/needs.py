"""What a repository-level test needs from the machine, as skip marks (the recipes' tests write
their own, so that a recipe folder stands alone)."""

import importlib.util
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
    """True when the NVSHMEM wheel (nvidia-nvshmem-cu13) is installed."""
    return importlib.util.find_spec("nvidia") is not None and importlib.util.find_spec("nvidia.nvshmem") is not None


needs_cuda = pytest.mark.skipif(not cuda_available(), reason="needs a CUDA GPU (none visible to torch)")
needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc on PATH")
