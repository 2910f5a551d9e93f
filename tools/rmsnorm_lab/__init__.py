"""Candidate CUDA kernels for recipe 10's RMSNorm, measured by tools/rmsnorm_sweep.py.

Each ``.cu`` file here is one idea for the 16-bit path (its header says which, and why),
built with the kernel and entry point of ``lab.cuh`` into one library, ``rmsnorm_lab.so``.
Every candidate exports ``rms_norm_lab_<name>(x, weight, y, eps)``: the signature, checks and
errors of recipe 10's ``rms_norm_cuda`` (the recipe's ``rmsnorm_check.h``). None of this is
part of the recipe: the winner, if any, replaces ``cookbook/10-rmsnorm/rmsnorm_cuda.cu`` and
the rest stays here.

    from tools.rmsnorm_lab import build, CANDIDATES
    mod = tvm_ffi.load_module(build(Path("_build/rmsnorm-lab")))
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

HERE = Path(__file__).resolve().parent
RECIPE = HERE.parents[1] / "cookbook" / "10-rmsnorm"

#: name -> what it tries (the exported function is ``rms_norm_lab_<name>``).
CANDIDATES = {
    "packed": "16-bit values converted in pairs (__half2/__nv_bfloat162), else the recipe's kernel",
    "remat": "packed, and each value converted twice, so registers hold packs, not floats",
    "rows2": "remat, two rows per group of threads loaded before either is reduced",
    "rows4": "remat, four rows per group where a row takes at most 4 packs per thread",
    "widerows": "remat, a row over 1 to 8 warps, about two packs per thread",
    "persistent": "rows2, a grid of as many blocks as fit on the device, the weight kept in registers",
    "streaming": "rows2, x loaded and y stored with evict-first hints (__ldcs/__stcs)",
}
SOURCES = sorted(HERE.glob("*.cu"))


def nvcc() -> str | None:
    """The nvcc that builds the candidates, or None where there is none."""
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    if home and (Path(home) / "bin" / "nvcc").is_file():
        return str(Path(home) / "bin" / "nvcc")
    return shutil.which("nvcc")


def cuda_home() -> str | None:
    """The toolkit's root. The ``nvcc`` on PATH may be a wrapper script that execs the real one
    (tvm_ffi then guesses a root without ``lib64``): the root is where ``lib64/libcudart.so`` is."""
    if os.environ.get("CUDA_HOME"):
        return os.environ["CUDA_HOME"]
    found = nvcc()
    candidates = [Path(found).resolve().parents[1]] if found else []
    candidates += sorted(Path("/usr/local").glob("cuda*"), reverse=True)
    return next((str(c) for c in candidates if (c / "lib64").is_dir() and (c / "bin" / "nvcc").is_file()), None)


def build(build_dir: Path, arch: str = "9.0", fewer_kernels: bool = False) -> str:
    """Compile every candidate into ``<build_dir>/rmsnorm_lab.so`` (sm_90 by default, as the
    H200 needs; ``TVM_FFI_CUDA_ARCH_LIST`` overrides) and return its path; tvm_ffi keeps the
    build and compiles again only what changed. ``fewer_kernels``: one register depth (8 packs
    per thread) for every row length, about a third of the kernels: the same entry points and
    checks, correct but not the candidates' speed, compiled as one translation unit (for the
    CPU-side test)."""
    import tvm_ffi.cpp

    home = cuda_home()
    if home is None:
        raise RuntimeError("no CUDA toolkit found (nvcc and lib64/libcudart.so): set CUDA_HOME")
    os.environ["CUDA_HOME"] = home
    os.environ.setdefault("TVM_FFI_CUDA_ARCH_LIST", arch)
    build_dir.mkdir(parents=True, exist_ok=True)
    sources = [str(s) for s in SOURCES]
    if fewer_kernels:  # one translation unit: the headers parsed once, about half the CPU time
        unity = build_dir / "all_candidates.cu"
        text = "".join(f'#include "{s}"\n' for s in sources)
        if not unity.is_file() or unity.read_text() != text:
            unity.write_text(text)
        sources = [str(unity)]
    return tvm_ffi.cpp.build("rmsnorm_lab", sources=sources,
                             extra_cuda_cflags=["-O3"] + (["-DRMSNORM_LAB_FEWER_KERNELS"] if fewer_kernels else []),
                             extra_include_paths=[str(HERE), str(RECIPE)],
                             build_directory=str(build_dir))
