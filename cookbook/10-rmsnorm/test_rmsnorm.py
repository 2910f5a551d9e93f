"""rmsnorm: matches torch for three dtypes and many shapes, rejects bad input, and on
the CPU keeps up with a copy of the same bytes (the memory roofline) and with torch."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
import tvm_ffi

from ffi_cookbook.testing import TOLERANCE, best_seconds, build_dir, needs_cuda

LIBRARY = build_dir(__file__) / "librmsnorm.so"
SHAPES = [(1, 1), (3, 5), (7, 33), (2, 3, 4097), (16, 1024), (0, 8), (4, 0), (2, 0, 3)]
DTYPES = [torch.float32, torch.float16, torch.bfloat16]
EPS = 1e-6


@pytest.fixture(scope="module")
def mod():
    return tvm_ffi.load_module(str(LIBRARY))


def sample_inputs(device, dtype, shape):
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(shape, generator=gen).to(device=device, dtype=dtype)
    w = torch.randn(shape[-1], generator=gen).to(device=device, dtype=dtype)
    return x, w, torch.full_like(x, math.nan)


def reference(x, w, eps=EPS):
    """The formula in float32, rounded once to the input dtype."""
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * w.float()).to(x.dtype)


def check(mod_fn, device, dtype, shape):
    x, w, y = sample_inputs(device, dtype, shape)
    mod_fn(x, w, y, EPS)
    rtol, atol = TOLERANCE[str(dtype).removeprefix("torch.")]
    torch.testing.assert_close(y, reference(x, w), rtol=rtol, atol=atol)
    torch.testing.assert_close(y, F.rms_norm(x, (shape[-1],), w, EPS), rtol=rtol, atol=atol)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_cpu_matches_torch(mod, dtype, shape):
    check(mod.rms_norm_cpu, "cpu", dtype, shape)


def test_cpu_uses_eps(mod):
    x = torch.zeros(2, 4)  # mean(x^2) = 0: the result is x * w / sqrt(eps) = 0, not NaN
    y = torch.empty_like(x)
    mod.rms_norm_cpu(x, torch.ones(4), y, 1e-5)
    assert torch.equal(y, torch.zeros(2, 4))
    x = torch.full((1, 4), 1e-3)
    mod.rms_norm_cpu(x, torch.ones(4), y[:1], 1.0)
    torch.testing.assert_close(y[:1], x / math.sqrt(1e-6 + 1.0))


#: Rows of 1024 floats: 64 KiB, where x and y stay in the caches and a row is scaled while
#: the next one is summed, and 64 MiB, where the kernel takes one row at a time (beyond
#: half the last-level cache of any CPU with less than 256 MiB of it).
BOTH_PATHS = [(16, 1024), (16384, 1024)]


@pytest.mark.parametrize("shape", BOTH_PATHS, ids=str)
def test_cpu_in_place_and_wherever_y_is(mod, shape):
    """In place (y is x), and into y at every 64-byte offset of a page and off the usual
    alignment: the same result, bit for bit, as the sum's order never depends on y."""
    x, w, _ = sample_inputs("cpu", torch.float32, shape)
    expected = torch.empty_like(x)
    mod.rms_norm_cpu(x, w, expected, EPS)
    torch.testing.assert_close(expected, reference(x, w), rtol=1e-5, atol=1e-5)
    in_place = x.clone()
    mod.rms_norm_cpu(in_place, w, in_place, EPS)
    assert torch.equal(in_place, expected)
    buffer = torch.empty(x.numel() + 1024)
    for offset in [*range(0, 1024, 16), 1, 7]:  # elements: 64 bytes apart, then unaligned
        y = buffer[offset:offset + x.numel()].view_as(x)
        mod.rms_norm_cpu(x, w, y, EPS)
        assert torch.equal(y, expected), offset


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_cpu_16_bit_beyond_the_cache(mod, dtype):
    """64 MiB of x and y: one row at a time, y written past the caches where it is 16-byte
    aligned (torch's allocation) and with plain stores where it is not (2 bytes further)."""
    x, w, _ = sample_inputs("cpu", dtype, (16384, 1024))
    aligned = torch.empty_like(x)
    mod.rms_norm_cpu(x, w, aligned, EPS)
    rtol, atol = TOLERANCE[str(dtype).removeprefix("torch.")]
    torch.testing.assert_close(aligned, reference(x, w), rtol=rtol, atol=atol)
    unaligned = torch.empty(x.numel() + 1, dtype=dtype)[1:].view_as(x)
    mod.rms_norm_cpu(x, w, unaligned, EPS)
    assert torch.equal(unaligned, aligned)


