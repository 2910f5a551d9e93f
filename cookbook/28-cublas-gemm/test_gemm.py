"""gemm: out = a @ b through cuBLAS (and a CPU reference), against torch.matmul in float64."""

import threading
from pathlib import Path

import numpy as np
import pytest
import torch
import tvm_ffi

# Built by the README's commands (cmake -S . -B build) in this folder.
HERE = Path(__file__).resolve().parent
LIBRARY = HERE / "build" / "libgemm.so"
needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
DTYPES = [torch.float32, torch.float16, torch.bfloat16]
# (m, k, n): one element, odd sizes, a longer sum, and empty products (k = 0 gives zeros).
SHAPES = [(1, 1, 1), (3, 5, 7), (17, 256, 33), (64, 96, 80), (0, 4, 5), (4, 0, 5), (4, 5, 0)]
# Unit roundoff of the output dtype, and half its smallest subnormal step (float16's).
UNIT = {torch.float32: 2.0**-24, torch.float16: 2.0**-11, torch.bfloat16: 2.0**-8}
TINY = {torch.float32: 0.0, torch.float16: 2.0**-25, torch.bfloat16: 0.0}


@pytest.fixture(scope="module")
def mod():
    return tvm_ffi.load_module(str(LIBRARY))


def cublas(mod):
    if not hasattr(mod, "gemm_cublas"):
        pytest.skip("cuBLAS part not built (needs nvcc, and cuBLAS from the CUDA toolkit or nvidia-cublas)")
    return mod.gemm_cublas


def sample_inputs(device, dtype, m, k, n):
    g = torch.Generator().manual_seed(m * 10007 + k * 101 + n)
    a = torch.randn(m, k, generator=g).to(device=device, dtype=dtype)
    b = torch.randn(k, n, generator=g).to(device=device, dtype=dtype)
    return a, b, torch.full((m, n), float("nan"), device=device, dtype=dtype)


def error_bound(a, b, out_dtype):
    """How far a float32 sum of k products, in any order, rounded once to out_dtype, may be
    from the exact product: (k + 1) float32 roundoffs of sum |a| |b|, and one of the output."""
    exact = torch.matmul(a.double(), b.double())
    sums = torch.matmul(a.double().abs(), b.double().abs())
    return exact, (a.shape[1] + 1) * 2.0**-24 * sums * 1.01 + UNIT[out_dtype] * exact.abs() * 1.01 + TINY[out_dtype]


def assert_matches_matmul(out, a, b):
    exact, bound = error_bound(a, b, out.dtype)
    error = (out.double() - exact).abs()
    assert not torch.isnan(out).any() and torch.all(error <= bound), f"max error {error.max()}, bound {bound.max()}"


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("m, k, n", SHAPES, ids=str)
def test_cpu_matches_matmul(mod, dtype, m, k, n):
    a, b, out = sample_inputs("cpu", dtype, m, k, n)
    mod.gemm_cpu(a, b, out)
    assert_matches_matmul(out, a, b)


def test_cpu_tolerance_can_fail(mod):
    # The bound is loose (any summation order), yet it catches float32 inputs cut to TF32's
    # 10 mantissa bits, what a GEMM allowed to use TF32 tensor cores would compute.
    a, b, out = sample_inputs("cpu", torch.float32, 17, 256, 33)
    mod.gemm_cpu(a, b, out)
    assert_matches_matmul(out, a, b)
    tf32 = [(t.view(torch.int32) & ~0x1FFF).view(torch.float32) for t in (a, b)]
    with pytest.raises(AssertionError):
        assert_matches_matmul(torch.matmul(*tf32), a, b)


def test_cpu_takes_numpy(mod):
    # The CPU reference allocates nothing through the framework: any DLPack caller works.
    a, b = np.ones((2, 3), np.float32), np.full((3, 4), 2.0, np.float32)
    out = np.zeros((2, 4), np.float32)
    mod.gemm_cpu(a, b, out)
    assert (out == 6.0).all()


@pytest.mark.parametrize(
    "a, b, out, error, message",
    [
        (torch.zeros(2, 3), torch.zeros(3, 4, dtype=torch.float16), torch.zeros(2, 4), TypeError,
         "argument 'b': expected dtype float32 (the dtype of 'a'), got float16"),
        (torch.zeros(2, 3), torch.zeros(4, 5), torch.zeros(2, 5), ValueError,
         "argument 'b': expected 3 rows (the columns of 'a', [2, 3]), got shape [4, 5]"),
        (torch.zeros(2, 3), torch.zeros(3, 4), torch.zeros(4, 2), ValueError,
         "argument 'out': expected shape [2, 4] (rows of 'a', columns of 'b'), got [4, 2]"),
        (torch.zeros(3), torch.zeros(3, 4), torch.zeros(1, 4), ValueError,
         "argument 'a': expected a 2-d tensor, got 1-d with shape [3]"),
        (torch.zeros(2, 3), torch.zeros(2, 3, 4), torch.zeros(2, 4), ValueError,
         "argument 'b': expected a 2-d tensor, got 3-d"),
        (torch.zeros(3, 2).T, torch.zeros(3, 4), torch.zeros(2, 4), ValueError,
         "argument 'a': expected a contiguous tensor"),
        (torch.zeros(2, 3), torch.zeros(4, 3).T, torch.zeros(2, 4), ValueError,
         "argument 'b': expected a contiguous tensor"),
        (torch.zeros(2, 3, dtype=torch.float64), torch.zeros(3, 4, dtype=torch.float64),
         torch.zeros(2, 4, dtype=torch.float64), TypeError,
         "argument 'a': expected dtype float32, float16 or bfloat16, got float64"),
    ],
)
def test_cpu_rejects_bad_input(mod, a, b, out, error, message):
    with pytest.raises(error) as info:
        mod.gemm_cpu(a, b, out)
    assert message in str(info.value)


