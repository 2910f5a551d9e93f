"""strided_views: y = a * x + b over views of any strides, against torch on CPU and CUDA."""

from pathlib import Path

import numpy as np
import pytest
import torch
import tvm_ffi

# Built by the README's commands (cmake -S . -B build) in this folder.
HERE = Path(__file__).resolve().parent
LIBRARY = HERE / "build" / "libstrided_views.so"
needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
A, B = 2.5, -1.0
# (rtol, atol): a * x + b is one multiply and one add in float32 (or one fused multiply-add);
# torch may round once where we round twice: one float32 step of the result, relative.
RTOL, ATOL = 1.2e-7, 1e-6


@pytest.fixture(scope="module")
def mod():
    return tvm_ffi.load_module(str(LIBRARY))


def base(*shape, device="cpu"):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(sum(shape))).to(device)


def sample_inputs(device):
    """(name, x, y): views of every kind the strided kernel takes; y starts as NaN."""
    nan = float("nan")
    return [
        ("transposed", base(7, 5, device=device).T, torch.full((5, 7), nan, device=device)),
        ("into_transposed", base(5, 7, device=device), torch.full((7, 5), nan, device=device).T),
        ("step", base(6, 10, device=device)[:, ::2], torch.full((6, 5), nan, device=device)),
        ("step_out", base(6, 5, device=device), torch.full((6, 10), nan, device=device)[:, 1::2]),
        ("expanded_x", base(1, 9, device=device).expand(4, 9), torch.full((4, 9), nan, device=device)),
        ("permuted_3d", base(2, 3, 4, device=device).permute(2, 0, 1), torch.full((4, 2, 3), nan, device=device)),
        ("rank_6", base(2, 1, 3, 1, 2, 3, device=device).transpose(0, 5), torch.full((3, 1, 3, 1, 2, 2), nan, device=device)),
        ("rank_1", base(11, device=device)[::3], torch.full((4,), nan, device=device)),
        ("rank_0", base(1, device=device)[0], torch.tensor(nan, device=device)),
        ("contiguous", base(3, 4, device=device), torch.full((3, 4), nan, device=device)),
    ]


def assert_matches_torch(y, x):
    torch.testing.assert_close(y, A * x + B, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("case", range(10), ids=[c[0] for c in sample_inputs("cpu")])
def test_cpu_matches_torch(mod, case):
    _, x, y = sample_inputs("cpu")[case]
    mod.strided_axpb_cpu(x, y, A, B)
    assert_matches_torch(y, x)


def test_cpu_tolerance_can_fail(mod):
    _, x, y = sample_inputs("cpu")[0]
    mod.strided_axpb_cpu(x, y, A, B)
    y[2, 3] += 1e-5 + abs(y[2, 3]) * 1e-6  # about ten float32 steps off, in one element
    with pytest.raises(AssertionError):
        assert_matches_torch(y, x)


def test_cpu_in_place_on_the_same_view(mod):
    x = base(8, 6).T
    expected = A * x + B
    mod.strided_axpb_cpu(x, x, A, B)
    torch.testing.assert_close(x, expected, rtol=RTOL, atol=ATOL)


def test_numpy_negative_strides_come_through_and_are_walked(mod):
    # torch has no negative strides; numpy's reversed views reach tvm_ffi through DLPack as
    # they are (the data pointer at the first element, strides below zero).
    x = np.arange(24, dtype=np.float32).reshape(4, 6)[::-1, ::-2]
    y = np.full((8, 3), np.nan, np.float32)[::-2]
    assert tvm_ffi.from_dlpack(x).strides == (-6, -2)
    mod.strided_axpb_cpu(x, y, A, B)
    np.testing.assert_allclose(y, A * x + B, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("shape", [(0,), (3, 0), (0, 2**40)], ids=str)
def test_cpu_empty_views_write_nothing(mod, shape):
    x = torch.empty(shape)
    mod.strided_axpb_cpu(x.transpose(0, -1), torch.empty(shape).transpose(0, -1), A, B)


def test_contiguous_kernel_matches_and_refuses_a_view(mod):
    x, y = base(3, 4), torch.empty(3, 4)
    mod.contiguous_axpb_cpu(x, y, A, B)
    assert_matches_torch(y, x)
    with pytest.raises(ValueError, match=r"argument 'x': expected a contiguous tensor, got strides \[1, 3\]"):
        mod.contiguous_axpb_cpu(base(4, 3).T, y, A, B)


BUFFER = torch.zeros(64)
BAD = [
    (torch.zeros(2, 3), torch.zeros(3, 2), ValueError, "argument 'y': expected shape [2, 3] (the shape of 'x'), got [3, 2]"),
    (torch.zeros(2, 3, dtype=torch.float64), torch.zeros(2, 3), TypeError, "argument 'x': expected dtype float32, got float64"),
    (torch.zeros(2, 3), torch.zeros(2, 3, dtype=torch.float16), TypeError,
     "argument 'y': expected dtype float32 (the dtype of 'x'), got float16"),
    (torch.zeros([1] * 7), torch.zeros([1] * 7), ValueError,
     "argument 'x': expected at most 6 dimensions, got 7 with shape [1, 1, 1, 1, 1, 1, 1]"),
    (torch.zeros(3, 4), torch.zeros(3, 1).expand(3, 4), ValueError, "argument 'y': has overlapping elements (a zero stride)"),
    (torch.zeros(3, 3), torch.zeros(5).as_strided((3, 3), (1, 1)), ValueError,
     "argument 'y': has overlapping elements (strides [1, 1] for shape [3, 3])"),
    (BUFFER[:32], BUFFER[1:33], ValueError, "argument 'y': overlaps 'x' in memory"),
]


@pytest.mark.parametrize("x, y, error, message", BAD, ids=[b[3][:40] for b in BAD])
def test_cpu_rejects_bad_input(mod, x, y, error, message):
    with pytest.raises(error) as info:
        mod.strided_axpb_cpu(x, y, A, B)
    assert message in str(info.value)


def test_cpu_rejects_a_view_that_reaches_too_far(mod):
    # A made-up stride (numpy's as_strided checks nothing): 2^47 elements a step reaches
    # past any memory a process holds, so the kernel refuses it before reading.
    x = np.zeros(2, np.float32)
    fake = np.lib.stride_tricks.as_strided(np.zeros(1, np.float32), shape=(2,), strides=(4 * 2**47,))
    with pytest.raises(ValueError, match=r"argument 'y': strides \[140737488355328\] for shape \[2\] reach beyond 2\^46"):
        mod.strided_axpb_cpu(x, fake, A, B)


def test_cuda_entry_rejects_cpu_tensor(mod):
    if not hasattr(mod, "strided_axpb_cuda"):
        pytest.skip("CUDA variant not built (no nvcc)")
    with pytest.raises(ValueError, match="argument 'x': expected a tensor on cuda, got one on cpu:0"):
        mod.strided_axpb_cuda(torch.zeros(2, 3), torch.zeros(2, 3), A, B)


@needs_cuda
@pytest.mark.parametrize("case", range(10), ids=[c[0] for c in sample_inputs("cpu")])
def test_cuda_matches_torch(mod, case):
    _, x, y = sample_inputs("cuda")[case]
    mod.strided_axpb_cuda(x, y, A, B)
    assert_matches_torch(y, x)


@needs_cuda
def test_cuda_large_transposed_view(mod):
    x = torch.randn(3000, 2000, device="cuda").T  # more elements than one pass of the grid
    y = torch.empty(2000, 3000, device="cuda")
    mod.strided_axpb_cuda(x, y, A, B)
    assert_matches_torch(y, x)
