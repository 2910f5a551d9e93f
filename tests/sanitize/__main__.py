"""``python -m tests.sanitize``: the recipe tests and the fuzz against sanitized builds (see __init__)."""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tools.cmake_build import BUILDS_ELSEWHERE_ENV
from tests.sanitize import FLAGS, REPORT, ROOT, default_build, sanitizer_env


#: Tests of the default selection that run no instrumented code, or only a crash planted in
#: the probe to test the fuzz itself, left out with the reason: under the sanitizer runtimes
#: they take minutes and could report nothing of ours. (The fuzz's other planted crash skips
#: itself in this run: UBSan reports it first.)
NOTHING_INSTRUMENTED = {
    "tests/product/test_fuzz.py::test_fuzz_reports_a_planted_crash":
        "a crash planted in the probe, to test that the fuzz finds it",
    "cookbook/13-wheel-packaging": "pip builds the wheel (build isolation), without the sanitizer flags",
    "cookbook/22-cuda-wheel": "pip builds the CUDA wheel (build isolation), without the sanitizer flags",
    "cookbook/17-typed-python-layer/test_typed_layer.py::test_mypy_accepts_the_correct_caller":
        "mypy reads Python source; no kernel runs",
    "cookbook/17-typed-python-layer/test_typed_layer.py::test_mypy_rejects_the_wrong_caller_line_by_line":
        "mypy reads Python source; no kernel runs",
    **{f"cookbook/15-jit-kernels/test_row_norm.py::{name}":
       "kernels compiled at run time by tvm_ffi.cpp with its own flags, not the run's (and a torch "
       "extension); the file's other tests run the same kernels in the test process"
       for name in ["test_four_processes_compile_once", "test_torch_extension_computes_the_same"]},
    **{f"cookbook/15-jit-kernels/test_row_norm.py::{name}":
       "tests of the JIT cache (what changes its key, what rebuilds): the kernels they compile use "
       "tvm_ffi.cpp's own flags, not the run's, so nothing instrumented runs"
       for name in ["test_what_changes_the_cache_key", "test_what_rebuilds_under_the_same_key",
                    "test_cuda_source_compiles_through_jit"]},
    **{f"cookbook/16-objects-and-callbacks/test_objects.py::{name}":
       "children that watch the dynamic loader (unmapping, NODELETE pinning, a second copy's "
       "abort); the object code they run is what the file's other tests run in the test process"
       for name in ["test_object_outliving_its_library_crashes_unless_kept_alive",
                    "test_the_loader_pinning_the_library_decides_whether_it_stays",
                    "test_a_unique_symbol_defined_first_elsewhere_does_not_pin_the_library",
                    "test_second_library_registering_the_same_type_aborts"]},
    "cookbook/07-nvshmem/test_ring.py::test_torchrun_ranks_receive_the_identical_unique_id":
        "without NVSHMEM (no nvcc in this run) the ranks exchange a random stand-in id",
    **{f"cookbook/19-debugging-crashes/test_debugging.py::{name}":
       "crash_demos.py runs its broken kernels in children without the run's sanitizers"
       for name in ["test_address_sanitizer_finds_the_write_past_the_end",
                    "test_faulthandler_names_the_python_line_of_the_crash",
                    "test_gdb_names_the_kernel_source_line",
                    "test_unchecked_launch_fails_silently_and_the_check_raises_without_a_gpu",
                    "test_an_undefined_symbol_ends_the_process_at_the_first_call",
                    "test_ld_bind_now_fails_the_load_instead",
                    "test_a_second_libtvm_ffi_aborts_and_ldd_shows_which_copy_a_library_takes"]},
}


def flags_for(folder: Path) -> list[str]:
    """FLAGS, but CUDA stays on for a project that names it in project() (recipe 22's wheel
    template): it cannot configure without nvcc. Its CUDA code is not instrumented either way,
    so it compiles for one architecture only: it is there to link the library the fuzz calls."""
    from tests.fuzz.run import ONE_GPU_ARCHITECTURE, names_cuda

    if names_cuda(folder):
        return [f for f in FLAGS if f != "-DCMAKE_CUDA_COMPILER=OFF"] + [ONE_GPU_ARCHITECTURE]
    return FLAGS


