"""The starter kernel: matches NumPy, rejects bad input with an exception naming the argument."""

import numpy as np
import pytest

import @name@



def _cuda_visible() -> bool:
    try:
        import torch
    except ImportError:  # torch is optional here: only the CUDA test uses it
        return False
    return torch.cuda.is_available()


needs_cuda = pytest.mark.skipif(not _cuda_visible(), reason="needs a CUDA GPU (and torch)")


@pytest.mark.parametrize("shape", [(0,), (7,), (3, 5)])
def test_scale_cpu_matches_numpy(shape):
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    y = np.full_like(x, np.nan)
    @name@.@name@_scale_cpu(x, y, 2.5)
    np.testing.assert_allclose(y, 2.5 * x, rtol=1e-6)


def test_scale_cpu_rejects_bad_input():
    with pytest.raises(TypeError, match="argument 'x': expected dtype float32"):
        @name@.@name@_scale_cpu(np.zeros(3), np.zeros(3), 1.0)
    with pytest.raises(ValueError, match="argument 'y': expected shape"):
        @name@.@name@_scale_cpu(np.zeros(3, np.float32), np.zeros(4, np.float32), 1.0)


def test_variants():
    assert @name@.variants()[0] == "cpu"


@needs_cuda
def test_scale_cuda_matches_torch():
    import torch

    x = torch.randn(1000, device="cuda")
    y = torch.empty_like(x)
    @name@.@name@_scale_cuda(x, y, 2.5)
    torch.testing.assert_close(y, 2.5 * x)
