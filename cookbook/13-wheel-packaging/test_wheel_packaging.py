"""The template builds a wheel as its users build it (pip, build isolation on), and the
wheel installs into a fresh venv and runs its kernel there."""

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest


HERE = Path(__file__).resolve().parent
TEMPLATE = HERE / "template"
TVM_FFI_PIN = "apache-tvm-ffi==0.1.15.post2"

# Runs inside the fresh venv: the reference is NumPy, every error path is checked.
CHECK_IN_VENV = r"""
import numpy as np, mykernels
x = np.random.default_rng(0).standard_normal((3, 5)).astype(np.float32)
y = np.full_like(x, np.nan)
mykernels.scale(x, y, -1.5)
np.testing.assert_array_equal(y, np.float32(-1.5) * x)
bad = [
    ((x.astype(np.int32), y, 1.0), TypeError, "argument 'x': expected dtype float32, got int32"),
    ((x, y.astype(np.float64), 1.0), TypeError, "argument 'y': expected dtype float32"),
    ((x, np.zeros((5, 3), np.float32), 1.0), ValueError, "argument 'y': expected shape [3, 5]"),
    ((x.T, y.T, 1.0), ValueError, "argument 'x': expected a contiguous tensor"),
    ((x, np.zeros((5, 3), np.float32).T, 1.0), ValueError, "argument 'y': expected a contiguous tensor"),
]
for args, error, message in bad:
    try:
        mykernels.scale(*args)
    except error as err:
        assert message in str(err), str(err)
    else:
        raise AssertionError(f"no {error.__name__} for {message}")
print(mykernels.library_path())
"""


def run(cmd, **kwargs):
    done = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kwargs)
    assert done.returncode == 0, f"{cmd}\nstdout:\n{done.stdout[-3000:]}\nstderr:\n{done.stderr[-3000:]}"
    return done


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    # Build isolation stays on: pip installs the template's [build-system] requires into a
    # fresh environment, so the build sees nothing of this one. The CMake build folder is a
    # fresh one of this test's own: two builds at once in one folder (the notebook's, another
    # test run's) overwrite each other's generated install script and fail.
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", out,
         "-C", f"build-dir={tmp_path_factory.mktemp('cmake')}", TEMPLATE])
    (path,) = out.glob("mykernels-*.whl")
    return path


def test_wheel_holds_package_and_library(wheel):
    assert wheel.name == "mykernels-0.1.0-py3-none-linux_x86_64.whl"
    names = zipfile.ZipFile(wheel).namelist()
    assert "mykernels/__init__.py" in names and "mykernels/libmykernels.so" in names


def test_wheel_declares_tvm_ffi_dependency(wheel):
    metadata = zipfile.ZipFile(wheel).read("mykernels-0.1.0.dist-info/METADATA").decode()
    assert f"Requires-Dist: {TVM_FFI_PIN}" in metadata


def test_library_needs_no_libpython(wheel, tmp_path):
    zipfile.ZipFile(wheel).extract("mykernels/libmykernels.so", tmp_path)
    dynamic = run(["readelf", "-d", tmp_path / "mykernels" / "libmykernels.so"]).stdout
    assert "[libtvm_ffi.so]" in dynamic and "libpython" not in dynamic


def test_installs_and_runs_in_fresh_venv(wheel, tmp_path):
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", venv])
    python = venv / "bin" / "python"
    run([python, "-m", "pip", "install", "-q", TVM_FFI_PIN, "numpy", wheel])
    done = run([python, "-I", "-c", CHECK_IN_VENV], cwd=tmp_path)
    assert done.stdout.strip() == str(venv / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}"
                                      / "site-packages" / "mykernels" / "libmykernels.so")
