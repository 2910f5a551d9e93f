"""The package installs the way a user installs it, and the installed copy works on its own.

The sdist is built from the checkout by the build backend's own hook (what `python -m build`
does first), and one fresh virtual environment (not the project's, no system site-packages)
gets `pip install <sdist>` with build isolation on: pip builds in a temporary environment
holding only pyproject's [build-system] requires, so the build cannot lean on anything of this
checkout's environment. `pip install <checkout>` and `pip install git+URL` (the README's ways)
take the same backend over the same files: the sdist test below holds the sdist to every file
of the checkout the build reads, so the one build here stands for them all. A Python started
in another folder, with nothing of the checkout on sys.path, imports ffi_cookbook from the
fresh venv, loads the library and checks a kernel against NumPy.

Each step prints its wall time (`pytest -s tests/product/test_wheel.py` shows them).
"""

import json
import os
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

from tests.product.test_rpath import origin_relative, search_path

# CUDA off for these builds: with nvcc on PATH every .cu of the cookbook would be
# compiled for two architectures (minutes on two cores), and what is tested here,
# packaging, is the same with or without CUDA; the CUDA build is the runtime's
# (`make runtime`) and tests/product/test_nvcc.py's.
CUDA_OFF = "--config-settings=cmake.define.FFI_COOKBOOK_CUDA=OFF"

# Runs in the fresh venv, from a folder outside the checkout, under -I (no
# PYTHON* variables, no user site, no current folder on sys.path).
CHECK_INSTALLED = r"""
import json, sys
from importlib import metadata
from pathlib import Path
import numpy as np
import ffi_cookbook

x = np.arange(7, dtype=np.float32)
y = np.empty_like(x)
ffi_cookbook.load().add_one_cpu(x, y)
np.testing.assert_array_equal(y, x + 1)
package = Path(ffi_cookbook.__file__).parent
print(json.dumps({
    "package": str(package),
    "library": str(ffi_cookbook.library_path()),
    "variants": ffi_cookbook.variants(),
    # pip byte-compiles every .py it installs: __pycache__ is pip's, not the wheel's.
    "recipes": sorted(str(p.relative_to(package / "data" / "cookbook"))
                      for p in (package / "data" / "cookbook").rglob("*")
                      if p.is_file() and "__pycache__" not in p.parts),
    "headers": sorted(p.name for p in (package / "include" / "ffi_cookbook").glob("*.h")),
    "direct_url": json.loads(metadata.distribution("ffi-cookbook").read_text("direct_url.json")),
}))
"""


def run(cmd, **kwargs):
    """Run a command; return (stdout, seconds). Fails the test with its output when it fails."""
    start = time.perf_counter()
    done = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kwargs)
    seconds = time.perf_counter() - start
    assert done.returncode == 0, f"{cmd}\nstdout:\n{done.stdout[-4000:]}\nstderr:\n{done.stderr[-4000:]}"
    return done.stdout, seconds


def timed(step, cmd, **kwargs):
    out, seconds = run(cmd, **kwargs)
    print(f"[fresh venv] {step}: {seconds:.1f} s")
    return out


def source_files(root: Path, folder: str) -> set[str]:
    """Files of the checkout under `folder` that a copy carries: tracked, or new and not ignored."""
    out, _ = run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "--", folder], cwd=root)
    return {name for name in out.splitlines() if (root / name).is_file()}


@pytest.fixture(scope="session")
def venv(tmp_path_factory):
    """A fresh virtual environment of the base Python: nothing of the project's venv in it."""
    path = tmp_path_factory.mktemp("user") / "venv"
    timed("python -m venv", [sys.executable, "-m", "venv", path])
    return path


