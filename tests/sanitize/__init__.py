"""Sanitizer runs: the build flags and the environment of `make test-sanitize`.

Builds a copy of every recipe folder (its zip's files, under ``--build``/cookbook, whose tests
run there), the other projects and the probe with ``-fsanitize=address,undefined``
(CMake's flag variables) into their own folders under ``--build`` (CUDA off: nvcc
code is not instrumented and needs no GPU-less check twice), then runs pytest with
AddressSanitizer, UBSan and LeakSanitizer in every Python process. Any sanitizer
report fails the run. The recipe library (runtime/) is not built: it compiles the
recipe folders' own ``*_cpu.cc`` sources, which the folders' sanitized builds cover.
"""

from __future__ import annotations

import importlib.util
import os
import re
from pathlib import Path

from tools.cmake_build import build_root

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
# The sanitizers come from outside every CMakeLists.txt: CMake's own flag variables, for the
# C and C++ compiles and every link. CMAKE_CUDA_COMPILER=OFF keeps a recipe folder from
# looking for nvcc (check_language(CUDA) skips a compiler already set; built_variants
# reads OFF as "no CUDA"); FFI_COOKBOOK_CUDA/NVSHMEM=OFF does the same for the projects
# built with the cookbook's CMake package (tests/probe) and the guides' code.
SANITIZE = "-fsanitize=address,undefined -fno-omit-frame-pointer"
FLAGS = [f"-DCMAKE_C_FLAGS={SANITIZE}", f"-DCMAKE_CXX_FLAGS={SANITIZE}",
         "-DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=address,undefined",
         "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined",
         "-DCMAKE_CUDA_COMPILER=OFF", "-DFFI_COOKBOOK_CUDA=OFF", "-DFFI_COOKBOOK_NVSHMEM=OFF",
         # -O1 and line tables (what reports need), NDEBUG as in a release build: a file of
         # tvm_ffi's headers compiles instrumented in half the time -O2 -g takes; the tests
         # run somewhat slower, less than the build saves; -O0 slows them more than it saves.
         "-DCMAKE_BUILD_TYPE=RelWithDebInfo", "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG",
         "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"]
REPORT = re.compile(r"ERROR: (AddressSanitizer|LeakSanitizer)|runtime error: |SUMMARY: UndefinedBehaviorSanitizer")


def default_build() -> Path:
    """Where `make test-sanitize` builds: ``sanitize`` in the checkout's build root."""
    return build_root(ROOT) / "sanitize"


def gcc_runtime(name: str) -> str:
    """The path of a GCC runtime library, e.g. ``libasan.so``, as the ``gcc`` on PATH has it."""
    import subprocess

    return subprocess.run(["gcc", f"-print-file-name={name}"], capture_output=True, text=True,
                          check=True).stdout.strip()


def rpath_dlopen_folders() -> list[str]:
    """Folders of libraries that other libraries dlopen by bare name through their RPATH.

    ASan intercepts ``dlopen``, so glibc sees libasan as the caller and searches
    libasan's RPATH instead of the calling library's (google/sanitizers#1219,
    llvm.org/PR27790). NVRTC (recipe 20, the nvidia-cuda-nvrtc wheel) loads
    ``libnvrtc-builtins.so.13.*`` that way from ``$ORIGIN`` and then fails with
    "failed to open libnvrtc-builtins"; LD_LIBRARY_PATH is searched whoever the
    caller is, so the run puts that one folder on it.
    """
    spec = importlib.util.find_spec("nvidia")
    folders = spec.submodule_search_locations if spec else []
    return sorted({str(p.parent) for f in folders for p in Path(f).glob("*/lib/libnvrtc-builtins.so*")})


def sanitizer_env(build: Path) -> dict:
    """The environment of the run: sanitized builds found first, runtimes for Python only."""
    # An empty LD_LIBRARY_PATH entry would mean the current folder: join only what is there.
    library_path = os.pathsep.join(rpath_dlopen_folders() + [p for p in [os.environ.get("LD_LIBRARY_PATH")] if p])
    return dict(
        os.environ,
        **({"LD_LIBRARY_PATH": library_path} if library_path else {}),
        FFI_COOKBOOK_BUILD_DIR=str(build),
        FFI_COOKBOOK_CMAKE_BUILDS=str(build / "cmake"),  # checkout folders' builds (build_dir_for)
        # where each process notes its tests (sitecustomize, tests_per_process; __main__'s
        # tracer crashes)
        FFI_COOKBOOK_SANITIZER_PROCESSES=str(build / "processes"),
        FFI_COOKBOOK_SANITIZER_PRELOAD=f"{gcc_runtime('libasan.so')}:{gcc_runtime('libubsan.so')}",
        # Python objects in malloc'd memory, where LeakSanitizer looks for pointers. With
        # CPython's own allocator they live in mmap'd arenas that LeakSanitizer does not scan,
        # so anything a live Python object owns at exit (a tvm_ffi Function, Module or Error
        # held by a global, a cached exception) was reported as leaked from libtvm_ffi.so.
        PYTHONMALLOC="malloc",
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


