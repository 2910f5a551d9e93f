"""workspace_softmax: a two-pass row softmax with a workspace, against torch.softmax on CPU and CUDA."""

import math
from pathlib import Path

import numpy as np
import pytest
import torch
import tvm_ffi

# Built by the README's commands (cmake -S . -B build) in this folder.
HERE = Path(__file__).resolve().parent
LIBRARY = HERE / "build" / "libworkspace_softmax.so"
needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
CHUNK = 4096  # elements of a row per pass-1 block (kChunk in workspace_softmax.h)
ROW_LENGTHS = [1, 7, 4097, 65536]  # one element, odd, one past a chunk, 16 chunks
DTYPES = [torch.float32, torch.float16, torch.bfloat16]
# (rtol, atol) against torch.softmax in float64. float32: x - max is rounded to float before
# exp, and half a step of |x - max| (up to ~30 here: 2e-6) becomes the result's relative
# error; 1e-5 leaves room for the sums. 16-bit types: one rounding step of the result (eps,
# relative); float16 results below 6e-5 are subnormal, where a step is 2**-24 absolute.
TOLERANCE = {torch.float32: (1e-5, 0.0), torch.float16: (torch.finfo(torch.float16).eps, 2**-24),
             torch.bfloat16: (torch.finfo(torch.bfloat16).eps, 0.0)}


@pytest.fixture(scope="module")
def mod():
    return tvm_ffi.load_module(str(LIBRARY))


def sample_inputs(device, dtype, rows, n):
    x = torch.randn(rows, n, generator=torch.Generator().manual_seed(n), dtype=torch.float64) * 3
    x = x.to(device=device, dtype=dtype)
    return x, torch.full_like(x, float("nan"))


def assert_matches_torch(y, x):
    rtol, atol = TOLERANCE[y.dtype]
    torch.testing.assert_close(y.double(), torch.softmax(x.double(), dim=-1), rtol=rtol, atol=atol)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("n", ROW_LENGTHS)
def test_cpu_matches_torch(mod, dtype, n):
    x, y = sample_inputs("cpu", dtype, 3, n)
    mod.workspace_softmax_cpu(x, y)
    assert_matches_torch(y, x)


def test_cpu_tolerance_can_fail(mod):
    # A relative error of 2e-5 in one element of a long row is caught.
    x, y = sample_inputs("cpu", torch.float32, 2, 65536)
    mod.workspace_softmax_cpu(x, y)
    y[1, 5000] *= 1 + 2e-5
    with pytest.raises(AssertionError):
        assert_matches_torch(y, x)


def test_cpu_masked_chunk_gives_zeros(mod):
    # A chunk of -inf only (an attention mask, say) adds nothing to its row's sum.
    x, y = sample_inputs("cpu", torch.float32, 2, 3 * CHUNK)
    x[0, CHUNK:2 * CHUNK] = float("-inf")
    mod.workspace_softmax_cpu(x, y)
    assert torch.all(y[0, CHUNK:2 * CHUNK] == 0)
    assert_matches_torch(y, x)


@pytest.mark.parametrize("shape", [(0, 7), (3, 0), (0, 0)], ids=str)
def test_cpu_empty_input_writes_nothing(mod, shape):
    x = torch.zeros(shape)
    mod.workspace_softmax_cpu(x, torch.empty_like(x))


@pytest.mark.parametrize("rows, n", [(1, 1), (3, 7), (3, 4096), (3, 4097), (2, 65536), (0, 5), (4, 0)])
def test_workspace_shape(mod, rows, n):
    # Two float32 planes (maxima, sums), one value per row and chunk.
    assert tuple(mod.workspace_softmax_shape_cpu(rows, n)) == (2, rows, math.ceil(n / CHUNK))


def test_workspace_shape_rejects_negative_sizes(mod):
    with pytest.raises(ValueError, match="expected rows >= 0 and n >= 0, got rows -1 and n 7"):
        mod.workspace_softmax_shape_cpu(-1, 7)


@pytest.mark.parametrize("dtype", [torch.float64, torch.int32], ids=str)
def test_cpu_rejects_unsupported_dtype(mod, dtype):
    x = torch.zeros(2, 3, dtype=dtype)
    name = str(dtype).removeprefix("torch.")
    with pytest.raises(TypeError, match=f"argument 'x': expected dtype float32, float16 or bfloat16, got {name}"):
        mod.workspace_softmax_cpu(x, torch.zeros_like(x))


