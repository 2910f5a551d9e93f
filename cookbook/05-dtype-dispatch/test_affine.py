"""affine: y = a*x + b within one rounding step per dtype, on CPU and CUDA."""

from pathlib import Path

import numpy as np
import pytest
import torch
import tvm_ffi

# Built by the README's commands (cmake -S . -B build) in this folder.
HERE = Path(__file__).resolve().parent
LIBRARY = HERE / "build" / "libaffine.so"
needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
SHAPES = [(0,), (1,), (7,), (3, 5), (2, 3, 4)]
DTYPES = [torch.float32, torch.float16, torch.bfloat16]
A, B = 2.5, 3.0  # with x in [-1, 1) every result lies in [0.5, 5.5]


@pytest.fixture(scope="module")
def mod():
    return tvm_ffi.load_module(str(LIBRARY))


def sample_inputs(device, dtype, shape):
    x = torch.rand(shape, generator=torch.Generator().manual_seed(0), dtype=torch.float64) * 2 - 1
    x = x.to(device=device, dtype=dtype)
    return x, torch.full_like(x, float("nan"))


def reference(x, a, b):
    return a * x.double() + b


def assert_within_one_step(y, x, a, b):
    # One rounding step of the output dtype: relative error at most eps.
    torch.testing.assert_close(y.double(), reference(x, a, b), rtol=torch.finfo(y.dtype).eps, atol=0)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_cpu_within_one_step(mod, dtype, shape):
    x, y = sample_inputs("cpu", dtype, shape)
    mod.affine_cpu(x, y, A, B)
    assert_within_one_step(y, x, A, B)


def test_cpu_tolerance_can_fail(mod):
    # The tolerance is tight enough to notice results two representable values off.
    x, y = sample_inputs("cpu", torch.float16, (64,))
    mod.affine_cpu(x, y, A, B)
    wrong = y.view(torch.int16).add(2).view(torch.float16)
    with pytest.raises(AssertionError):
        assert_within_one_step(wrong, x, A, B)


def test_cpu_numpy_float32_and_scalars(mod):
    x = np.linspace(-1, 1, 9, dtype=np.float32)
    y = np.empty_like(x)
    mod.affine_cpu(x, y, -0.5, 1)  # a Python int is accepted for a double
    np.testing.assert_allclose(y, -0.5 * x.astype(np.float64) + 1, rtol=np.finfo(np.float32).eps)


@pytest.mark.parametrize("dtype", [torch.float64, torch.int32, torch.int8], ids=str)
def test_cpu_rejects_unsupported_dtype(mod, dtype):
    x = torch.zeros(3, dtype=dtype)
    name = str(dtype).removeprefix("torch.")
    with pytest.raises(TypeError, match=f"argument 'x': expected dtype float32, float16 or bfloat16, got {name}"):
        mod.affine_cpu(x, torch.zeros_like(x), A, B)


@pytest.mark.parametrize(
    "x, y, error, message",
    [
        (torch.zeros(3), torch.zeros(3, dtype=torch.float16), TypeError, "argument 'y': expected dtype float32 (the dtype of 'x'), got float16"),
        (torch.zeros(3), torch.zeros(4), ValueError, "argument 'y': expected shape [3] (the shape of 'x'), got [4]"),
        (torch.zeros(3, 4).T, torch.zeros(4, 3), ValueError, "argument 'x': expected a contiguous tensor"),
        (torch.zeros(4, 3), torch.zeros(3, 4).T, ValueError, "argument 'y': expected a contiguous tensor"),
    ],
)
def test_cpu_rejects_bad_input(mod, x, y, error, message):
    with pytest.raises(error) as info:
        mod.affine_cpu(x, y, A, B)
    assert message in str(info.value)


def test_scalar_argument_must_be_a_number(mod):
    with pytest.raises(TypeError, match="Mismatched type on argument #2"):
        mod.affine_cpu(torch.zeros(3), torch.zeros(3), "2.5", B)


def test_cuda_entry_rejects_cpu_tensor(mod):
    if not hasattr(mod, "affine_cuda"):
        pytest.skip("CUDA variant not built (no nvcc)")
    with pytest.raises(ValueError, match="argument 'x': expected a tensor on cuda, got one on cpu:0"):
        mod.affine_cuda(torch.zeros(3), torch.zeros(3), A, B)


@needs_cuda
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_cuda_within_one_step(mod, dtype, shape):
    x, y = sample_inputs("cuda", dtype, shape)
    mod.affine_cuda(x, y, A, B)
    assert_within_one_step(y, x, A, B)


@needs_cuda
def test_cuda_rejects_unsupported_dtype(mod):
    x = torch.zeros(3, device="cuda", dtype=torch.float64)
    with pytest.raises(TypeError, match="argument 'x': expected dtype float32, float16 or bfloat16, got float64"):
        mod.affine_cuda(x, torch.zeros_like(x), A, B)
