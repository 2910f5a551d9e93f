"""Build the kernels broken on purpose, and run each failure in a child process.

The broken kernels (broken_kernels.cc, broken_launches.cu) are built only on
request (``-DCRASH_DEMOS=ON``) into folders of their own under build/
(build/demos, build/asan), so the library the recipe ships, and any tool that
loads every library of the default build (build/*.so), never sees them. Every failure runs in a child
Python process: a crash ends that process, not the caller, and the child's
output is what the notebook shows and the test asserts.
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: Variables of a sanitizer run (or a shell) that must not reach the children:
#: each child is given exactly the runtime and options it needs.
SANITIZER_VARIABLES = ("LD_PRELOAD", "ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS",
                       "FFI_COOKBOOK_SANITIZER_PRELOAD")


# [build_demos.begin]
@functools.lru_cache(maxsize=None)  # once per process
def build_demos(sanitize: str = "") -> Path:
    """Build libcrash_demos.so (with ``-fsanitize=<sanitize>`` when given); return its path."""
    build = HERE / "build" / ("asan" if sanitize else "demos")  # under build/: ignored, never shipped
    flags = ["-DCRASH_DEMOS=ON", "-DCMAKE_BUILD_TYPE=RelWithDebInfo"]
    if sanitize:  # CMake's own flag variables; nvcc code is not instrumented: no CUDA compiler
        flags += [f"-DCMAKE_CXX_FLAGS=-fsanitize={sanitize} -fno-omit-frame-pointer",
                  f"-DCMAKE_SHARED_LINKER_FLAGS=-fsanitize={sanitize}", "-DCMAKE_CUDA_COMPILER=OFF"]
    # The README's two commands, with the flags above and a build folder of their own.
    subprocess.run(["cmake", "-S", str(HERE), "-B", str(build), f"-DPython_EXECUTABLE={sys.executable}",
                    *flags], check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--build", str(build)], check=True, stdout=subprocess.DEVNULL)
    return build / "libcrash_demos.so"
# [build_demos.end]


def child_env(**extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in SANITIZER_VARIABLES}
    env.update(extra)
    return env


def python_child(code: str, *, prefix: list[str] = (), env: dict | None = None,
                 timeout: int = 300) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh Python (behind ``prefix``, e.g. gdb); return what it did."""
    cmd = [*prefix, sys.executable, "-c", textwrap.dedent(code)]
    return subprocess.run(cmd, cwd=HERE, env=env or child_env(), capture_output=True, text=True,
                          timeout=timeout)


# [asan_run.begin]
def scan_under_asan() -> subprocess.CompletedProcess:
    """The off-by-one scan, built with -fsanitize=address, in a Python with ASan's runtime preloaded."""
    library = build_demos(sanitize="address")
    libasan = tool("gcc", "-print-file-name=libasan.so").strip()  # the runtime of the GCC that built it
    env = child_env(LD_PRELOAD=libasan,  # ASan must be the first library loaded
                    ASAN_OPTIONS="detect_leaks=0")  # Python frees little at exit: leaks are noise here
    return python_child(f"""
        import numpy as np, tvm_ffi
        mod = tvm_ffi.load_module({str(library)!r})
        x = np.ones(5, np.float32)
        out = np.empty(5, np.float32)
        mod.exclusive_scan_off_by_one(x, out)
        print("returned", out)
    """, env=env)
# [asan_run.end]


# [gather_crash.begin]
GATHER_OUT_OF_RANGE = """
    import faulthandler
    import numpy as np, tvm_ffi
    faulthandler.enable()  # or: python -X faulthandler, or PYTHONFAULTHANDLER=1
    mod = tvm_ffi.load_module({library!r})
    x = np.arange(5, dtype=np.float32)
    index = np.array([1, 3, 1 << 40])  # the last index is far outside x
    out = np.empty(3, np.float32)
    mod.gather_unchecked(x, index, out)
"""


def gather_with_faulthandler() -> subprocess.CompletedProcess:
    return python_child(GATHER_OUT_OF_RANGE.format(library=str(build_demos())))


def gather_under_gdb() -> subprocess.CompletedProcess:
    """The same crash under ``gdb -batch``: run, stop at the fault, print the innermost frames.

    gdb reads the symbols of every library the process loads unless told not to;
    torch's are large, so it reads only the kernel library's, once stopped.
    """
    gdb = ["gdb", "-batch", "-nx", "-ex", "set debuginfod enabled off", "-ex", "set auto-solib-add off",
           "-ex", "run", "-ex", "sharedlibrary libcrash_demos", "-ex", "bt 3", "--args"]
    return python_child(GATHER_OUT_OF_RANGE.format(library=str(build_demos())), prefix=gdb)
# [gather_crash.end]


def without_folders(text: str) -> str:
    """``text`` with the folders of absolute paths dropped: /x/y/libz.so -> libz.so."""
    return re.sub(r"(?<![\w.])/[^\s:]*/", "", text)


def lines_with(text: str, *needles: str) -> list[str]:
    """The lines of a report that contain one of ``needles`` (reports also name machine paths)."""
    return [line.strip() for line in text.splitlines() if any(n in line for n in needles)]


# [fill_run.begin]
FILL_LAUNCHES = """
    import torch, tvm_ffi
    mod = tvm_ffi.load_module({library!r})
    on_gpu = torch.cuda.is_available()
    out = torch.zeros(4096, device="cuda" if on_gpu else "cpu")
    threads = 2048 if on_gpu else 256  # a block holds at most 1024 threads; without a GPU no launch works
    mod.fill_unchecked(out, 1.0, threads)
    print("fill_unchecked returned")
    try:  # the failed launch's error is still pending: the next one to ask gets it
        print("out is still all zero:", bool((out == 0).all()))
    except RuntimeError as err:
        print("the next torch operation raised:", str(err).splitlines()[0])
    try:
        mod.fill_checked(out, 1.0, threads)
    except RuntimeError as err:
        print("fill_checked raised RuntimeError:", str(err).splitlines()[-1])
"""


