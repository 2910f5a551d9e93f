"""weighted_sum: matches NumPy from Python, C and C++, and rejects bad input with named errors."""

import subprocess
from pathlib import Path

import numpy as np
import pytest
import tvm_ffi

HERE = Path(__file__).resolve().parent
BUILD = HERE / "build"  # the README's cmake commands build the library and both callers here
LIBRARY = BUILD / "libweighted_sum.so"
SHAPES = [(0,), (1,), (7,), (3, 5), (2, 3, 4)]
EXPECTED_LINES = [
    "weighted_sum_cpu(x, 0.5) = 10.5",
    "error: TypeError: argument 'x': expected dtype float32, got int32",
]


@pytest.fixture(scope="module")
def mod():
    return tvm_ffi.load_module(str(LIBRARY))


def sample_inputs(device, shape):
    assert device == "cpu", "weighted_sum has a CPU variant only"
    return np.random.default_rng(0).standard_normal(shape).astype(np.float32), 0.25


def reference(x, w):
    return w * float(np.sum(x, dtype=np.float64))


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_cpu_matches_numpy(mod, shape):
    x, w = sample_inputs("cpu", shape)
    assert mod.weighted_sum_cpu(x, w) == pytest.approx(reference(x, w), rel=1e-12, abs=1e-12)


def run(program):
    return subprocess.run([str(BUILD / program), str(LIBRARY)], capture_output=True, text=True)


def test_c_caller():
    done = run("caller_c")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == EXPECTED_LINES + [
        "error: ValueError: argument 'x': expected a tensor on cpu, got one on cuda:0"]


def test_cpp_caller():
    done = run("caller_cpp")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == EXPECTED_LINES


@pytest.mark.parametrize("program", ["caller_c", "caller_cpp"])
def test_callers_fail_without_library(program):
    done = subprocess.run([str(BUILD / program)], capture_output=True, text=True)
    assert done.returncode == 2 and "usage:" in done.stderr


@pytest.mark.parametrize(
    "args, error, message",
    [
        ((np.zeros(3, np.int32), 1.0), TypeError, "argument 'x': expected dtype float32, got int32"),
        ((np.zeros((3, 4), np.float32).T, 1.0), ValueError, "argument 'x': expected a contiguous tensor"),
        ((np.zeros(3, np.float32), "two"), TypeError, "Mismatched type on argument #1 when calling: `weighted_sum_cpu("),
        ((np.zeros(3, np.float32),), TypeError, "Expected 2 but got 1 arguments"),
    ],
)
def test_cpu_rejects_bad_input(mod, args, error, message):
    with pytest.raises(error) as info:
        mod.weighted_sum_cpu(*args)
    assert message in str(info.value)
