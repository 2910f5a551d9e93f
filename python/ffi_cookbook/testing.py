"""Shared test helpers: where a recipe was built, skip markers and per-dtype tolerances.

Recipe tests and notebooks import these. Apart from :mod:`ffi_cookbook.build`
this file needs nothing of the cookbook package: a downloaded recipe carries a
copy of it as ``cookbook_testing.py``.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from pathlib import Path

from ffi_cookbook.build import build_dir_for


def build_dir(test_file: str | Path) -> Path:
    """The build folder of the recipe a test file belongs to: ``build_dir(__file__)``."""
    return build_dir_for(Path(test_file).resolve().parent)


def cuda_available() -> bool:
    """True when torch sees a CUDA GPU."""
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def nvshmem_available() -> bool:
    """True when the NVSHMEM wheel (nvidia-nvshmem-cu13) is importable."""
    try:
        import nvidia.nvshmem  # noqa: F401
    except ImportError:
        return False
    return True


def nvidia_wheel_file(relative: str) -> Path:
    """A file under ``nvidia/cu13/`` of an installed NVIDIA wheel, e.g. ``"bin/cuobjdump"``.

    ``nvidia-cuda-cuobjdump`` ships ``cuobjdump``, ``nvidia-cuda-nvrtc`` ships
    ``lib/libnvrtc.so.13``; ``nvidia`` is a namespace package that several wheels share.
    FileNotFoundError names the file when no installed wheel has it.
    """
    try:
        import nvidia
    except ImportError:
        nvidia = None
    for folder in getattr(nvidia, "__path__", []):
        path = Path(folder) / "cu13" / relative
        if path.is_file():
            return path
    raise FileNotFoundError(f"nvidia/cu13/{relative}: install the NVIDIA wheel that ships it "
                            "(see requirements.txt)")


def calls_for(fn, min_round: float) -> int:
    """How many back-to-back calls of ``fn`` take at least ``min_round`` seconds."""
    calls = 1
    while True:
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        if time.perf_counter() - start >= min_round:
            return calls
        calls *= 2


def best_seconds(fns, min_round: float = 0.01, rounds: int = 15, threads: int | None = 1) -> list[float]:
    """Best mean time per call of each function, over ``rounds`` rounds.

    The functions take turns inside every round, so a burst of load on a shared machine
    hits all of them alike; each round of a function is long enough (``min_round``) to be
    timed reliably. torch runs on ``threads`` threads meanwhile (None: as it is set).
    """
    import torch

    before = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(threads)
    try:
        counts = [calls_for(fn, min_round) for fn in fns]
        best = [float("inf")] * len(fns)
        for _ in range(rounds):
            for i, (fn, calls) in enumerate(zip(fns, counts)):
                start = time.perf_counter()
                for _ in range(calls):
                    fn()
                best[i] = min(best[i], (time.perf_counter() - start) / calls)
    finally:
        torch.set_num_threads(before)
    return best


def best_gpu_seconds(fns, min_round: float = 2e-3, rounds: int = 5) -> list[float]:
    """Best mean GPU time per call of each function, over ``rounds`` rounds, timed with CUDA events.

    As in :func:`best_seconds`, the functions take turns inside every round; each round of a
    function is back-to-back calls on the current stream taking at least ``min_round`` seconds.
    """
    import torch

    def seconds(fn, calls: int) -> float:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(calls):
            fn()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / 1e3

    counts = []
    for fn in fns:
        calls = 1
        while seconds(fn, calls) < min_round and calls < 1 << 16:
            calls *= 2
        counts.append(calls)
    best = [float("inf")] * len(fns)
    for _ in range(rounds):
        for i, (fn, calls) in enumerate(zip(fns, counts)):
            best[i] = min(best[i], seconds(fn, calls) / calls)
    return best


def gcc_runtime(name: str) -> str:
    """The path of a GCC runtime library, e.g. ``libasan.so``, as the ``gcc`` on PATH has it."""
    return subprocess.run(["gcc", f"-print-file-name={name}"], capture_output=True, text=True,
                          check=True).stdout.strip()


def gpu_architectures(binary: str | Path) -> dict[str, list[str]]:
    """The GPU code a library, fatbin or cubin holds, read with the wheel's ``cuobjdump``.

    ``{"sass": ["sm_80", ...], "ptx": ["sm_100"]}``: the architectures of its SASS
    (``--list-elf``) and of its PTX (``--list-ptx``).
    """
    command = [str(nvidia_wheel_file("bin/cuobjdump")), "--list-elf", "--list-ptx", str(binary)]
    listing = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    found = {kind: set(re.findall(rf"^{label} file.*\.(sm_\w+)\.{suffix}$", listing, re.M))
             for kind, label, suffix in (("sass", "ELF", "cubin"), ("ptx", "PTX", "ptx"))}
    # In the order of the architectures' numbers: sm_100 after sm_90.
    return {kind: sorted(archs, key=lambda a: int(re.sub(r"\D", "", a))) for kind, archs in found.items()}


#: The skip marks of the tests (``from cookbook_testing import needs_cuda``): what each needs and
#: why it skips without it. They are made when a test first imports one, so that a notebook or a
#: program importing this module does not import pytest, which only a test run has.
SKIP_MARKS = {
    "needs_cuda": (lambda: not cuda_available(), "needs a CUDA GPU (none visible to torch)"),
    "needs_nvcc": (lambda: shutil.which("nvcc") is None, "needs nvcc on PATH"),
    "needs_nvshmem": (lambda: not (cuda_available() and nvshmem_available()),
                      "needs a CUDA GPU and the nvidia-nvshmem-cu13 package"),
}


def __getattr__(name: str):
    if name not in SKIP_MARKS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import pytest

    skip, reason = SKIP_MARKS[name]
    mark = globals()[name] = pytest.mark.skipif(skip(), reason=reason)
    return mark


#: (rtol, atol) per torch dtype name: one rounding step of the output dtype.
TOLERANCE = {
    "float32": (1.3e-6, 1e-5),
    "float16": (1e-3, 1e-3),
    "bfloat16": (8e-3, 8e-3),
}


def float32_elementwise_bad_inputs(out_name: str = "out") -> list:
    """`(x, out, error, message)` cases a float32 elementwise kernel ``f(x, ..., out)`` must reject.

    The messages are those of ``CheckDtype(x, float32)`` followed by
    ``CheckElementwise(x, "x", out, out_name, kDLCPU)`` (include/ffi_cookbook/check.h).
    """
    import numpy as np

    f32 = np.float32
    return [
        (np.zeros(3, np.float64), np.zeros(3, np.float64), TypeError, "argument 'x': expected dtype float32, got float64"),
        (np.zeros(3, f32), np.zeros(3, np.int32), TypeError, f"argument '{out_name}': expected dtype float32 (the dtype of 'x'), got int32"),
        (np.zeros(3, f32), np.zeros(4, f32), ValueError, f"argument '{out_name}': expected shape [3] (the shape of 'x'), got [4]"),
        (np.zeros((3, 4), f32).T, np.zeros((4, 3), f32), ValueError, "argument 'x': expected a contiguous tensor"),
        (np.zeros((3, 4), f32), np.zeros((4, 3), f32).T, ValueError, f"argument '{out_name}': expected a contiguous tensor"),
    ]


def machine_summary() -> str:
    """Where a measurement ran: CPU model and cores, the versions that matter, the compiler, the date.

    Pages that print timings print this first, so that every number on the site comes with the
    machine and software it was measured on. Only the standard library is needed; a package that
    is not installed is reported as such.
    """
    import datetime
    import os
    import platform
    from importlib import metadata

    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            model = next(line.split(":", 1)[1].strip() for line in cpuinfo if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()

    def version(package: str) -> str:
        try:
            return metadata.version(package)
        except metadata.PackageNotFoundError:
            return "not installed"

    compiler = "no C++ compiler on PATH"
    cxx = shutil.which(os.environ.get("CXX", "c++")) or shutil.which("g++")
    if cxx:
        banner = subprocess.run([cxx, "--version"], capture_output=True, text=True).stdout
        compiler = banner.splitlines()[0] if banner else cxx
    lines = [f"CPU: {model}, {usable} usable core(s) of {os.cpu_count()}"]
    if cuda_available():
        import torch

        lines.append(f"GPU: {torch.cuda.get_device_name()}, CUDA {torch.version.cuda}")
    return "\n".join(lines + [
        f"Python {platform.python_version()}; apache-tvm-ffi {version('apache-tvm-ffi')}, "
        f"torch {version('torch')}, numpy {version('numpy')}",
        f"compiler: {compiler}",
        f"date: {datetime.date.today().isoformat()}",
    ])
