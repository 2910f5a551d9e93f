"""`pip wheel .` builds a wheel that carries the compiled library, headers and CMake package."""

import subprocess
import sys
import zipfile

import pytest


@pytest.fixture(scope="module")
def wheel(root, tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    # CPU only keeps this test quick; the CUDA build is covered by the runtime build.
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "-q",
           "-w", str(out), "-C", "cmake.define.FFI_COOKBOOK_CUDA=OFF",
           "-C", f"build-dir={tmp_path_factory.mktemp('wheel-build')}", str(root)]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    (path,) = out.glob("ffi_cookbook-*.whl")
    return path


def test_wheel_contents(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    for expected in ["ffi_cookbook/__init__.py", "ffi_cookbook/lib/libffi_cookbook.so",
                     "ffi_cookbook/include/ffi_cookbook/check.h",
                     "ffi_cookbook/cmake/ffi_cookbook-config.cmake"]:
        assert expected in names


def test_installed_wheel_loads_its_own_library(wheel, tmp_path):
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target),
                    str(wheel)], check=True, capture_output=True)
    script = ("import ffi_cookbook, numpy as np; p = ffi_cookbook.library_path(); "
              "x = np.ones(3, np.float32); y = np.empty_like(x); ffi_cookbook.load().add_one_cpu(x, y); "
              "assert (y == 2).all(); print(p, ffi_cookbook.variants())")
    done = subprocess.run([sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {str(target)!r}); {script}"],
                          capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert str(target) in done.stdout and "['cpu']" in done.stdout
