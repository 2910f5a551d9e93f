"""add_one: the built library matches NumPy and torch, and rejects bad input."""

from pathlib import Path

import numpy as np
import pytest
import torch
import tvm_ffi

SHAPES = [(0,), (1,), (7,), (3, 5), (2, 3, 4)]
DTYPES = [torch.float32, torch.float64]
needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


# The README's build: cmake -S . -B build, in this folder.
LIBRARY = Path(__file__).resolve().parent / "build" / "libadd_one.so"


@pytest.fixture(scope="module")
def mod():
    return tvm_ffi.load_module(str(LIBRARY))


def sample_inputs(device, dtype, shape):
    x = torch.randn(shape, generator=torch.Generator().manual_seed(0)).to(device=device, dtype=dtype)
    return x, torch.empty_like(x)


def reference(x):
    return x + 1


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_cpu_matches_torch(mod, dtype, shape):
    x, y = sample_inputs("cpu", dtype, shape)
    assert mod.add_one_cpu(x, y) is None  # the result is written into y
    torch.testing.assert_close(y, reference(x), rtol=0, atol=0)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_cpu_matches_numpy(mod, shape):
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    y = np.full_like(x, np.nan)
    assert mod.add_one_cpu(x, y) is None
    np.testing.assert_array_equal(y, x + 1)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_cpu_matches_numpy_through_tvm_ffi_tensor(mod, shape):
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    y = tvm_ffi.from_dlpack(np.full_like(x, np.nan))
    assert mod.add_one_cpu(tvm_ffi.from_dlpack(x), y) is None
    assert isinstance(y, tvm_ffi.Tensor) and tuple(y.shape) == shape
    np.testing.assert_array_equal(np.from_dlpack(y), x + 1)


@pytest.mark.parametrize(
    "x, y, error, message",
    [
        (np.zeros(3, np.int32), np.zeros(3, np.int32), TypeError, "argument 'x': expected dtype float32 or float64"),
        (np.zeros(3, np.float16), np.zeros(3, np.float16), TypeError, "argument 'x': expected dtype float32 or float64"),
        (np.zeros(3, np.float32), np.zeros(3, np.float64), TypeError, "argument 'y': expected the dtype of 'x'"),
        (np.zeros(3, np.float32), np.zeros(4, np.float32), ValueError, "argument 'y': expected the shape of 'x'"),
        (np.zeros((3, 1), np.float32), np.zeros(3, np.float32), ValueError, "argument 'y': expected the shape of 'x'"),
        (np.zeros((3, 4), np.float32).T, np.zeros((4, 3), np.float32), ValueError, "argument 'x': expected a contiguous tensor"),
    ],
)
def test_cpu_rejects_bad_input(mod, x, y, error, message):
    with pytest.raises(error) as info:
        mod.add_one_cpu(x, y)
    assert message in str(info.value)


def test_cuda_entry_rejects_cpu_tensor(mod):
    if not hasattr(mod, "add_one_cuda"):
        pytest.skip("CUDA variant not built (no nvcc)")
    with pytest.raises(ValueError, match="argument 'x': expected a tensor on cuda, got one on cpu"):
        mod.add_one_cuda(np.zeros(3, np.float32), np.zeros(3, np.float32))


@needs_cuda
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_cuda_matches_torch(mod, dtype, shape):
    x, y = sample_inputs("cuda", dtype, shape)
    mod.add_one_cuda(x, y)
    torch.cuda.synchronize()
    torch.testing.assert_close(y, reference(x), rtol=0, atol=0)
