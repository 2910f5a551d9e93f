"""A registered C++ object with a workspace, a global function, and a kernel calling
back into Python: results, errors, lifetimes."""

import gc
import importlib.util
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch
import tvm_ffi

HERE = Path(__file__).resolve().parent
LIBRARY = HERE / "build" / "libobjects.so"  # the README's cmake commands build both
UNLOADABLE = HERE / "build" / "libobjects_unloadable.so"


def _load(module_file):
    spec = importlib.util.spec_from_file_location(Path(module_file).stem, HERE / module_file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


lifetime = _load("lifetime_demo.py")


@pytest.fixture(scope="module")
def objects():
    """running_stats.py, loaded once the library is built (it loads the library)."""
    return _load("running_stats.py")


def batches(sizes, features, seed=0):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal((b, features)) * 3 + 1).astype(np.float32) for b in sizes]


def read(stats, method):
    out = np.full(stats.features, np.nan, np.float32)
    getattr(stats, method)(out)
    return out


@pytest.mark.parametrize("sizes", [[1], [5, 1, 7], [64] * 4, [0, 3, 0]], ids=str)
def test_running_stats_match_numpy(objects, sizes):
    stats = objects.RunningStats(6)
    xs = batches(sizes, 6)
    for x in xs:
        stats.update(x)
    everything = np.concatenate(xs).astype(np.float64)
    assert stats.count == sum(sizes) and stats.features == 6
    np.testing.assert_allclose(read(stats, "mean"), everything.mean(axis=0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(read(stats, "variance"), everything.var(axis=0), rtol=1e-5, atol=1e-6)


def test_methods_take_torch_tensors_too(objects):
    stats = objects.RunningStats(3)
    x = torch.randn(10, 3)
    stats.update(x)
    out = torch.empty(3)
    stats.mean(out)
    torch.testing.assert_close(out, x.mean(dim=0))


def test_fields_are_read_only(objects):
    stats = objects.RunningStats(2)
    with pytest.raises(AttributeError):
        stats.count = 5
    assert stats.count == 0 and str(stats) == "cookbook.RunningStats(features=2, count=0)"


@pytest.mark.parametrize("call, error, message", [
    (lambda s: s.update(np.zeros((2, 5), np.float32)), ValueError, "argument 'x': expected 4 features, got 5"),
    (lambda s: s.update(np.zeros((2, 4), np.float64)), TypeError, "argument 'x': expected dtype float32, got float64"),
    (lambda s: s.update(np.zeros(4, np.float32)), ValueError, "argument 'x': expected a 2-d tensor"),
    (lambda s: s.update(np.zeros((4, 2), np.float32).T), ValueError, "argument 'x': expected a contiguous tensor"),
    (lambda s: s.mean(np.zeros(3, np.float32)), ValueError, "argument 'out': expected 4 elements, got 3"),
    (lambda s: s.variance(np.zeros(4, np.int32)), TypeError, "argument 'out': expected dtype float32, got int32"),
    (lambda s: s.update("x"), TypeError, "update"),
])
def test_methods_reject_bad_input(objects, call, error, message):
    stats = objects.RunningStats(4)
    with pytest.raises(error) as info:
        call(stats)
    assert message in str(info.value)
    assert stats.count == 0  # a refused batch changes nothing


@pytest.mark.parametrize("features", [0, -1, 1 << 25])
def test_constructor_rejects_bad_sizes_without_leaking(objects, features):
    gc.collect()  # else objects of earlier tests that only the cycle collector frees may go mid-test
    before = objects.live_count()
    with pytest.raises(ValueError, match="argument 'features': expected 1 to 2\\^24"):
        objects.RunningStats(features)
    assert objects.live_count() == before


def test_live_objects_go_back_to_zero(objects):
    gc.collect()
    start = objects.live_count()
    made = [objects.RunningStats(8) for _ in range(5)]
    held = made[2]
    assert objects.live_count() == start + 5
    del made
    gc.collect()
    assert objects.live_count() == start + 1  # the one still referenced
    del held
    gc.collect()
    assert objects.live_count() == start == 0


def test_global_function_is_found_by_name(objects):
    assert tvm_ffi.get_global_func("cookbook.running_stats_live_count") is not None
    assert tvm_ffi.get_global_func("cookbook.no_such_function", allow_missing=True) is None


@pytest.mark.parametrize("alloc, kind", [
    (lambda n: np.empty(n, np.int64), "numpy"),
    (lambda n: torch.empty(n, dtype=torch.int64), "torch"),
])
def test_nonzero_allocates_through_the_callback(objects, alloc, kind):
    x = np.array([0, 1.5, 0, 0, -2, 3, 0], np.float32)
    out = objects.library.nonzero_indices_cpu(x, alloc)
    np.testing.assert_array_equal(np.from_dlpack(out), np.flatnonzero(x))


def test_nonzero_of_nothing_asks_for_zero_elements(objects):
    asked = []
    out = objects.library.nonzero_indices_cpu(np.zeros(5, np.float32),
                                                   lambda n: asked.append(n) or np.empty(n, np.int64))
    assert asked == [0] and np.from_dlpack(out).shape == (0,)


class TokenizerError(Exception):
    """An exception type of the caller's own."""


def _raiser(error):
    def alloc(n):
        raise error
    return alloc


@pytest.mark.parametrize("error", [ValueError("no room"), KeyError("pool"), MemoryError("full")], ids=repr)
def test_callback_exception_comes_back_as_the_same_type(objects, error):
    with pytest.raises(type(error)) as info:
        objects.library.nonzero_indices_cpu(np.ones(3, np.float32), _raiser(error))
    assert str(error) in str(info.value)


def test_own_exception_type_needs_registering(objects):
    with pytest.raises(RuntimeError, match="mine") as info:
        objects.library.nonzero_indices_cpu(np.ones(3, np.float32), _raiser(TokenizerError("mine")))
    assert type(info.value) is RuntimeError  # tvm_ffi does not know the class yet
    tvm_ffi.register_error(TokenizerError)
    with pytest.raises(TokenizerError, match="mine"):
        objects.library.nonzero_indices_cpu(np.ones(3, np.float32), _raiser(TokenizerError("mine")))


@pytest.mark.parametrize("alloc, error, message", [
    (lambda n: None, TypeError, "argument 'alloc(n)': expected a tensor, got None"),
    (lambda n: [0] * n, TypeError, "argument 'alloc(n)': expected a tensor, got ffi.Array"),
    (lambda n: np.empty(n, np.int32), TypeError, "argument 'alloc(n)': expected dtype int64, got int32"),
    (lambda n: np.empty(n + 1, np.int64), ValueError, "argument 'alloc(n)': expected 2 elements, got 3"),
    (lambda n: np.empty((n, 1), np.int64), ValueError, "argument 'alloc(n)': expected a 1-d tensor"),
    (lambda n: np.empty(2 * n, np.int64)[::2], ValueError, "argument 'alloc(n)': expected a contiguous tensor"),
])
def test_nonzero_checks_what_the_callback_returns(objects, alloc, error, message):
    with pytest.raises(error) as info:
        objects.library.nonzero_indices_cpu(np.array([1, 0, 2], np.float32), alloc)
    assert message in str(info.value)


@pytest.mark.parametrize("x, error, message", [
    (np.zeros(3, np.float64), TypeError, "argument 'x': expected dtype float32, got float64"),
    (np.zeros((3, 4), np.float32).T, ValueError, "argument 'x': expected a contiguous tensor"),
])
def test_nonzero_rejects_bad_input(objects, x, error, message):
    with pytest.raises(error) as info:
        objects.library.nonzero_indices_cpu(x, lambda n: np.empty(n, np.int64))
    assert message in str(info.value)


def test_nonzero_refuses_none_for_the_callback(objects):
    with pytest.raises(TypeError, match="argument 'alloc': expected a callable, got None"):
        objects.library.nonzero_indices_cpu(np.ones(8, np.float32), None)


def needs_unloadable():
    """The -fno-gnu-unique variant is built with GCC only (known once the build ran)."""
    if not UNLOADABLE.is_file():
        pytest.skip("libobjects_unloadable.so is built with GCC only")


def test_object_outliving_its_library_crashes_unless_kept_alive():
    needs_unloadable()
    unloaded = lifetime.run(lifetime.UNLOAD, UNLOADABLE, False)
    assert unloaded.returncode < 0 and "library still mapped: False" in unloaded.stdout
    assert "object freed" not in unloaded.stdout
    kept = lifetime.run(lifetime.UNLOAD, UNLOADABLE, True)
    assert kept.returncode == 0 and "library still mapped: True" in kept.stdout and "object freed" in kept.stdout


def test_the_loader_pinning_the_library_decides_whether_it_stays():
    """glibc marks a library NODELETE when it binds one of the library's GNU unique symbols
    to the library's own copy: then the object outlives the unload, else the process crashes."""
    needs_unloadable()  # GNU unique symbols are a GCC feature too
    done = lifetime.run(lifetime.UNLOAD, LIBRARY, False)
    pinned, _ = lifetime.loader_account(LIBRARY)
    if pinned:
        assert done.returncode == 0 and "library still mapped: True" in done.stdout
    else:
        assert done.returncode < 0 and "library still mapped: False" in done.stdout


FIRST_DEFINER = """#include <string>
std::string digits(unsigned long v) { return std::to_string(v) + std::to_string(unsigned(v)); }
"""


def test_a_unique_symbol_defined_first_elsewhere_does_not_pin_the_library(tmp_path):
    """A library loaded earlier that defines the same unique symbols gets the bindings, and
    libobjects.so is unmapped on unload: the notebook's 'by luck'."""
    needs_unloadable()
    compiler = shutil.which("g++")
    if compiler is None:
        pytest.skip("needs g++ to build the library that defines the symbols first")
    (tmp_path / "first.cc").write_text(FIRST_DEFINER)
    first = tmp_path / "libfirst.so"
    subprocess.run([compiler, "-O2", "-shared", "-fPIC", tmp_path / "first.cc", "-o", first], check=True)
    ours = set(lifetime.gnu_unique_symbols(LIBRARY))
    if not ours or not ours <= set(lifetime.gnu_unique_symbols(first)):
        pytest.skip(f"libobjects.so's unique symbols are not all std::to_string's here: {sorted(ours)}")
    assert lifetime.loader_account(LIBRARY, first) == (False, {"libfirst.so"})
    done = lifetime.run(f"import ctypes; ctypes.CDLL({str(first)!r})\n" + lifetime.UNLOAD, LIBRARY, False)
    assert done.returncode < 0 and "library still mapped: False" in done.stdout, done.stderr[-2000:]


def test_second_library_registering_the_same_type_aborts():
    needs_unloadable()  # the second library registering the type
    again = lifetime.run(lifetime.TWO_COPIES, LIBRARY, LIBRARY)  # same file: dlopen reuses it
    assert again.returncode == 0
    two = lifetime.run(lifetime.TWO_COPIES, LIBRARY, UNLOADABLE)
    assert lifetime.outcome(two) == "killed by SIGABRT"
    assert "Overriding cookbook.RunningStats" in two.stderr and "loaded libobjects.so" in two.stdout
