"""Call overhead: every caller computes the right thing, and the harness measures sanely.

No timing thresholds except one that cannot flake: a tvm_ffi call with
tvm_ffi.Tensor arguments is faster than the same call behind a Python
torch.library.custom_op wrapper (tens of times in the notebook's runs).
"""

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest
import torch

HERE = Path(__file__).resolve().parent
BASELINE = "tvm_ffi + tvm_ffi.Tensor"
CASES = [1, 3, 8, "add"]


@pytest.fixture(scope="module")
def oc():
    spec = importlib.util.spec_from_file_location("overhead_callers", HERE / "overhead_callers.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def libs(oc):
    return oc.load_all()  # builds the torch extension on first use


def reference(a, b):
    return a + b


def sample_inputs(device, n):
    g = torch.Generator().manual_seed(0)
    return torch.randn(n, generator=g).to(device), torch.randn(n, generator=g).to(device)


def test_every_bridge_is_there(oc, libs):
    names = set(oc.callers(1, *libs))
    expected = {BASELINE, "tvm_ffi + torch.Tensor", "tvm_ffi + __dlpack__ only", "tvm_ffi + numpy",
                "pybind11 extension", "TORCH_LIBRARY via torch.ops", "torch.library.custom_op", "ctypes, raw pointers"}
    assert expected <= names
    if importlib.util.find_spec("nanobind") is not None:
        assert {"nanobind + torch.Tensor", "nanobind + numpy"} <= names


def test_every_caller_adds(oc, libs):
    table = oc.callers("add", *libs)
    a, b, out = table["tvm_ffi + torch.Tensor"][1]
    for name, (fn, args) in table.items():
        out.fill_(float("nan"))
        fn(*args)
        torch.testing.assert_close(out, reference(a, b), rtol=0, atol=0, msg=name)


@pytest.mark.parametrize("arity", [1, 3, 8])
def test_every_noop_accepts_its_arguments(oc, libs, arity):
    for name, (fn, args) in oc.callers(arity, *libs).items():
        assert len(args) == arity, name
        assert fn(*args) is None, name


@pytest.mark.parametrize("case", CASES, ids=str)
def test_harness_gives_positive_finite_ratios(oc, libs, case):
    table = oc.callers(case, *libs)
    ns = {name: oc.ns_per_call(fn, args, repeat=2, seconds=0.002) for name, (fn, args) in table.items()}
    ratios = {name: t / ns[BASELINE] for name, t in ns.items()}
    assert ratios[BASELINE] == 1.0
    assert all(math.isfinite(r) and r > 0 for r in ratios.values()), ratios


@pytest.mark.timing  # compares two timings (see conftest.py)
def test_tvm_ffi_tensor_beats_python_custom_op(oc, libs):
    table = oc.callers(3, *libs)
    fast = oc.ns_per_call(*table[BASELINE], repeat=5, seconds=0.005)
    slow = oc.ns_per_call(*table["torch.library.custom_op"], repeat=5, seconds=0.005)
    assert fast < slow


def test_dlpack_only_wrapper_hides_the_exchange_api(oc):
    wrapped = oc.DLPackOnly(torch.arange(3.0))
    assert not hasattr(type(wrapped), "__dlpack_c_exchange_api__")
    torch.testing.assert_close(torch.from_dlpack(wrapped), torch.arange(3.0))


def test_measure_without_exchange_api(oc, libs):
    ns = oc.without_exchange_api(1)
    assert set(ns) == {BASELINE, "tvm_ffi + torch.Tensor"}
    assert all(math.isfinite(t) and t > 0 for t in ns.values()), ns


@pytest.mark.timing  # compares two timings (see conftest.py)
def test_exchange_api_beats_python_dlpack_call(oc, libs):
    table = oc.callers(8, *libs)
    fast = oc.ns_per_call(*table["tvm_ffi + torch.Tensor"], repeat=5, seconds=0.005)
    slow = oc.ns_per_call(*table["tvm_ffi + __dlpack__ only"], repeat=5, seconds=0.005)
    assert fast < slow


def test_ns_per_call_measures_work(oc):
    import time
    ns = oc.ns_per_call(time.sleep, [0.001], repeat=2, seconds=0.005)
    assert 1e6 <= ns < 1e8  # sleeping 1 ms takes at least 1 ms


@pytest.mark.parametrize("n", [0, 1, 1024])
def test_add_matches_reference(libs, n):
    mod = libs[0]
    a, b = sample_inputs("cpu", n)
    out = torch.full_like(a, float("nan"))
    mod.overhead_add_cpu(a, b, out)
    torch.testing.assert_close(out, reference(a, b), rtol=0, atol=0)


f32 = np.float32


@pytest.mark.parametrize(
    "a, b, out, error, message",
    [
        (np.zeros(3, np.float64), np.zeros(3), np.zeros(3), TypeError, "argument 'a': expected dtype float32, got float64"),
        (np.zeros((3, 2), f32).T, np.zeros((2, 3), f32), np.zeros((2, 3), f32), ValueError, "argument 'a': expected a contiguous tensor"),
        (np.zeros(3, f32), np.zeros(3, np.int32), np.zeros(3, f32), TypeError, "argument 'b': expected dtype float32 (the dtype of 'a'), got int32"),
        (np.zeros(3, f32), np.zeros(4, f32), np.zeros(3, f32), ValueError, "argument 'b': expected shape [3] (the shape of 'a'), got [4]"),
        (np.zeros((2, 3), f32), np.zeros((3, 2), f32).T, np.zeros((2, 3), f32), ValueError, "argument 'b': expected a contiguous tensor"),
        (np.zeros(3, f32), np.zeros(3, f32), np.zeros(3, np.float16), TypeError, "argument 'out': expected dtype float32 (the dtype of 'a'), got float16"),
        (np.zeros(3, f32), np.zeros(3, f32), np.zeros(2, f32), ValueError, "argument 'out': expected shape [3] (the shape of 'a'), got [2]"),
        (np.zeros((2, 3), f32), np.zeros((2, 3), f32), np.zeros((3, 2), f32).T, ValueError, "argument 'out': expected a contiguous tensor"),
    ],
)
def test_add_rejects_bad_input(libs, a, b, out, error, message):
    with pytest.raises(error) as info:
        libs[0].overhead_add_cpu(a, b, out)
    assert message in str(info.value)


@pytest.mark.parametrize("arity", [1, 3, 8])
def test_noops_reject_wrong_arguments(libs, arity):
    fn = getattr(libs[0], f"overhead_noop{arity}_cpu")
    with pytest.raises(TypeError, match=f"Expected {arity} but got {arity + 1} arguments"):
        fn(*[np.zeros(1, f32)] * (arity + 1))
    with pytest.raises(TypeError, match="Mismatched type on argument #0"):
        fn(*([1] + [np.zeros(1, f32)] * (arity - 1)))
