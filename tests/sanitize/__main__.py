"""``python -m tests.sanitize``: the recipe tests and the fuzz against sanitized builds.

Builds the recipe library, every recipe folder and the probe with
``-DFFI_COOKBOOK_SANITIZE=address,undefined`` into their own folders under
``--build`` (CUDA off: nvcc code is not instrumented and needs no GPU-less
check twice), then runs pytest with AddressSanitizer, UBSan and LeakSanitizer
in every Python process. Any sanitizer report fails the run.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
FLAGS = ["-DFFI_COOKBOOK_SANITIZE=address,undefined", "-DFFI_COOKBOOK_CUDA=OFF",
         "-DFFI_COOKBOOK_NVSHMEM=OFF", "-DCMAKE_CUDA_COMPILER=OFF", "-DCMAKE_BUILD_TYPE=RelWithDebInfo"]
REPORT = re.compile(r"ERROR: (AddressSanitizer|LeakSanitizer)|runtime error: |SUMMARY: UndefinedBehaviorSanitizer")


def gcc_runtime(name: str) -> str:
    return subprocess.run(["gcc", f"-print-file-name={name}"], capture_output=True, text=True,
                          check=True).stdout.strip()


def sanitizer_env(build: Path) -> dict:
    """The environment of the run: sanitized builds found first, runtimes for Python only."""
    return dict(
        os.environ,
        FFI_COOKBOOK_BUILD_DIR=str(build),
        FFI_COOKBOOK_LIBRARY=str(build / "runtime" / "libffi_cookbook.so"),
        FFI_COOKBOOK_SANITIZER_PRELOAD=f"{gcc_runtime('libasan.so')}:{gcc_runtime('libubsan.so')}",
        PYTHONPATH=os.pathsep.join([str(HERE), str(ROOT)] + [p for p in [os.environ.get("PYTHONPATH")] if p]),
        # allocator_may_return_null: a huge request fails like malloc does (the kernels must raise).
        ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:allocator_may_return_null=1:"
                     "detect_odr_violation=0:handle_segv=1",
        UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1",
        LSAN_OPTIONS=f"suppressions={HERE / 'lsan.supp'}:print_suppressions=0",
    )


def build_all(build: Path) -> None:
    """Configure and build every sanitized library (later cmake_build calls keep the cache)."""
    os.environ["FFI_COOKBOOK_BUILD_DIR"] = str(build)
    from ffi_cookbook.build import cmake_build, cmake_commands

    for cmd in cmake_commands(ROOT / "runtime", build / "runtime", *FLAGS):
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    folders = [p.parent for p in sorted((ROOT / "cookbook").glob("*/CMakeLists.txt"))]
    for folder in folders + [ROOT / "tests" / "probe"]:
        cmake_build(folder, *FLAGS, verbose=False)


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.sanitize")
    parser.add_argument("--build", type=Path, default=ROOT / "_build" / "sanitize")
    parser.add_argument("pytest_args", nargs="*", default=["cookbook", "tests/test_helpers.py",
                                                           "tests/test_fuzz.py"])
    opts = parser.parse_args()
    build = opts.build.resolve()
    build_all(build)
    env = sanitizer_env(build)
    env.setdefault("FFI_COOKBOOK_FUZZ_CASES", "3000")
    log = build / "pytest.log"
    with open(log, "w") as out:
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *opts.pytest_args],
                              cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    text = log.read_text(errors="replace")
    print(text[-6000:])
    reports = sorted({m.group(0) for m in REPORT.finditer(text)})
    if reports:
        print(f"sanitizer reports found ({', '.join(reports)}): see {log}")
        return 1
    print(f"sanitizers: 0 reports (pytest exit status {done.returncode}; log {log})")
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
