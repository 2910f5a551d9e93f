"""nvshmem_ring: the CPU reference of the ring, NVSHMEM start-up checks, and the ring on GPUs."""

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import tvm_ffi

# Built by the README's commands (cmake -S . -B build) in this folder.
HERE = Path(__file__).resolve().parent
LIBRARY = HERE / "build" / "libnvshmem_ring.so"


def nvshmem_installed() -> bool:
    try:
        import nvidia.nvshmem  # noqa: F401  (the package of the nvidia-nvshmem-cu13 wheel)
    except ImportError:
        return False
    return True


needs_nvshmem = pytest.mark.skipif(not (torch.cuda.is_available() and nvshmem_installed()),
                                   reason="needs a CUDA GPU and the nvidia-nvshmem-cu13 package")
SHAPES = [(1, 5), (4, 3), (3, 2, 2), (0, 4), (2, 0)]


@pytest.fixture(scope="module")
def mod():
    return tvm_ffi.load_module(str(LIBRARY))


@pytest.fixture(scope="module")
def shmem(mod):
    if not hasattr(mod, "shmem_init_nvshmem"):
        pytest.skip("NVSHMEM variant not built (needs nvcc and nvidia-nvshmem-cu13)")
    return mod


def sample_inputs(shape, dtype=torch.float32):
    x = torch.randn(shape, generator=torch.Generator().manual_seed(0)).to(dtype)
    return x, torch.empty_like(x)


def reference(x):
    """Row p receives row p - 1: a roll by one along the PE axis."""
    return torch.roll(x, 1, dims=0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64], ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_ring_shift_cpu_matches_roll(mod, shape, dtype):
    x, y = sample_inputs(shape, dtype)
    mod.ring_shift_cpu(x, y)
    torch.testing.assert_close(y, reference(x), rtol=0, atol=0)


@pytest.mark.parametrize(
    "x, y, error, message",
    [
        (np.zeros((2, 3), np.float32), np.zeros((3, 2), np.float32), ValueError, "argument 'y': expected shape [2, 3]"),
        (np.zeros((2, 3), np.float32), np.zeros((2, 3), np.int32), TypeError, "argument 'y': expected dtype float32"),
        (np.zeros((3, 2), np.float32).T, np.zeros((2, 3), np.float32), ValueError, "argument 'x': expected a contiguous tensor"),
    ],
)
def test_ring_shift_cpu_rejects_bad_input(mod, x, y, error, message):
    with pytest.raises(error) as info:
        mod.ring_shift_cpu(x, y)
    assert message in str(info.value)


# These run on any machine with the NVSHMEM variant built: they fail before a GPU is needed.
def test_unique_id_is_128_opaque_bytes(shmem):
    unique_id = shmem.shmem_unique_id_nvshmem()
    assert isinstance(unique_id, bytes) and len(unique_id) == 128


@pytest.mark.parametrize(
    "args, error, message",
    [
        ((0, 0, bytes(128), 0), ValueError, "argument 'npes': expected >= 1, got 0"),
        ((2, 2, bytes(128), 0), ValueError, "argument 'rank': expected 0 <= rank < 2, got 2"),
        ((0, 1, bytes(128), -1), ValueError, "argument 'device_id': expected >= 0, got -1"),
        ((0, 1, bytes(5), 0), ValueError, "argument 'unique_id': expected 128 bytes from shmem_unique_id_nvshmem, got 5"),
        ((0, 1, "abc", 0), TypeError, "Expected `bytes`"),
    ],
)
def test_init_rejects_bad_arguments(shmem, args, error, message):
    with pytest.raises(error) as info:
        shmem.shmem_init_nvshmem(*args)
    assert message in str(info.value)


@pytest.mark.parametrize("call", [
    lambda m: m.shmem_empty_nvshmem((4,), "float32"),
    lambda m: m.shmem_finalize_nvshmem(),
])
def test_calls_before_init_are_runtime_errors(shmem, call):
    with pytest.raises(RuntimeError, match="NVSHMEM is not initialised in this process"):
        call(shmem)