@pytest.mark.parametrize(
    "x, y, error, message",
    [
        (torch.zeros(2, 3), torch.zeros(2, 3, dtype=torch.float16), TypeError,
         "argument 'y': expected dtype float32 (the dtype of 'x'), got float16"),
        (torch.zeros(2, 3), torch.zeros(2, 4), ValueError, "argument 'y': expected shape [2, 3] (the shape of 'x'), got [2, 4]"),
        (torch.zeros(3, 2).T, torch.zeros(2, 3), ValueError, "argument 'x': expected a contiguous tensor"),
        (torch.zeros(2, 3), torch.zeros(3, 2).T, ValueError, "argument 'y': expected a contiguous tensor"),
        (torch.zeros(7), torch.zeros(7), ValueError, "argument 'x': expected a 2-d tensor, got 1-d with shape [7]"),
        (torch.tensor(1.0), torch.tensor(1.0), ValueError, "argument 'x': expected a 2-d tensor, got 0-d with shape []"),
        (torch.zeros(2, 3, 4), torch.zeros(2, 3, 4), ValueError, "argument 'x': expected a 2-d tensor, got 3-d"),
    ],
)
def test_cpu_rejects_bad_input(mod, x, y, error, message):
    with pytest.raises(error) as info:
        mod.workspace_softmax_cpu(x, y)
    assert message in str(info.value)


def test_cpu_numpy_input_has_no_allocator_for_the_workspace(mod):
    # The workspace comes from the caller's framework; numpy arrays bring no allocator.
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(ValueError, match="no framework allocator is installed for this call"):
        mod.workspace_softmax_cpu(x, np.empty_like(x))


def test_cuda_entry_rejects_cpu_tensor(mod):
    if not hasattr(mod, "workspace_softmax_cuda"):
        pytest.skip("CUDA variant not built (no nvcc)")
    with pytest.raises(ValueError, match="argument 'x': expected a tensor on cuda, got one on cpu:0"):
        mod.workspace_softmax_cuda(torch.zeros(2, 3), torch.zeros(2, 3))


@needs_cuda
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("n", ROW_LENGTHS)
def test_cuda_matches_torch(mod, dtype, n):
    x, y = sample_inputs("cuda", dtype, 3, n)
    mod.workspace_softmax_cuda(x, y)
    assert_matches_torch(y, x)


@needs_cuda
def test_cuda_masked_chunk_and_many_rows(mod):
    # More rows than a grid's second dimension holds (65535): the kernels loop over rows.
    x, y = sample_inputs("cuda", torch.float32, 70000, 2 * CHUNK + 1)
    x[5, :CHUNK] = float("-inf")
    mod.workspace_softmax_cuda(x, y)
    assert torch.all(y[5, :CHUNK] == 0)
    assert_matches_torch(y, x)


@needs_cuda
def test_cuda_runs_on_the_callers_stream(mod):
    x, y = sample_inputs("cuda", torch.float32, 64, 65536)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())  # x and y are ready before the side stream reads them
    with torch.cuda.stream(side):
        mod.workspace_softmax_cuda(x, y)
        expected = torch.softmax(x.double(), dim=-1)  # ordered after the kernels on the same stream
    side.synchronize()
    torch.testing.assert_close(y.double(), expected, rtol=TOLERANCE[torch.float32][0], atol=0.0)


@needs_cuda
def test_cuda_workspace_comes_from_torchs_allocator(mod):
    # One allocation per call in torch's caching allocator: the workspace (y is the caller's).
    x, y = sample_inputs("cuda", torch.float32, 4, 65536)
    mod.workspace_softmax_cuda(x, y)
    torch.cuda.synchronize()
    before = torch.cuda.memory_stats()["allocation.all.allocated"]
    mod.workspace_softmax_cuda(x, y)
    assert torch.cuda.memory_stats()["allocation.all.allocated"] - before == 1


@needs_cuda
def test_cuda_rejects_unsupported_dtype(mod):
    x = torch.zeros(2, 3, device="cuda", dtype=torch.float64)
    with pytest.raises(TypeError, match="argument 'x': expected dtype float32, float16 or bfloat16, got float64"):
        mod.workspace_softmax_cuda(x, torch.zeros_like(x))