def recipe_copy(build: Path, name: str) -> Path:
    """Recipe ``name`` as its zip holds it, under ``<build>/cookbook/<name>`` (written again when
    the recipe changed): its tests load ``build/`` beside them, so the sanitized build and the
    tests that load it live in a copy, and the checkout's own build/ stays as it is."""
    from tests.fuzz.run import written_copy
    from tools import takeaway

    return written_copy(takeaway.recipe_files(name), build / "cookbook" / name)


def build_all(build: Path) -> None:
    """Configure and build, sanitized, every project whose libraries the tests and the fuzz
    call: a copy of each recipe folder (:func:`recipe_copy`), the wheel templates, the guides'
    and concepts' code, the project `ffi-cookbook new` writes, and the probe (later cmake_build
    calls keep the cache, so the flags stay; left to the fuzz, the last four would be built one
    at a time, unsanitized). Checkout folders build under ``<build>/cmake``."""
    os.environ["FFI_COOKBOOK_BUILD_DIR"] = str(build)
    os.environ[BUILDS_ELSEWHERE_ENV] = str(build / "cmake")
    from tools.cmake_build import cmake_build
    from tests.fuzz.run import new_library_copy, projects

    folders = [recipe_copy(build, f.name) if f.parent == ROOT / "cookbook" else f for f in projects()]
    folders += [new_library_copy(), ROOT / "tests" / "probe"]
    # Most folders compile one or two sources, so one folder at a time leaves cores idle:
    # build as many folders at once as there are cores (each in its own build folder).
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        for done in [pool.submit(cmake_build, f, *flags_for(f), verbose=False) for f in folders]:
            try:
                done.result()
            except subprocess.CalledProcessError as failed:  # say why, not only which command
                print(failed.stdout, failed.stderr, sep="\n", file=sys.stderr)
                raise


def recipes_longest_first(build_root: Path, sanitize: Path) -> list[str]:
    """The recipe folders, those whose tests took longest in this run's site build first (the
    README runs' junit files, ``<build_root>/recipe-runs/<name>.junit.xml``, less the tests left
    out here), by name without them. pytest-xdist hands the groups out in this order; a long one
    given out last keeps one worker busy while the other has nothing left."""
    import xml.etree.ElementTree as ET

    from ffi_cookbook import catalog
    from tools.recipe_runs import RUNS

    def seconds(name: str) -> float:
        junit = build_root / RUNS / f"{name}.junit.xml"
        if not junit.is_file():
            return 0.0
        left_out = {node.removeprefix(f"cookbook/{name}/") for node in NOTHING_INSTRUMENTED}
        return sum(float(case.get("time", 0)) for case in ET.parse(junit).iter("testcase")
                   if f"{case.get('file')}::{case.get('name')}" not in left_out)

    names = [r.name for r in catalog.recipes() if f"cookbook/{r.name}" not in NOTHING_INSTRUMENTED]
    return [in_copies(f"cookbook/{name}", sanitize) for name in sorted(names, key=seconds, reverse=True)]


