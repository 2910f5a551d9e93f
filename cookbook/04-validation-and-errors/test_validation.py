"""validation: every check, every error kind and the abort of a non-std throw."""

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
SHAPES = [(0, 3), (1, 1), (3, 5)]


@pytest.fixture(scope="module")
def mod():
    return tvm_ffi.load_module(str(BUILD / "libvalidation.so"))


def sample_inputs(device, shape):
    gen = torch.Generator().manual_seed(0)
    a, b = (torch.randn(shape, generator=gen).to(device) for _ in range(2))
    return a, b, torch.empty_like(a)


def reference(a, b):
    return a + b


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_cpu_matches_torch(mod, shape):
    a, b, out = sample_inputs("cpu", shape)
    mod.checked_add_cpu(a, b, out)
    torch.testing.assert_close(out, reference(a, b), rtol=0, atol=0)


F = np.zeros((2, 3), np.float32)


@pytest.mark.parametrize(
    "args, error, message",
    [
        ((np.zeros((2, 3), np.int32), F, F), TypeError, "argument 'a': expected dtype float32, got int32"),
        ((np.zeros(6, np.float32), F, F), ValueError, "argument 'a': expected a 2-d tensor, got 1-d with shape [6]"),
        ((np.zeros((3, 2), np.float32).T, F, F), ValueError, "argument 'a': expected a contiguous tensor"),
        ((F, np.zeros((2, 4), np.float32), F), ValueError, "argument 'b': expected shape [2, 3] (the shape of 'a'), got [2, 4]"),
        ((F, np.zeros((2, 3), np.float64), F), TypeError, "argument 'b': expected dtype float32 (the dtype of 'a'), got float64"),
        ((F, np.zeros((3, 2), np.float32).T, F), ValueError, "argument 'b': expected a contiguous tensor"),
        ((F, F, np.zeros((3, 2), np.float32)), ValueError, "argument 'out': expected shape [2, 3]"),
        ((F, F, np.zeros((2, 3), np.float64)), TypeError, "argument 'out': expected dtype float32 (the dtype of 'a'), got float64"),
        ((F, F, np.zeros((3, 2), np.float32).T), ValueError, "argument 'out': expected a contiguous tensor"),
        ((F, F), TypeError, "Mismatched number of arguments when calling: `checked_add_cpu("),
        ((1, F, F), TypeError, "Mismatched type on argument #0 when calling: `checked_add_cpu("),
    ],
)
def test_cpu_rejects_bad_input(mod, args, error, message):
    with pytest.raises(error) as info:
        mod.checked_add_cpu(*args)
    assert type(info.value) is error and message in str(info.value)


def test_missing_function_is_attribute_error(mod):
    with pytest.raises(AttributeError, match="Module has no function 'no_such_function'"):
        mod.no_such_function


def test_workspace_within_limit_passes(mod):
    mod.check_workspace_cpu(1 << 20)


def test_unregistered_kind_is_runtime_error():
    # In a fresh process, where no test has registered the kind yet.
    script = ("import sys, tvm_ffi\n"
              "mod = tvm_ffi.load_module(sys.argv[1])\n"
              "try:\n    mod.check_workspace_cpu(1 << 21)\n"
              "except Exception as err:\n    print(type(err).__name__, err)\n")
    done = subprocess.run([sys.executable, "-c", script, str(BUILD / "libvalidation.so")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("RuntimeError argument 'bytes': asked for 2097152 bytes")


def test_registered_kind_is_the_registered_class(mod):
    @tvm_ffi.register_error("WorkspaceLimitError")
    class WorkspaceLimitError(ValueError):
        pass

    with pytest.raises(WorkspaceLimitError, match="the limit is 1048576"):
        mod.check_workspace_cpu(1 << 21)


def test_icheck_is_runtime_error(mod):
    assert mod.icheck_demo_cpu(3) == 3
    with pytest.raises(RuntimeError, match=r"Check failed: n >= 0 \(-1 vs. 0\) : a count cannot be negative"):
        mod.icheck_demo_cpu(-1)


def test_std_exception_is_runtime_error(mod):
    mod.std_exception_demo_cpu(0)
    with pytest.raises(RuntimeError, match="std::out_of_range thrown inside the kernel"):
        mod.std_exception_demo_cpu(1)


def test_non_std_throw_aborts_the_process():
    script = ("import sys, tvm_ffi\n"
              "mod = tvm_ffi.load_module(sys.argv[1])\n"
              "assert mod.throw_int_demo(0) == 0\n"
              "print('zero is fine', flush=True)\n"
              "try:\n    mod.throw_int_demo(7)\n"
              "except BaseException:\n    print('caught')\n")
    done = subprocess.run([sys.executable, "-c", script, str(BUILD / "libthrow_int.so")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == -signal.SIGABRT
    assert done.stdout == "zero is fine\n"
    assert "terminate called after throwing an instance of 'int'" in done.stderr


def test_cuda_entry_rejects_cpu_tensors(mod):
    if not hasattr(mod, "checked_add_cuda"):
        pytest.skip("CUDA variant not built (no nvcc)")
    with pytest.raises(ValueError, match="argument 'a': expected a tensor on cuda, got one on cpu:0"):
        mod.checked_add_cuda(F, F, F)


@needs_cuda
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_cuda_matches_torch(mod, shape):
    a, b, out = sample_inputs("cuda", shape)
    mod.checked_add_cuda(a, b, out)
    torch.testing.assert_close(out, reference(a, b), rtol=0, atol=0)


@needs_cuda
def test_cuda_rejects_mixed_devices(mod):
    a = torch.zeros(2, 3, device="cuda")
    with pytest.raises(ValueError, match="argument 'b': expected a tensor on cuda:0 \\(the device of 'a'\\), got one on cpu:0"):
        mod.checked_add_cuda(a, torch.zeros(2, 3), a)