def test_cpu_numpy(mod):
    x = np.random.default_rng(0).standard_normal((5, 17)).astype(np.float32)
    w = np.linspace(0.5, 2.0, 17, dtype=np.float32)
    y = np.empty_like(x)
    mod.rms_norm_cpu(x, w, y, EPS)
    expected = x / np.sqrt((x * x).mean(-1, keepdims=True) + EPS) * w
    np.testing.assert_allclose(y, expected, rtol=2e-6, atol=1e-6)


#: ``ours/copy``: the goal at every size, and the floor below which the test fails. On an AMD
#: EPYC (Zen 4, two cores of a virtual machine), two runs of this test alone measured 0.86 to
#: 1.24 from 16 KiB to 16 MiB, with y wherever torch put it; scaling upward, as the kernel did
#: before it scaled downward, y 64 bytes after x in its page gave 0.55 to 0.74 from 64 KiB to
#: 4 MiB (standalone runs). The floor is what a plain loop for the sum and one for the
#: scaling gets (0.57 at its worst), so it catches that.
GOAL, FLOOR = 0.8, 0.6


@pytest.mark.timing  # compares timings: run alone (make test's serial pass)
def test_cpu_near_the_copy_roofline_and_faster_than_torch(mod):
    """The notebook's sweep (one thread, the same three calls, best_seconds). A size that
    misses is measured again, up to three times in all, so that a burst of load elsewhere on
    a shared machine does not fail the test; a kernel that is really slower misses every time."""
    rows, misses = [], []
    for n_rows in [4, 16, 64, 256, 1024, 4096]:  # x from 16 KiB to 16 MiB, as on the page
        x, w = torch.randn(n_rows, 1024), torch.randn(1024)
        y = torch.empty_like(x)
        for attempt in range(1, 4):
            t_ours, t_torch, t_copy = best_seconds([lambda: mod.rms_norm_cpu(x, w, y, EPS),
                                                    lambda: F.rms_norm(x, (1024,), w, EPS),
                                                    lambda: y.copy_(x)], threads=1)
            # GB/s: RMSNorm moves x, w and y; the copy x and y
            ours, theirs = (2 * x.nbytes + w.nbytes) / t_ours / 1e9, (2 * x.nbytes + w.nbytes) / t_torch / 1e9
            copy = 2 * x.nbytes / t_copy / 1e9
            if ours >= GOAL * copy and ours >= theirs:
                break
        rows.append(f"{x.nbytes / 2**10:>8.0f} KiB {ours:>10.2f} {theirs:>11.2f} {copy:>10.2f} "
                    f"{ours / theirs:>11.2f} {ours / copy:>10.2f} {attempt:>9} {(y.data_ptr() - x.data_ptr()) % 4096:>8} B"
                    + ("" if ours >= GOAL * copy else f"  below the goal of {GOAL}"))
        if not (ours >= FLOOR * copy and ours >= theirs):
            misses.append(f"{x.nbytes / 2**10:.0f} KiB")
    print(f"\n{'x size':>10} {'ours GB/s':>10} {'torch GB/s':>11} {'copy GB/s':>10} {'ours/torch':>11} "
          f"{'ours/copy':>10} {'attempts':>9} {'y after x in page':>18}", *rows, sep="\n")
    assert not misses, f"below {FLOOR} of the copy or slower than torch at {misses}:\n" + "\n".join(rows)


def zeros(*shape, device="cpu", dtype=torch.float32):
    return torch.zeros(shape, device=device, dtype=dtype)