def check_installed(venv: Path, workdir: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FFI_COOKBOOK")}
    out, _ = run([venv / "bin" / "python", "-I", "-c", CHECK_INSTALLED], cwd=workdir, env=env)
    return json.loads(out)


@pytest.fixture(scope="session")
def sdist(root, tmp_path_factory):
    """The sdist, made by the build backend's own hook (what `python -m build --sdist` calls)."""
    out = tmp_path_factory.mktemp("sdist")
    name = timed("build the sdist", [sys.executable, "-c",
                                     "import sys; from scikit_build_core.build import build_sdist; "
                                     "print(build_sdist(sys.argv[1]))", out], cwd=root).split()[-1]
    return out / name


@pytest.fixture(scope="session")
def installed(sdist, venv, tmp_path_factory):
    timed("pip install <sdist>", [venv / "bin" / "pip", "install", "-q", CUDA_OFF, sdist])
    return check_installed(venv, tmp_path_factory.mktemp("elsewhere"))


def test_installed_package_loads_its_own_library(installed, venv):
    assert Path(installed["package"]).is_relative_to(venv)
    assert Path(installed["library"]) == Path(installed["package"]) / "lib" / "libffi_cookbook.so"
    assert installed["variants"] == ["cpu"]
    # pip's record of where the installed copy came from: the sdist file.
    assert installed["direct_url"]["url"].endswith(".tar.gz")


# Loads the installed library before anything imported tvm_ffi: the loader has to
# find libtvm_ffi.so through the library's own RPATH. Prints where it found it.
LOAD_ALONE = r"""
import ctypes, sys
ctypes.CDLL(sys.argv[1])
with open("/proc/self/maps") as maps:
    print(sorted({line.split()[-1] for line in maps if line.rstrip().endswith("/libtvm_ffi.so")}))
"""


def test_installed_libraries_find_tvm_ffi_through_origin_only(installed, venv, tmp_path):
    """Every ELF file the package installs searches $ORIGIN-relative folders only (no empty
    entry, no ".", no path of the machine that built it), and one of them holds libtvm_ffi.so."""
    package = Path(installed["package"])
    libraries = [p for p in package.rglob("*.so*") if p.is_file() and p.read_bytes()[:4] == b"\x7fELF"]
    assert Path(installed["library"]) in libraries
    site_packages = package.parent.resolve()
    for library in libraries:
        entries = search_path(library)
        assert entries and all(origin_relative(e) is not None for e in entries), (library, entries)
        folders = [(library.parent / origin_relative(e)).resolve() for e in entries]
        assert site_packages / "tvm_ffi" / "lib" in folders, (library, entries)
    # The loader agrees, from a folder that holds a decoy libtvm_ffi.so.
    (tmp_path / "libtvm_ffi.so").write_bytes(b"not a library")
    env = {k: v for k, v in os.environ.items() if k not in {"LD_LIBRARY_PATH", "LD_PRELOAD"}}
    out, _ = run([venv / "bin" / "python", "-I", "-c", LOAD_ALONE, installed["library"]],
                 cwd=tmp_path, env=env)
    assert out.strip() == repr([str(site_packages / "tvm_ffi" / "lib" / "libtvm_ffi.so")])


def test_install_carries_headers_and_recipe_folders(root, installed):
    """The wheel holds each recipe's self-contained folder, made at its build (tools/takeaway.py):
    what `ffi-cookbook get` copies out, the notebook converted already."""
    from ffi_cookbook import catalog
    from tools import takeaway

    headers = {p.name for p in (root / "include" / "ffi_cookbook").glob("*.h")}
    assert set(installed["headers"]) == headers
    expected = {f"{r.name}/{rel}" for r in catalog.recipes() for rel in takeaway.recipe_files(r.name)}
    assert set(installed["recipes"]) == expected
    assert {"01-add-one/add_one_cpu.cc", "01-add-one/notebook.ipynb"} <= expected


def test_sdist_carries_what_the_build_needs(root, sdist):
    with tarfile.open(sdist) as tar:
        names = {name.split("/", 1)[1] for name in tar.getnames() if "/" in name}
    for folder in ["runtime", "include", "python", "cookbook"]:
        missing = source_files(root, folder) - names
        assert not missing, f"{sdist.name} lacks {sorted(missing)[:5]}"
    assert not {n for n in names if n.split("/")[0] in {"_build", ".venv", "build"} or "__pycache__" in n}


def test_installed_cmake_package_finds_its_headers(installed, venv, tmp_path):
    """find_package(ffi_cookbook) from the wheel: headers found next to the package, no Python query."""
    project = tmp_path / "user_project"
    project.mkdir()
    (project / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.18)\nproject(uses_wheel LANGUAGES CXX)\n"
        f"set(ffi_cookbook_DIR \"{Path(installed['package']) / 'cmake'}\")\n"
        "find_package(ffi_cookbook CONFIG REQUIRED)\n"
        "ffi_cookbook_add_library(uses_wheel CPU uses_wheel.cc)\n")
    (project / "uses_wheel.cc").write_text(
        "#include <ffi_cookbook/check.h>\n"
        "int Twice(int x) { return 2 * x; }\n"
        "TVM_FFI_DLL_EXPORT_TYPED_FUNC(twice, Twice);\n")
    build = tmp_path / "build"
    timed("cmake against the installed package", ["cmake", "-S", project, "-B", build, "-DFFI_COOKBOOK_CUDA=OFF",
                                                  f"-DPython_EXECUTABLE={venv / 'bin' / 'python'}"])
    run(["cmake", "--build", build])
    assert (build / "libuses_wheel.so").is_file()
    commands = json.loads((build / "compile_commands.json").read_text())
    assert f"-I{Path(installed['package']) / 'include'}" in commands[0]["command"]


def test_installed_get_writes_a_recipe_without_jupytext(installed, venv, tmp_path):
    """`ffi-cookbook get` from the wheel copies the folder its build made; the installed package
    converts nothing, so jupytext is not a dependency."""
    from tools import takeaway

    env = {k: v for k, v in os.environ.items() if not k.startswith("FFI_COOKBOOK")}
    missing = subprocess.run([venv / "bin" / "python", "-I", "-c", "import jupytext"], capture_output=True, env=env)
    assert missing.returncode != 0, "jupytext got installed with the package"
    run([venv / "bin" / "ffi-cookbook", "get", "05", tmp_path / "r"], cwd=tmp_path, env=env)
    written = {p.relative_to(tmp_path / "r").as_posix(): p.read_bytes()
               for p in (tmp_path / "r").rglob("*") if p.is_file()}
    assert written == takeaway.recipe_files("05-dtype-dispatch")