def test_ring_put_rejects_cpu_tensors(shmem):
    with pytest.raises(ValueError, match="argument 'src': expected a tensor on cuda, got one on cpu:0"):
        shmem.ring_put_nvshmem(torch.zeros(4), torch.zeros(4))


@pytest.mark.skipif(torch.cuda.is_available(), reason="without a GPU, init fails in cudaSetDevice")
def test_init_without_a_gpu_is_a_runtime_error(shmem):
    with pytest.raises(RuntimeError, match="CUDA"):
        shmem.shmem_init_nvshmem(0, 1, shmem.shmem_unique_id_nvshmem(), 0)


def torchrun(*args, script_args=(), timeout=300):
    """``torchrun ARGS ring_torchrun.py SCRIPT_ARGS`` with this Python, from this folder."""
    return subprocess.run([sys.executable, "-m", "torch.distributed.run", *args, "ring_torchrun.py", *script_args],
                          cwd=HERE, capture_output=True, text=True, timeout=timeout)


def test_torchrun_ranks_receive_the_identical_unique_id():
    """The bootstrap, on any machine: two ranks in a gloo group, rank 0's id broadcast to both."""
    done = torchrun("--standalone", "--nproc-per-node", "2")
    assert done.returncode == 0, done.stderr[-3000:]
    ranks = re.findall(r"^rank (\d)/2: unique id of (\d+) bytes from (.+), sha256 (\w+)$", done.stdout, re.M)
    assert sorted(r[0] for r in ranks) == ["0", "1"], done.stdout
    assert {r[1] for r in ranks} == {"128"}
    assert len({r[3] for r in ranks}) == 1, ranks  # the same bytes on every rank
    built = hasattr(tvm_ffi.load_module(str(LIBRARY)), "shmem_unique_id_nvshmem")
    assert {r[2] for r in ranks} == {"shmem_unique_id_nvshmem" if built else "a random stand-in"}


@needs_nvshmem
def test_one_pe_under_torchrun():
    """One PE: PE 0 is its own right neighbour."""
    done = torchrun("--standalone", "--nproc-per-node", "1", script_args=("--floats", "4097"))
    assert done.returncode == 0, done.stderr[-3000:]
    assert "1 PEs: every PE received its left neighbour's data" in done.stdout


@needs_nvshmem
@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two GPUs")
def test_every_gpu_is_a_pe():
    done = torchrun("--standalone", "--nproc-per-node", str(torch.cuda.device_count()))
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"{torch.cuda.device_count()} PEs: every PE received its left neighbour's data" in done.stdout


@needs_nvshmem
def test_single_pe_in_process(shmem):
    """One PE in this process: dtypes, sizes and every error path that needs a live heap."""
    unique_id = shmem.shmem_unique_id_nvshmem()
    assert shmem.shmem_init_nvshmem(0, 1, unique_id, 0) == 0
    with pytest.raises(RuntimeError, match="already initialised"):
        shmem.shmem_init_nvshmem(0, 1, unique_id, 0)
    for dtype, n in [(torch.float32, 1), (torch.float16, 1000), (torch.bfloat16, 70000), (torch.int32, 0)]:
        src = torch.from_dlpack(shmem.shmem_empty_nvshmem((n,), str(dtype).removeprefix("torch.")))
        dst = torch.from_dlpack(shmem.shmem_empty_nvshmem((n,), str(dtype).removeprefix("torch.")))
        assert src.device == torch.device("cuda:0") and src.dtype == dtype and src.shape == (n,)
        src.copy_(torch.arange(n, device="cuda").to(dtype))
        shmem.ring_put_nvshmem(src, dst)
        torch.cuda.synchronize()
        torch.testing.assert_close(dst, src, rtol=0, atol=0)
        del src, dst
    symmetric = torch.from_dlpack(shmem.shmem_empty_nvshmem((8,), "float32"))
    private = torch.zeros(8, device="cuda")
    with pytest.raises(ValueError, match="argument 'dst': expected a tensor on the NVSHMEM symmetric heap"):
        shmem.ring_put_nvshmem(symmetric, private)
    with pytest.raises(RuntimeError, match="1 symmetric tensor\\(s\\) are still alive"):
        shmem.shmem_finalize_nvshmem()
    del symmetric
    shmem.shmem_finalize_nvshmem()
