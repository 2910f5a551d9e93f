"""The ffi-cookbook command line: list, get, new, add, and refusals that write nothing.

The end-to-end test makes a library with `new`, adds three recipes (all with CUDA
sources), builds a wheel with build isolation on, installs it into the fresh
venv without ffi_cookbook (the takeaway_venv fixture, tests/conftest.py), calls every added kernel
against a NumPy reference there and runs the library's tests.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ffi_cookbook import catalog, kernel_library
from tools import takeaway
from ffi_cookbook.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[2]
ADDED = ["01-add-one", "08-many-frameworks", "10-rmsnorm"]

# Runs in the fresh venv, from a folder that is not the library's: each added CPU
# kernel against NumPy; each CUDA entry must be in the library when nvcc built it.
CALL_EVERY_KERNEL = r"""
import sys
import numpy as np
import mylib

with_cuda = sys.argv[1] == "1"
assert mylib.variants() == (["cpu", "cuda"] if with_cuda else ["cpu"]), mylib.variants()
rng = np.random.default_rng(0)
x = rng.standard_normal((4, 33)).astype(np.float32)
called = set()

def call(name, *args):
    called.add(name)
    return getattr(mylib, name)(*args)

y = np.empty_like(x); call("add_one_cpu", x, y); np.testing.assert_array_equal(y, x + 1)
y = np.empty_like(x); call("scale_cpu", x, -2.5, y); np.testing.assert_array_equal(y, np.float32(-2.5) * x)
y = np.empty_like(x); call("mylib_scale_cpu", x, y, 3.0); np.testing.assert_array_equal(y, np.float32(3.0) * x)
assert call("tensor_data_address", x) == x.ctypes.data
out = np.zeros(1, np.int64); call("tensor_data_address_into_cpu", x, out); assert out[0] == x.ctypes.data
w = rng.standard_normal(33).astype(np.float32)
for name in ("rms_norm_cpu", "rms_norm_cpu_tuned"):
    y = np.empty_like(x); call(name, x, w, y, 1e-6)
    np.testing.assert_allclose(y, x / np.sqrt((x.astype(np.float64) ** 2).mean(-1, keepdims=True) + 1e-6) * w,
                               rtol=2e-6, atol=1e-6)
for name in sys.argv[2].split(","):  # CUDA entries: present and validating (no GPU here)
    if not with_cuda:
        assert not hasattr(mylib.load(), name), name
        continue
    args = {"scale_cuda": (x, 1.0, y), "rms_norm_cuda": (x, w, y, 1e-6)}.get(name, (x, y))
    try:
        call(name, *args)
    except ValueError as err:
        assert "expected a tensor on cuda, got one on cpu" in str(err), err
    else:
        raise AssertionError(f"{name} took CPU tensors")
print(",".join(sorted(called)))
"""


def cli(*args, cwd=None) -> subprocess.CompletedProcess:
    """``ffi-cookbook ARGS`` run in this process (quick); the result as a subprocess's."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), contextlib.chdir(cwd or os.curdir):
        try:
            code = cli_main([str(a) for a in args])
        except SystemExit as exit_:  # argparse's usage errors
            code = exit_.code
    return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())