def test_cpu_rejects_out_on_an_input(mod):
    a = torch.zeros(4, 4)
    with pytest.raises(ValueError, match="argument 'out': expected memory apart from 'a' and 'b', got an overlap"):
        mod.gemm_cpu(a, torch.zeros(4, 4), a)


def test_cublas_entry_rejects_cpu_tensors(mod):
    gemm_cublas = cublas(mod)
    with pytest.raises(ValueError, match="argument 'a': expected a tensor on cuda, got one on cpu:0"):
        gemm_cublas(torch.zeros(2, 3), torch.zeros(3, 4), torch.zeros(2, 4))


def test_cublas_version_is_of_the_loaded_library(mod):
    # Needs no GPU: the version comes from the libcublas.so.13 the loader picked.
    cublas(mod)
    version = mod.cublas_version_cublas()
    assert version.split(".")[0] == "13" and len(version.split(".")) == 3, version
    loaded = {line.split()[-1] for line in open("/proc/self/maps") if "libcublas.so." in line}
    assert len(loaded) == 1, loaded


@needs_cuda
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("m, k, n", SHAPES + [(129, 257, 65), (512, 1024, 768)], ids=str)
def test_cuda_matches_matmul(mod, dtype, m, k, n):
    a, b, out = sample_inputs("cuda", dtype, m, k, n)
    cublas(mod)(a, b, out)
    assert_matches_matmul(out, a, b)


@needs_cuda
def test_cuda_runs_on_the_callers_stream(mod):
    # The side stream sleeps, then writes a new a: a GEMM on any other stream reads the old a.
    a, b, out = sample_inputs("cuda", torch.float32, 256, 256, 256)
    new_a = torch.randn_like(a)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        torch.cuda._sleep(100_000_000)
        a.copy_(new_a)
        cublas(mod)(a, b, out)
    side.synchronize()
    assert_matches_matmul(out, new_a, b)


@needs_cuda
def test_cuda_workspace_comes_from_torchs_allocator(mod):
    # One allocation per call (the workspace; out is the caller's), of cuBLAS's advised size.
    a, b, out = sample_inputs("cuda", torch.float16, 256, 512, 128)
    cublas(mod)(a, b, out)
    torch.cuda.synchronize()
    before = torch.cuda.memory_stats()
    cublas(mod)(a, b, out)
    after = torch.cuda.memory_stats()
    assert after["allocation.all.allocated"] - before["allocation.all.allocated"] == 1
    advised = (32 if torch.cuda.get_device_capability()[0] >= 9 else 4) << 20
    assert after["requested_bytes.all.allocated"] - before["requested_bytes.all.allocated"] == advised


@needs_cuda
def test_cuda_without_a_framework_allocator_uses_cublas_workspace(mod):
    # tvm_ffi tensors bring no allocator and no stream: cuBLAS's own workspace, stream 0.
    a, b, out = sample_inputs("cuda", torch.float32, 64, 96, 80)
    torch.cuda.synchronize()
    before = torch.cuda.memory_stats()["allocation.all.allocated"]
    cublas(mod)(*(tvm_ffi.from_dlpack(t) for t in (a, b, out)))
    torch.cuda.synchronize()
    assert torch.cuda.memory_stats()["allocation.all.allocated"] == before
    assert_matches_matmul(out, a, b)


@needs_cuda
def test_cuda_threads_each_on_their_own_stream(mod):
    # Each thread gets its own handle; two at once must not take each other's stream or workspace.
    inputs = [sample_inputs("cuda", torch.float32, 128, 384, 64 + i) for i in range(2)]
    failures = []

    def work(a, b, out):
        try:
            stream = torch.cuda.Stream()
            stream.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(stream):
                for _ in range(50):
                    cublas(mod)(a, b, out)
            stream.synchronize()
            assert_matches_matmul(out, a, b)
        except Exception as err:  # handled: reported by the main thread below
            failures.append(err)

    threads = [threading.Thread(target=work, args=args) for args in inputs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures


@needs_cuda
@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two GPUs")
def test_cuda_uses_the_tensors_gpu(mod):
    torch.cuda.set_device(0)
    a, b, out = sample_inputs("cuda:1", torch.float32, 64, 96, 80)
    cublas(mod)(a, b, out)
    assert torch.cuda.current_device() == 0  # the guard restored the caller's device
    torch.cuda.synchronize(1)
    assert_matches_matmul(out, a, b)


@needs_cuda
def test_cuda_rejects_unsupported_dtype(mod):
    a = torch.zeros(2, 3, device="cuda", dtype=torch.float64)
    with pytest.raises(TypeError, match="argument 'a': expected dtype float32, float16 or bfloat16, got float64"):
        cublas(mod)(a, torch.zeros(3, 4, device="cuda", dtype=torch.float64),
                    torch.zeros(2, 4, device="cuda", dtype=torch.float64))
