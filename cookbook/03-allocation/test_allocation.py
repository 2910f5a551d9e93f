"""allocation: FromEnvAlloc, FromNDAlloc, the unload hazard and DLPack round trips."""

import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import tvm_ffi

# Built by the README's commands (cmake -S . -B build) in this folder.
HERE = Path(__file__).resolve().parent
BUILD = HERE / "build"
needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
SHAPES = [(0,), (1,), (7,), (3, 5)]
ALLOCATING = ["alloc_twice_env_cpu", "alloc_twice_raw_env_cpu", "alloc_twice_nd_cpu"]


@pytest.fixture(scope="module")
def mod():
    return tvm_ffi.load_module(str(BUILD / "liballocation.so"))


def sample_inputs(device, shape):
    return torch.randn(shape, generator=torch.Generator().manual_seed(0)).to(device)


def reference(x):
    return 2 * x


@pytest.mark.parametrize("name", ALLOCATING)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_cpu_torch_input_gives_torch_result(mod, name, shape):
    x = sample_inputs("cpu", shape)
    y = getattr(mod, name)(x)
    assert isinstance(y, torch.Tensor) and y.shape == x.shape
    assert x.numel() == 0 or y.data_ptr() != x.data_ptr()  # a new buffer, not x's
    torch.testing.assert_close(y, reference(x), rtol=0, atol=0)


def test_nd_alloc_serves_numpy(mod):
    x = np.arange(5, dtype=np.float32)
    y = mod.alloc_twice_nd_cpu(x)
    assert isinstance(y, tvm_ffi.Tensor)
    np.testing.assert_array_equal(np.from_dlpack(y), 2 * x)


def test_env_alloc_without_framework_is_value_error(mod):
    with pytest.raises(ValueError, match="no framework allocator is installed for this call"):
        mod.alloc_twice_env_cpu(np.zeros(3, np.float32))


def test_raw_env_alloc_without_framework_is_runtime_error(mod):
    with pytest.raises(RuntimeError, match="TVMFFIEnvTensorAlloc: allocator is nullptr"):
        mod.alloc_twice_raw_env_cpu(np.zeros(3, np.float32))


@pytest.mark.parametrize("name", ALLOCATING)
def test_rejects_bad_dtype(mod, name):
    with pytest.raises(TypeError, match="argument 'x': expected dtype float32, got float64"):
        getattr(mod, name)(torch.zeros(3, dtype=torch.float64))


@pytest.mark.parametrize("name", ALLOCATING)
def test_rejects_strided(mod, name):
    with pytest.raises(ValueError, match="argument 'x': expected a contiguous tensor"):
        getattr(mod, name)(torch.zeros(3, 4).T)


@pytest.mark.parametrize("versioned", [False, True])
@pytest.mark.parametrize("make", [lambda: tvm_ffi.from_dlpack(np.ones(4, np.float32)),
                                  lambda: torch.ones(2, 3)], ids=["tvm_ffi", "torch"])
def test_dlpack_round_trip_counts(mod, versioned, make):
    x = make()
    facts = dict(mod.alloc_dlpack_round_trip_cpu(x, versioned))
    assert facts == {"same_data": 1, "x_use_count_while_back_lives": 3,
                     "deleter_calls_while_back_lives": 0, "deleter_calls_after": 1,
                     "x_use_count_after": 2}


def test_dlpack_round_trip_rejects_non_tensor(mod):
    with pytest.raises(TypeError, match="Mismatched type on argument #0"):
        mod.alloc_dlpack_round_trip_cpu(1.0, True)


UNLOAD_SCRIPT = """
import gc, sys
import tvm_ffi
mod = tvm_ffi.load_module(sys.argv[1], keep_module_alive=sys.argv[2] == "True")
y = mod.nd_hazard_ones(4)
del mod
gc.collect()
del y
print("tensor freed", flush=True)
"""


@pytest.mark.parametrize("keep", [False, True])
def test_unload_hazard(keep):
    done = subprocess.run([sys.executable, "-c", UNLOAD_SCRIPT, str(BUILD / "libnd_hazard.so"), str(keep)],
                          capture_output=True, text=True, timeout=120)
    if keep:
        assert done.returncode == 0 and "tensor freed" in done.stdout, done.stderr
    else:
        assert done.returncode == -signal.SIGSEGV and "tensor freed" not in done.stdout


def test_cuda_entries_reject_cpu_tensor(mod):
    if not hasattr(mod, "alloc_twice_env_cuda"):
        pytest.skip("CUDA variant not built (no nvcc)")
    for name in ("alloc_twice_env_cuda", "alloc_twice_nd_cuda"):
        with pytest.raises(ValueError, match="argument 'x': expected a tensor on cuda, got one on cpu:0"):
            getattr(mod, name)(torch.zeros(3))


@needs_cuda
@pytest.mark.parametrize("name", ["alloc_twice_env_cuda", "alloc_twice_nd_cuda"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_cuda_matches_torch(mod, name, shape):
    x = sample_inputs("cuda", shape)
    y = getattr(mod, name)(x)
    assert isinstance(y, torch.Tensor) and y.device == x.device
    torch.testing.assert_close(y, reference(x), rtol=0, atol=0)


@needs_cuda
def test_cuda_rejects_bad_dtype(mod):
    with pytest.raises(TypeError, match="argument 'x': expected dtype float32, got float16"):
        mod.alloc_twice_env_cuda(torch.zeros(3, device="cuda", dtype=torch.float16))