def in_copies(node: str, sanitize: Path) -> str:
    """A test path or node id under ``cookbook/`` as it is in the run's recipe copies
    (``<sanitize>/cookbook``, :func:`recipe_copy`)."""
    if not node.startswith("cookbook/"):
        return node
    return os.path.relpath(sanitize / node, ROOT)


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.sanitize")
    parser.add_argument("--build", type=Path, default=default_build())
    parser.add_argument("--workers", type=int, default=0,
                        help="pytest-xdist processes, each test file on one (0: one process)")
    parser.add_argument("--junit", type=Path, default=None,
                        help="pytest's junit file (make test-sanitize: <build>/timing/sanitize-junit.xml)")
    parser.add_argument("pytest_args", nargs="*",
                        help="what pytest runs (default: the recipe tests but NOTHING_INSTRUMENTED, "
                             "tests/product/test_helpers.py and tests/product/test_fuzz.py)")
    opts = parser.parse_args()
    if not opts.pytest_args:
        # the fuzz first: its file is the longest group, one worker's from the start
        opts.pytest_args = ["tests/product/test_fuzz.py", *recipes_longest_first(opts.build.resolve().parent, opts.build.resolve()),
                            "tests/product/test_helpers.py",
                            *(f"--deselect={in_copies(node, opts.build.resolve())}" if "::" in node
                              else f"--ignore={in_copies(node, opts.build.resolve())}"
                              for node in NOTHING_INSTRUMENTED)]
        print(f"left out, nothing instrumented runs in them: {len(NOTHING_INSTRUMENTED)} "
              "(tests/sanitize/__main__.py, NOTHING_INSTRUMENTED)")
    build = opts.build.resolve()
    start = time.monotonic()
    build_all(build)
    built = time.monotonic()
    # Tests marked timing compare speeds: meaningless with one side instrumented.
    pytest_options = ["-q", "-p", "no:cacheprovider", "-p", "tests_per_process", "-m", "not timing"]
    # Groups in the order given (xdist would sort them by their number of tests, which put the
    # fuzz, few tests and the longest group, last, the other worker idle meanwhile).
    parallel = ["-n", str(opts.workers), "--dist", "loadgroup", "--no-loadscope-reorder"] if opts.workers else []
    junit = []
    if opts.junit:  # tools/bench_loop.py's per-recipe sanitizer seconds
        opts.junit.parent.mkdir(parents=True, exist_ok=True)
        junit = [f"--junitxml={opts.junit.resolve()}"]
    log = build / "pytest.log"
    status, text, files = run_tests(build, log.name,
                                    [*pytest_options, "--durations=15", *parallel, *junit, *opts.pytest_args])
    print(text[-6000:])
    print(f"sanitizer run: build {built - start:.0f} s, tests {time.monotonic() - built:.0f} s")
    crashed = tracer_crashes(files, build / "processes")
    if crashed and not REPORT.search(text):
        # LeakSanitizer's stop-the-world tracer now and then segfaults at a process's exit
        # ("Tracer caught signal 11", google/sanitizers#1353): the process was not checked,
        # nothing was found. Its tests run once more; a second crash or any report fails.
        tests = sorted({node for nodes in crashed.values() for node in nodes})
        print(f"LeakSanitizer's tracer crashed in {len(crashed)} process(es) (google/sanitizers#1353), "
              f"so they went unchecked; their {len(tests)} test(s) run again:\n  " + "\n  ".join(tests))
        for path in files:
            print(f"--- {path}\n{path.read_text(errors='replace')[-4000:]}")
        log = build / "pytest-again.log"
        status, text, files = run_tests(build, log.name, [*pytest_options, *parallel, *tests])
        print(text[-3000:])
    reports = sorted({m.group(0) for m in REPORT.finditer(text)})
    if reports or files:
        for path in files:
            print(f"--- {path}\n{path.read_text(errors='replace')[-4000:]}")
        print(f"sanitizer reports found ({', '.join(reports) or len(files)}): see {log} and {build / 'reports'}")
        return 1
    print(f"sanitizers: 0 reports (pytest exit status {status}; log {log})")
    return status


def run_tests(build: Path, log_name: str, pytest_args: list[str]) -> tuple[int, str, list[Path]]:
    """pytest under the sanitizer runtimes, from empty reports and processes folders: its exit
    status, its output (also in <build>/<log_name>) and the report files the sanitizers wrote."""
    for folder in ("reports", "processes"):
        shutil.rmtree(build / folder, ignore_errors=True)
        (build / folder).mkdir()
    env = sanitizer_env(build)
    env.setdefault("FFI_COOKBOOK_FUZZ_CASES", "3000")
    log = build / log_name
    with open(log, "w") as out:
        done = subprocess.run([sys.executable, "-m", "pytest", *pytest_args],
                              cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    return done.returncode, log.read_text(errors="replace"), sorted((build / "reports").glob("*"))


def tracer_crashes(files: list[Path], processes: Path) -> dict[str, list[str]] | None:
    """When every report file says only that LeakSanitizer's tracer crashed, the tests each of
    those processes ran or was started by (pid -> node ids); None when any file says more, or
    names a process whose tests are not known."""
    crashed = {}
    for path in files:
        text = path.read_text(errors="replace")
        pid = path.suffix.lstrip(".")
        ran = processes / pid
        if (REPORT.search(text) or "LeakSanitizer has encountered a fatal error" not in text
                or "Tracer caught signal" not in text or not ran.is_file()):
            return None
        # pytest-xdist's --dist loadgroup adds "@<group>" to a node id; pytest takes it without.
        crashed[pid] = sorted({re.sub(r"@[^\[\]]*$", "", line) for line in ran.read_text().splitlines()})
    return crashed


if __name__ == "__main__":
    sys.exit(main())