def fill_launches() -> subprocess.CompletedProcess:
    return python_child(FILL_LAUNCHES.format(library=str(build_demos())))
# [fill_run.end]


# [async_run.begin]
WRITE_FAR = """
    import torch, tvm_ffi
    mod = tvm_ffi.load_module({library!r})
    out = torch.zeros(4, device="cuda")
    mod.write_at(out, 1 << 40)  # 4 TiB past out: the kernel faults, the launch did not
    print("write_at returned")
    try:
        torch.cuda.synchronize()
    except RuntimeError as err:  # torch.AcceleratorError is a RuntimeError
        print("torch.cuda.synchronize raised:", str(err).splitlines()[0])
"""


def write_far(blocking: bool = False) -> subprocess.CompletedProcess:
    """The faulting kernel; with ``blocking`` (CUDA_LAUNCH_BLOCKING=1) every launch waits for its kernel."""
    env = child_env(CUDA_LAUNCH_BLOCKING="1") if blocking else None
    return python_child(WRITE_FAR.format(library=str(build_demos())), env=env)
# [async_run.end]


# [compute_sanitizer_run.begin]
WRITE_ONE_PAST = """
    import torch, tvm_ffi
    mod = tvm_ffi.load_module({library!r})
    out = torch.zeros(4, device="cuda")
    mod.write_at(out, 4)  # one float past the end: no fault, the GPU does not check
    torch.cuda.synchronize()
    print("write_at(out, 4) returned and synchronised without an error")
"""


def compute_sanitizer() -> Path:
    """compute-sanitizer from the nvidia-cuda-sanitizer-api wheel (FileNotFoundError without it)."""
    try:
        import nvidia  # a namespace package that several NVIDIA wheels share: look in each folder
    except ImportError:
        nvidia = None
    for folder in getattr(nvidia, "__path__", []):
        found = Path(folder) / "cu13" / "bin" / "compute-sanitizer"
        if found.is_file():
            return found
    raise FileNotFoundError("nvidia/cu13/bin/compute-sanitizer: pip install nvidia-cuda-sanitizer-api")


def write_one_past(sanitized: bool) -> subprocess.CompletedProcess:
    """Write one float past a 4-float tensor, alone or under compute-sanitizer's memcheck.

    memcheck knows the allocations made through the CUDA APIs. torch's caching allocator hands
    out pieces of larger allocations, so a write just past a tensor lands inside one and is not
    seen; PYTORCH_NO_CUDA_MEMORY_CACHING=1 makes every tensor an allocation of its own.
    """
    prefix = [str(compute_sanitizer()), "--tool", "memcheck", "--error-exitcode", "3"] if sanitized else []
    env = child_env(PYTORCH_NO_CUDA_MEMORY_CACHING="1")
    return python_child(WRITE_ONE_PAST.format(library=str(build_demos())), prefix=prefix, env=env)
# [compute_sanitizer_run.end]


# [missing_symbol_run.begin]
CALL_TWICE = """
    import tvm_ffi
    mod = tvm_ffi.load_module({library!r})
    print("loaded; calling twice(1.0)", flush=True)
    mod.twice(1.0)
    print("never printed")
"""


def call_missing_symbol(bind_now: bool = False) -> subprocess.CompletedProcess:
    """Load libmissing_symbol.so and call it; ``bind_now`` (LD_BIND_NOW=1) binds every symbol at load."""
    library = build_demos().parent / "libmissing_symbol.so"
    env = child_env(LD_BIND_NOW="1") if bind_now else None
    return python_child(CALL_TWICE.format(library=str(library)), env=env)
# [missing_symbol_run.end]


# [two_copies_run.begin]
LOAD_SECOND_COPY = """
    import ctypes, tvm_ffi
    mapped = {{line.split()[-1] for line in open("/proc/self/maps") if line.rstrip().endswith("/libtvm_ffi.so")}}
    print("libtvm_ffi.so files mapped:", len(mapped), flush=True)
    ctypes.CDLL({bundled!r})  # as a library that brings its own copy would
    print("never printed")
"""


def bundled_copy() -> Path:
    """A second libtvm_ffi.so, as a wheel that vendors it would ship (copied next to the demos)."""
    import shutil

    import tvm_ffi

    bundled = build_demos().parent / "bundled" / "libtvm_ffi.so"
    bundled.parent.mkdir(exist_ok=True)
    shutil.copy(tvm_ffi.libinfo.find_libtvm_ffi(), bundled)
    return bundled


def load_second_copy() -> subprocess.CompletedProcess:
    return python_child(LOAD_SECOND_COPY.format(bundled=str(bundled_copy())))
# [two_copies_run.end]


def built_with_cuda() -> bool:
    """Whether the demos build found nvcc (and so holds the CUDA entries)."""
    return "CMAKE_CUDA_COMPILER:" in (build_demos().parent / "CMakeCache.txt").read_text() and \
        "fill_checked" in tool("nm", "-D", "--defined-only", str(build_demos()))


def tool(*cmd: str) -> str:
    """Run a binary tool (nm, readelf, ldd) and return its standard output."""
    return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout


def ldd_with_library_path(library: Path, folder: Path) -> str:
    """``LD_LIBRARY_PATH=<folder> ldd <library>``: the loader's choice when that folder comes first."""
    return subprocess.run(["ldd", str(library)], env=child_env(LD_LIBRARY_PATH=str(folder)),
                          capture_output=True, text=True, check=True).stdout