# (make(device) -> arguments, error type, message); every tensor is made on `device`.
BAD_INPUTS = [
    (lambda d: (zeros(8, device=d), zeros(8, device=d), zeros(8, device=d), EPS),
     ValueError, "argument 'x': expected a tensor with 2 or more dimensions"),
    (lambda d: (zeros(8, 4, device=d).t(), zeros(8, device=d), zeros(4, 8, device=d), EPS),
     ValueError, "argument 'x': expected a contiguous tensor"),
    (lambda d: (zeros(4, 8, device=d), zeros(1, 8, device=d), zeros(4, 8, device=d), EPS),
     ValueError, "argument 'weight': expected a 1-d tensor, got 2-d"),
    (lambda d: (zeros(4, 8, device=d), zeros(7, device=d), zeros(4, 8, device=d), EPS),
     ValueError, "argument 'weight': expected 8 elements (the last dimension of 'x'), got 7"),
    (lambda d: (zeros(4, 8, device=d), zeros(8, device=d, dtype=torch.float16), zeros(4, 8, device=d), EPS),
     TypeError, "argument 'weight': expected dtype float32 (the dtype of 'x'), got float16"),
    (lambda d: (zeros(4, 8, device=d), zeros(16, device=d)[::2], zeros(4, 8, device=d), EPS),
     ValueError, "argument 'weight': expected a contiguous tensor"),
    (lambda d: (zeros(4, 8, device=d), zeros(8, device=d), zeros(4, 9, device=d), EPS),
     ValueError, "argument 'y': expected shape [4, 8]"),
    (lambda d: (zeros(4, 8, device=d), zeros(8, device=d), zeros(4, 8, device=d, dtype=torch.float64), EPS),
     TypeError, "argument 'y': expected dtype float32"),
    (lambda d: (zeros(4, 8, device=d), zeros(8, device=d), zeros(4, 8, device=d), 0.0),
     ValueError, "argument 'eps': expected a positive number, got 0"),
    (lambda d: (zeros(4, 8, device=d), zeros(8, device=d), zeros(4, 8, device=d), -1e-6),
     ValueError, "argument 'eps': expected a positive number, got -1e-06"),
    (lambda d: (zeros(4, 8, device=d), zeros(8, device=d), zeros(4, 8, device=d), math.nan),
     ValueError, "argument 'eps': expected a positive number, got nan"),
    (lambda d: tuple(zeros(*s, device=d, dtype=torch.int32) for s in [(4, 8), (8,), (4, 8)]) + (EPS,),
     TypeError, "argument 'x': expected dtype float32, float16 or bfloat16, got int32"),
]
BAD_IDS = [message.split(": ", 1)[0] + f" #{i}" for i, (_, _, message) in enumerate(BAD_INPUTS)]


@pytest.mark.parametrize("make, error, message", BAD_INPUTS, ids=BAD_IDS)
def test_cpu_rejects_bad_input(mod, make, error, message):
    with pytest.raises(error) as info:
        mod.rms_norm_cpu(*make("cpu"))
    assert message in str(info.value)


def test_cuda_entry_rejects_cpu_tensor(mod):
    if not hasattr(mod, "rms_norm_cuda"):
        pytest.skip("CUDA variant not built (no nvcc)")
    with pytest.raises(ValueError, match="argument 'x': expected a tensor on cuda, got one on cpu:0"):
        mod.rms_norm_cuda(*sample_inputs("cpu", torch.float32, (2, 3)), EPS)


@needs_cuda
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", SHAPES + [(3, 100_000), (70_000, 4)], ids=str)
def test_cuda_matches_torch(mod, dtype, shape):
    check(mod.rms_norm_cuda, "cuda", dtype, shape)


@needs_cuda
@pytest.mark.parametrize("make, error, message", BAD_INPUTS, ids=BAD_IDS)
def test_cuda_rejects_bad_input(mod, make, error, message):
    with pytest.raises(error) as info:
        mod.rms_norm_cuda(*make("cuda"))
    assert message in str(info.value)


@needs_cuda
def test_cuda_rejects_weight_on_cpu(mod):
    x, w, y = sample_inputs("cuda", torch.float32, (2, 3))
    with pytest.raises(ValueError, match="argument 'weight': expected a tensor on cuda:0"):
        mod.rms_norm_cuda(x, w.cpu(), y, EPS)
