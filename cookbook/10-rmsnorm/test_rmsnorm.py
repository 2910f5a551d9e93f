"""rmsnorm: matches torch for three dtypes and many shapes, rejects bad input, and keeps up
with torch on the CPU; the tuned CPU kernel with a copy of the same bytes (the memory roofline)
on one core, and the CUDA kernel with the device's copy from 16 MiB on."""

import math
import statistics
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
import tvm_ffi

HERE = Path(__file__).resolve().parent
LIBRARY = HERE / "build" / "librmsnorm.so"  # the README's cmake commands build it
needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU (none visible to torch)")
#: (rtol, atol) per dtype: one rounding step of the output dtype.
TOLERANCE = {"float32": (1.3e-6, 1e-5), "float16": (1e-3, 1e-3), "bfloat16": (8e-3, 8e-3)}
CPU_KERNELS = ["rms_norm_cpu", "rms_norm_cpu_tuned"]  # the plain kernel and the tuned one
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


@pytest.mark.parametrize("kernel", CPU_KERNELS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_cpu_matches_torch(mod, kernel, dtype, shape):
    check(getattr(mod, kernel), "cpu", dtype, shape)


@pytest.mark.parametrize("kernel", CPU_KERNELS)
def test_cpu_uses_eps(mod, kernel):
    rms_norm = getattr(mod, kernel)
    x = torch.zeros(2, 4)  # mean(x^2) = 0: the result is x * w / sqrt(eps) = 0, not NaN
    y = torch.empty_like(x)
    rms_norm(x, torch.ones(4), y, 1e-5)
    assert torch.equal(y, torch.zeros(2, 4))
    x = torch.full((1, 4), 1e-3)
    rms_norm(x, torch.ones(4), y[:1], 1.0)
    torch.testing.assert_close(y[:1], x / math.sqrt(1e-6 + 1.0))


#: Rows of 1024 floats: 64 KiB, where x and y stay in the caches (the tuned kernel scales a
#: row while it sums the next), and 64 MiB, where the tuned kernel takes one row at a time
#: (beyond half the last-level cache of any CPU with less than 256 MiB of it).
BOTH_PATHS = [(16, 1024), (16384, 1024)]


@pytest.mark.parametrize("kernel", CPU_KERNELS)
@pytest.mark.parametrize("shape", BOTH_PATHS, ids=str)
def test_cpu_in_place_and_wherever_y_is(mod, kernel, shape):
    """In place (y is x), and into y at every 64-byte offset of a page and off the usual
    alignment: the same result, bit for bit, as the sum's order never depends on y."""
    rms_norm = getattr(mod, kernel)
    x, w, _ = sample_inputs("cpu", torch.float32, shape)
    expected = torch.empty_like(x)
    rms_norm(x, w, expected, EPS)
    torch.testing.assert_close(expected, reference(x, w), rtol=1e-5, atol=1e-5)
    in_place = x.clone()
    rms_norm(in_place, w, in_place, EPS)
    assert torch.equal(in_place, expected)
    buffer = torch.empty(x.numel() + 1024)
    for offset in [*range(0, 1024, 16), 1, 7]:  # elements: 64 bytes apart, then unaligned
        y = buffer[offset:offset + x.numel()].view_as(x)
        rms_norm(x, w, y, EPS)
        assert torch.equal(y, expected), offset


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_cpu_tuned_16_bit_beyond_the_cache(mod, dtype):
    """64 MiB of x and y: the tuned kernel takes one row at a time and writes y past the
    caches where it is 16-byte aligned (torch's allocation), with plain stores where it is
    not (2 bytes further); both equal the plain kernel's result."""
    x, w, _ = sample_inputs("cpu", dtype, (16384, 1024))
    aligned = torch.empty_like(x)
    mod.rms_norm_cpu_tuned(x, w, aligned, EPS)
    rtol, atol = TOLERANCE[str(dtype).removeprefix("torch.")]
    torch.testing.assert_close(aligned, reference(x, w), rtol=rtol, atol=atol)
    unaligned = torch.empty(x.numel() + 1, dtype=dtype)[1:].view_as(x)
    mod.rms_norm_cpu_tuned(x, w, unaligned, EPS)
    assert torch.equal(unaligned, aligned)
    plain = torch.empty_like(x)
    mod.rms_norm_cpu(x, w, plain, EPS)
    torch.testing.assert_close(plain, aligned, rtol=rtol, atol=atol)


@pytest.mark.parametrize("kernel", CPU_KERNELS)
def test_cpu_numpy(mod, kernel):
    x = np.random.default_rng(0).standard_normal((5, 17)).astype(np.float32)
    w = np.linspace(0.5, 2.0, 17, dtype=np.float32)
    y = np.empty_like(x)
    getattr(mod, kernel)(x, w, y, EPS)
    expected = x / np.sqrt((x * x).mean(-1, keepdims=True) + EPS) * w
    np.testing.assert_allclose(y, expected, rtol=2e-6, atol=1e-6)


#: The tuned kernel's bound: at least this fraction of the copy's GB/s at every size, on one core.
TUNED_OF_COPY = 0.8


def cpu_seconds(fn) -> float:
    """Median seconds per call of ``fn`` (torch.utils.benchmark), torch on one thread."""
    from torch.utils import benchmark

    return benchmark.Timer("fn()", globals={"fn": fn}, num_threads=1).blocked_autorange(min_run_time=0.02).median


def cpu_sweep(rms_norm, good, rounds: int = 5) -> tuple[list[str], list[str]]:
    """The pages' sweep (one thread, x from 16 KiB to 16 MiB, the medians of ``rounds`` rounds in
    which ours, F.rms_norm and the copy take turns): a table, and the sizes where
    ``good(ours, torch, copy)`` failed. A size that misses is measured again, up to three
    times in all, so that a burst of load elsewhere on a shared machine does not fail the
    test; a kernel that is really slower misses every time."""
    rows, misses = [], []
    for n_rows in [4, 16, 64, 256, 1024, 4096]:
        x, w = torch.randn(n_rows, 1024), torch.randn(1024)
        y = torch.empty_like(x)
        moved = 2 * x.nbytes + w.nbytes  # GB/s: RMSNorm moves x, w and y; the copy x and y
        for attempt in range(1, 4):
            rates = [[moved / cpu_seconds(lambda: rms_norm(x, w, y, EPS)) / 1e9,
                      moved / cpu_seconds(lambda: F.rms_norm(x, (1024,), w, EPS)) / 1e9,
                      2 * x.nbytes / cpu_seconds(lambda: y.copy_(x)) / 1e9] for _ in range(rounds)]
            ours, theirs, copy = (statistics.median(r[i] for r in rates) for i in range(3))
            if good(ours, theirs, copy):
                break
        rows.append(f"{x.nbytes / 2**10:>8.0f} KiB {ours:>10.2f} {theirs:>11.2f} {copy:>10.2f} "
                    f"{ours / theirs:>11.2f} {ours / copy:>10.2f} {attempt:>9}")
        if not good(ours, theirs, copy):
            misses.append(f"{x.nbytes / 2**10:.0f} KiB")
    header = (f"{'x size':>12} {'ours GB/s':>10} {'torch GB/s':>11} {'copy GB/s':>10} {'ours/torch':>11} "
              f"{'ours/copy':>10} {'attempts':>9}")
    return [header, *rows], misses


@pytest.mark.timing  # compares timings (see conftest.py)
def test_cpu_faster_than_torch(mod):
    table, misses = cpu_sweep(mod.rms_norm_cpu, lambda ours, theirs, copy: ours >= theirs)
    print("", *table, sep="\n")
    assert not misses, "rms_norm_cpu slower than torch at " + ", ".join(misses) + "\n" + "\n".join(table)


@pytest.mark.timing
def test_cpu_tuned_near_the_copy_roofline_and_faster_than_torch(mod):
    table, misses = cpu_sweep(mod.rms_norm_cpu_tuned,
                              lambda ours, theirs, copy: ours >= TUNED_OF_COPY * copy and ours >= theirs)
    print("", *table, sep="\n")
    assert not misses, (f"rms_norm_cpu_tuned below {TUNED_OF_COPY} of the copy or slower than torch at "
                        + ", ".join(misses) + "\n" + "\n".join(table))


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


@pytest.mark.parametrize("kernel", CPU_KERNELS)
@pytest.mark.parametrize("make, error, message", BAD_INPUTS, ids=BAD_IDS)
def test_cpu_rejects_bad_input(mod, kernel, make, error, message):
    with pytest.raises(error) as info:
        getattr(mod, kernel)(*make("cpu"))
    assert message in str(info.value)


def test_cuda_entry_rejects_cpu_tensor(mod):
    if not hasattr(mod, "rms_norm_cuda"):
        pytest.skip("CUDA variant not built (no nvcc)")
    with pytest.raises(ValueError, match="argument 'x': expected a tensor on cuda, got one on cpu:0"):
        mod.rms_norm_cuda(*sample_inputs("cpu", torch.float32, (2, 3)), EPS)


#: Every launch of rms_norm_cuda: a warp per row with 1, 2, 4 or 8 packs of 16 bytes per
#: thread, a block per row (the tail of 100_000 read a second time), many rows, and rows
#: that do not start on 16 bytes (33 and 4097 elements: one element per access).
CUDA_SHAPES = SHAPES + [(9, 256), (9, 512), (9, 1024), (3, 1000), (5, 4096), (3, 100_000), (70_000, 4), (3, 4097)]


@needs_cuda
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", CUDA_SHAPES, ids=str)
def test_cuda_matches_torch(mod, dtype, shape):
    check(mod.rms_norm_cuda, "cuda", dtype, shape)


@needs_cuda
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cuda_in_place_and_off_16_bytes(mod, dtype):
    """y is x; and y one element past a 16-byte boundary, which takes one element per access."""
    x, w, _ = sample_inputs("cuda", dtype, (64, 1024))
    rtol, atol = TOLERANCE[str(dtype).removeprefix("torch.")]
    in_place = x.clone()
    mod.rms_norm_cuda(in_place, w, in_place, EPS)
    torch.testing.assert_close(in_place, reference(x, w), rtol=rtol, atol=atol)
    shifted = torch.empty(x.numel() + 1, device="cuda", dtype=dtype)[1:].view_as(x)
    mod.rms_norm_cuda(x, w, shifted, EPS)
    torch.testing.assert_close(shifted, reference(x, w), rtol=rtol, atol=atol)


@needs_cuda
def test_cuda_uses_the_callers_stream(mod):
    """tvm_ffi passes torch's current stream: the kernel runs on it, ordered after its work."""
    stream = torch.cuda.Stream()
    x, w, y = sample_inputs("cuda", torch.float32, (4096, 1024))
    with torch.cuda.stream(stream):
        torch.cuda._sleep(50_000_000)  # keeps `stream` busy, so that x2 is written late
        x2 = x * 2
        mod.rms_norm_cuda(x2, w, y, EPS)  # on another stream it would read x2 before it is written
    stream.synchronize()
    torch.testing.assert_close(y, reference(x * 2, w), rtol=1e-5, atol=1e-5)


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


#: The GPU sweep of the page: rows of 1024, 4096 and 8192 elements, x from 16 MiB to 1 GiB,
#: where memory sets the pace.
GPU_HIDDEN, GPU_X_MIB, GPU_ROUNDS = (1024, 4096, 8192), (16, 64, 256, 1024), 3


def gpu_point(rms_norm, dtype, hidden, mib) -> dict:
    """GB/s (bytes read + written) of ``rms_norm`` and of the copy, and their ratio, the medians of
    GPU_ROUNDS rounds in which the two take turns, each timed with triton.testing.do_bench (the
    L2 cache flushed before every call, the median of the calls)."""
    from triton.testing import do_bench

    x = torch.randn((mib << 20) // dtype.itemsize // hidden, hidden, device="cuda", dtype=dtype)
    w = torch.randn(hidden, device="cuda", dtype=dtype)
    y = torch.empty_like(x)
    rounds = [((2 * x.nbytes + w.nbytes) / do_bench(lambda: rms_norm(x, w, y, EPS), warmup=5, rep=20,
                                                    return_mode="median") / 1e6,
               2 * x.nbytes / do_bench(lambda: y.copy_(x), warmup=5, rep=20, return_mode="median") / 1e6)
              for _ in range(GPU_ROUNDS)]
    return {"dtype": str(dtype).removeprefix("torch."), "hidden": hidden, "mib": mib,
            "ours": statistics.median(r[0] for r in rounds), "copy": statistics.median(r[1] for r in rounds),
            "of_copy": statistics.median(r[0] / r[1] for r in rounds)}


#: The CUDA kernel's goal, as the page states it: at least this fraction of the copy's GB/s.
CUDA_OF_COPY = 0.9


@needs_cuda
@pytest.mark.timing
def test_cuda_near_the_copy_roofline(mod):
    points = [gpu_point(mod.rms_norm_cuda, dtype, hidden, mib)
              for dtype in DTYPES for hidden in GPU_HIDDEN for mib in GPU_X_MIB]
    for p in points:
        print(f"{p['dtype']:>9} hidden {p['hidden']:>5} {p['mib']:>5} MiB  ours {p['ours']:>7.0f}  "
              f"copy {p['copy']:>7.0f} GB/s  ours/copy {p['of_copy']:.2f}")
    slow = [f"{p['dtype']} hidden {p['hidden']} {p['mib']} MiB: {p['of_copy']:.2f}"
            for p in points if p["of_copy"] < CUDA_OF_COPY]
    assert not slow, f"below {CUDA_OF_COPY} of the copy: {slow}"