def tree_digest(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` (relative path -> sha256), to prove nothing was written."""
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_list_names_every_recipe_with_its_variants():
    # As a reader runs it: `python -m ffi_cookbook`, a process of its own.
    done = subprocess.run([sys.executable, "-m", "ffi_cookbook", "list"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    rows = {line.split()[0]: line.split()[1:4] for line in done.stdout.splitlines()[1:] if line[:2].isdigit()}
    assert list(rows) == [r.name for r in catalog.recipes()]
    assert rows["10-rmsnorm"] == ["CPU+CUDA", "optional", "yes"]
    assert rows["07-nvshmem"] == ["CPU+NVSHMEM", "required", "no"]
    assert rows["02-tensor-and-view"] == ["CPU", "no", "yes"]
    assert "RMSNorm: a real kernel" in done.stdout


def test_get_writes_the_self_contained_folder(tmp_path):
    done = cli("get", "rmsnorm", tmp_path / "rms")
    assert done.returncode == 0, done.stderr
    written = {p.relative_to(tmp_path / "rms").as_posix(): p.read_bytes()
               for p in (tmp_path / "rms").rglob("*") if p.is_file()}
    assert written == takeaway.recipe_files("10-rmsnorm")
    before = tree_digest(tmp_path)
    for args in (("get", "10", tmp_path / "rms"), ("get", "no-such-recipe", tmp_path / "other"), ("get", "10")):
        refused = cli(*args)
        assert refused.returncode == 2 and "error:" in refused.stderr, refused
    assert tree_digest(tmp_path) == before


def test_console_script_is_declared():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["scripts"] == {"ffi-cookbook": "ffi_cookbook.cli:main"}


def test_new_refuses_a_bad_name_or_a_full_folder(tmp_path):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep.txt").write_text("mine")
    before = tree_digest(tmp_path)
    for args in (("new", "My-Lib", tmp_path / "a"), ("new", "torch", tmp_path / "b"),
                 ("new", "mylib", tmp_path / "full")):
        refused = cli(*args)
        assert refused.returncode == 2 and "error:" in refused.stderr, refused
    assert tree_digest(tmp_path) == before


def test_add_refuses_and_writes_nothing(tmp_path):
    library = tmp_path / "mylib"
    assert cli("new", "mylib", library).returncode == 0
    assert cli("add", "01-add-one", "--into", library).returncode == 0
    not_a_library = tmp_path / "recipe"
    assert cli("get", "05", not_a_library).returncode == 0
    (library / "include" / "ffi_cookbook" / "dtype.h").write_text("// edited by the user\n")
    cases = {
        "a file would be overwritten": (("add", "01-add-one", "--into", library), "kernels/01-add-one/ exists"),
        "a helper header differs": (("add", "10-rmsnorm", "--into", library), "dtype.h exists with different content"),
        "not a library made by new": (("add", "05", "--into", not_a_library), "not a kernel library made by"),
        "an empty folder": (("add", "05", "--into", tmp_path / "empty"), "not a kernel library made by"),
        "unknown recipe": (("add", "99-nothing", "--into", library), "unknown recipe '99-nothing'"),
        "a recipe that is more than kernels": (("add", "09", "--into", library), "cannot be added"),
    }
    (tmp_path / "empty").mkdir()
    before = tree_digest(tmp_path)
    for case, (args, message) in cases.items():
        refused = cli(*args)
        assert refused.returncode == 2, (case, refused.stdout, refused.stderr)
        assert message in refused.stderr, (case, refused.stderr)
        assert tree_digest(tmp_path) == before, f"{case}: something was written"


def test_new_add_wheel_and_run_in_a_fresh_venv(takeaway_venv, tmp_path):
    library = tmp_path / "mylib"
    assert cli("new", "mylib", library).returncode == 0
    written = []
    for name in ADDED:
        done = cli("add", name, cwd=library)  # --into defaults to the current folder
        assert done.returncode == 0, done.stderr
        written.append(done.stdout)
    # Recipe 01 is tvm_ffi alone (its own header beside its kernels). A helper header is
    # written once, by the first that needs it: `new` wrote those of 08, 10 adds dtype.h.
    assert "include/ffi_cookbook/" not in written[0] and "kernels/01-add-one/add_one_args.h" in written[0]
    assert "include/ffi_cookbook/" not in written[1] and "include/ffi_cookbook/dtype.h" in written[2]
    cuda = [k for name in ADDED for k in kernel_library.kernel_names(name) if k.endswith("_cuda")]
    assert len(cuda) == 3

    with_cuda = shutil.which("nvcc") is not None
    start = time.perf_counter()
    # Build isolation on: pip installs scikit-build-core and apache-tvm-ffi for the build.
    takeaway_venv.run([takeaway_venv.python, "-m", "pip", "wheel", "--no-deps", "-q", "-w", tmp_path / "dist",
                       "-C", "cmake.define.CMAKE_CUDA_ARCHITECTURES=80", library], cwd=tmp_path)
    (wheel,) = (tmp_path / "dist").glob("mylib-*.whl")
    takeaway_venv.run([takeaway_venv.python, "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall",
                       wheel], cwd=tmp_path)
    built = time.perf_counter()
    done = takeaway_venv.run([takeaway_venv.python, "-c", CALL_EVERY_KERNEL, "1" if with_cuda else "0",
                              ",".join(cuda)], cwd=tmp_path)
    every = {k for name in ADDED for k in kernel_library.kernel_names(name)} | {"mylib_scale_cpu"}
    called = set(done.stdout.split()[-1].split(","))
    assert called == (every if with_cuda else every - set(cuda)), every ^ called
    # The added tests that compare timings (the library's pyproject.toml registers their mark)
    # run in make test's timing pass, from the recipe's own folder.
    tests = takeaway_venv.run([takeaway_venv.python, "-m", "pytest", "-v", "-p", "no:cacheprovider",
                               "-m", "not timing"], cwd=library)
    assert " failed" not in tests.stdout, tests.stdout[-3000:]
    passed = {line.split("::")[0] for line in tests.stdout.splitlines() if " PASSED" in line}
    expected = {"tests/test_mylib.py"} | {f"tests/{p.name}" for name in ADDED
                                          for p in catalog.recipe(name).folder.glob("test_*.py")}
    assert expected <= passed, (expected - passed, tests.stdout[-3000:])  # every added test file ran
    print(f"new + add {len(ADDED)} + wheel + install: {built - start:.0f} s; "
          f"tests: {tests.stdout.strip().splitlines()[-1]}")
