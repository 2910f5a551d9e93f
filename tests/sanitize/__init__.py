"""Sanitizer runs: the build flags and the environment of `make test-sanitize`.

Builds the recipe library, every recipe folder and the probe with
``-DFFI_COOKBOOK_SANITIZE=address,undefined`` into their own folders under
``--build`` (CUDA off: nvcc code is not instrumented and needs no GPU-less
check twice), then runs pytest with AddressSanitizer, UBSan and LeakSanitizer
in every Python process. Any sanitizer report fails the run.
"""

from __future__ import annotations

import os
import re
import subprocess
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
        # allocator_may_return_null: a huge request fails like malloc does (the kernels must
        # raise). malloc_context_size=3: leak stacks hold the allocation site and two callers,
        # which is what lsan.supp matches (see there).
        # log_path: reports go to files as well, since pytest captures a test's stderr and a
        # process that a sanitizer stops never prints it.
        ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:allocator_may_return_null=1:malloc_context_size=3:"
                     f"log_path={build / 'reports' / 'asan'}",
        UBSAN_OPTIONS=f"halt_on_error=1:print_stacktrace=1:log_path={build / 'reports' / 'ubsan'}",
        LSAN_OPTIONS=f"suppressions={HERE / 'lsan.supp'}:print_suppressions=0",
    )


