"""The typed layer: the checked-in stub matches the library, the wrapper behaves as
documented, and mypy accepts a correct caller and rejects a wrong one."""

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import tvm_ffi

HERE = Path(__file__).resolve().parent
LIBRARY = HERE / "build" / "libscaled_clamp.so"  # the README's cmake commands build it
sys.path.insert(0, str(HERE))  # clamp_api imports clamp_ffi_api by name, as mypy sees them
import dlpack_tensor  # noqa: E402  (after the path above)


@pytest.fixture(scope="module")
def api():
    """clamp_api.py, imported once the library is built (clamp_ffi_api loads it)."""
    return importlib.import_module("clamp_api")


def stubgen(*args):
    return subprocess.run([sys.executable, "-m", "tvm_ffi.stub.cli", "--dlls", str(LIBRARY), *map(str, args)],
                          capture_output=True, text=True)


def mypy(*files):
    cache = HERE / "build" / "mypy-cache"
    return subprocess.run([sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent", "--no-color-output",
                           "--cache-dir", str(cache), *files], cwd=HERE, capture_output=True, text=True)


def test_checked_in_stub_is_up_to_date():
    done = stubgen("--check", HERE / "clamp_ffi_api.py")
    assert done.returncode == 0, done.stdout + done.stderr
    assert ("def scaled_clamp(_0: DLPackTensor, _1: DLPackTensor, _2: float, _3: float | None, "
            "_4: float | None, /) -> None: ...") in (HERE / "clamp_ffi_api.py").read_text()


def test_stub_check_notices_a_stale_stub(tmp_path):
    stale = tmp_path / "clamp_ffi_api.py"
    stale.write_text((HERE / "clamp_ffi_api.py").read_text().replace("_4: float | None", "_4: float"))
    done = stubgen("--check", stale)
    assert done.returncode == 1 and "clamp_ffi_api.py" in done.stdout + done.stderr


def test_dlpack_tensor_type_covers_the_frameworks():
    for tensor in (np.ones(2, np.float32), torch.ones(2), tvm_ffi.from_dlpack(np.ones(2))):
        assert isinstance(tensor, dlpack_tensor.DLPackTensor)
    assert not isinstance([1.0, 2.0], dlpack_tensor.DLPackTensor)


@pytest.mark.parametrize("make", [torch.tensor, lambda v: np.array(v, np.float32)], ids=["torch", "numpy"])
def test_wrapper_defaults_keywords_and_new_output(api, make):
    x = make([-3.0, -0.5, 0.0, 0.5, 3.0])
    identity = api.scaled_clamp(x)
    assert type(identity) is type(x) and identity is not x
    np.testing.assert_array_equal(np.asarray(identity), np.asarray(x))
    y = api.scaled_clamp(x, scale=2.0, low=-1.0)
    np.testing.assert_array_equal(np.asarray(y), [-1.0, -1.0, 0.0, 1.0, 6.0])
    np.testing.assert_array_equal(np.asarray(api.scaled_clamp(x, high=0.25)), [-3.0, -0.5, 0.0, 0.25, 0.25])


def test_wrapper_writes_into_out_and_returns_it(api):
    x = torch.linspace(-2, 2, 9)
    out = torch.full_like(x, float("nan"))
    assert api.scaled_clamp(x, low=0.0, high=1.0, out=out) is out
    torch.testing.assert_close(out, x.clamp(0.0, 1.0))


@pytest.mark.parametrize("call, error, message", [
    (lambda api, x: api.scaled_clamp(x, 2.0), TypeError, "positional argument"),
    (lambda api, x: api.scaled_clamp(x, low=1.0, high=0.0), ValueError, "expected low <= high, got 1 and 0"),
    (lambda api, x: api.scaled_clamp(x, low=float("nan")), ValueError, "expected low <= high"),
    (lambda api, x: api.scaled_clamp(x.double()), TypeError, "argument 'x': expected dtype float32, got float64"),
    (lambda api, x: api.scaled_clamp(x, out=torch.empty(3)), ValueError, "argument 'out': expected shape [9]"),
    (lambda api, x: api.clamp_ffi_api.scaled_clamp(x, x, 2.0), TypeError, "Expected 5 but got 3 arguments"),
])
def test_bad_calls_raise(api, call, error, message):
    with pytest.raises(error) as info:
        call(api, torch.linspace(-2, 2, 9))
    assert message in str(info.value)


def test_mypy_accepts_the_correct_caller():
    done = mypy("clamp_api.py", "caller_ok.py")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("Success: no issues found in 2 source files")


def test_mypy_rejects_the_wrong_caller_line_by_line():
    done = mypy("caller_bad.py")
    lines = (HERE / "caller_bad.py").read_text().splitlines()

    def line_of(text):
        return next(i for i, line in enumerate(lines, 1) if line.startswith(text))

    found = set(re.findall(r"^caller_bad\.py:(\d+): error: .*\[([a-z-]+)\]$", done.stdout, re.M))
    assert done.returncode == 1
    assert found == {(str(line_of("scaled_clamp(x, 2.0)")), "call-arg"),
                     (str(line_of('scaled_clamp(x, scale="2")')), "arg-type"),
                     (str(line_of("y: torch.Tensor = scaled_clamp(np.ones")), "assignment"),
                     (str(line_of("clamp_ffi_api.scaled_clamp(x, x, 2.0)")), "call-arg")}, done.stdout
