"""Row-norm kernels specialised at run time: a prebuilt library first, JIT as the fallback.

A specialisation is (dtype, n, unroll, device). Its source is two generated lines
(an include and an export of one template instance); tvm_ffi.cpp compiles it
once into the cache folder named by TVM_FFI_CACHE_DIR, and later calls, in
this process or any other, load the cached library.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import tvm_ffi
import tvm_ffi.cpp

HERE = Path(__file__).resolve().parent
PREBUILT = HERE / "build" / "librow_norm.so"  # built by the README's cmake commands
DEFAULT_CACHE = HERE / "build" / "tvm-ffi-cache"
INCLUDE = HERE / "include"  # the cookbook's ffi_cookbook/*.h, as CMakeLists.txt includes them

# [row_norm_codegen.begin]
C_TYPES = {"float32": "float", "float64": "double"}
ENTRIES = {"cpu": ("row_norm_entry.h", "RowNorm"), "cuda": ("row_norm_cuda.cuh", "RowNormCUDA")}


def export_name(dtype: str, n: int, unroll: int, device: str = "cpu") -> str:
    """The name of one specialisation, e.g. row_norm_float32_n128_u4_cpu; checks every value."""
    if dtype not in C_TYPES:
        raise TypeError(f"dtype: expected one of {sorted(C_TYPES)}, got {dtype!r}")
    if device not in ENTRIES:
        raise ValueError(f"device: expected one of {sorted(ENTRIES)}, got {device!r}")
    for arg, value, top in (("n", n, 1 << 16), ("unroll", unroll, 16)):
        if type(value) is not int or not 0 < value <= top:
            raise ValueError(f"{arg}: expected an int in [1, {top}], got {value!r}")
    if n % unroll:
        raise ValueError(f"unroll: expected a divisor of n={n}, got {unroll}")
    return f"row_norm_{dtype}_n{n}_u{unroll}_{device}"


def generate_source(dtype: str, n: int, unroll: int, device: str = "cpu") -> str:
    """The whole translation unit of one specialisation: the template instance and its export."""
    name = export_name(dtype, n, unroll, device)  # only checked values reach the source
    header, entry = ENTRIES[device]
    return (f'#include "{header}"\n'
            f"TVM_FFI_DLL_EXPORT_TYPED_FUNC({name}, (row_norm::{entry}<{C_TYPES[dtype]}, {n}, {unroll}>));\n")
# [row_norm_codegen.end]


# [row_norm_cache.begin]
def use_cache_dir(path: str | Path = DEFAULT_CACHE) -> Path:
    """Point tvm_ffi's JIT cache at ``path``, readable and writable by this user only.

    Whoever can write to the cache chooses the code this process loads.
    """
    path = Path(path)
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    path.chmod(0o700)
    os.environ["TVM_FFI_CACHE_DIR"] = str(path)
    return path


def jit_library(dtype: str, n: int, unroll: int, device: str = "cpu", *,
                include_paths: list[str] | None = None, extra_cflags: list[str] | None = None) -> Path:
    """Compile one specialisation, or find it in the cache; the path of its library."""
    source = generate_source(dtype, n, unroll, device)
    if device == "cuda":
        set_cuda_environment()
    return Path(tvm_ffi.cpp.build_inline(
        export_name(dtype, n, unroll, device),
        **{"cuda_sources" if device == "cuda" else "cpp_sources": source},
        extra_include_paths=include_paths or [str(HERE), str(INCLUDE)],
        extra_cflags=extra_cflags))
# [row_norm_cache.end]


# [row_norm_loader.begin]
def row_norm_kernel(dtype: str, n: int, unroll: int, device: str = "cpu",
                    prebuilt: Path = PREBUILT) -> tuple[tvm_ffi.Function, str]:
    """The kernel for one specialisation and where it came from: "prebuilt" or "jit"."""
    name = export_name(dtype, n, unroll, device)
    if prebuilt.is_file():
        library = tvm_ffi.load_module(str(prebuilt))
        if library.implements_function(name):
            return library[name], "prebuilt"
    return tvm_ffi.load_module(str(jit_library(dtype, n, unroll, device)))[name], "jit"
# [row_norm_loader.end]


def compile_count(key_folder: Path) -> int:
    """How many times ninja compiled an object in one cache folder (from its .ninja_log)."""
    log = Path(key_folder) / ".ninja_log"
    lines = log.read_text().splitlines()[1:] if log.is_file() else []
    return sum(line.split("\t")[3].endswith(".o") for line in lines)


# [row_norm_cuda_env.begin]
def set_cuda_environment() -> None:
    """CUDA_HOME and TVM_FFI_CUDA_ARCH_LIST for nvcc builds, unless the caller set them.

    tvm_ffi guesses the toolkit from the nvcc on PATH, which may be a wrapper script
    elsewhere; nvcc itself reports the toolkit root it runs from (TOP= in --dryrun).
    Without a GPU to ask, the target architecture has to be named.
    """
    if "CUDA_HOME" not in os.environ and shutil.which("nvcc"):
        dry = subprocess.run(["nvcc", "--dryrun", "-E", "-x", "cu", os.devnull], capture_output=True, text=True)
        top = re.search(r"^#\$ TOP=(.*)$", dry.stdout + dry.stderr, re.M)
        if top:
            os.environ["CUDA_HOME"] = str(Path(top.group(1)).resolve())
    if "TVM_FFI_CUDA_ARCH_LIST" not in os.environ:
        import torch

        major, minor = torch.cuda.get_device_capability() if torch.cuda.is_available() else (9, 0)
        os.environ["TVM_FFI_CUDA_ARCH_LIST"] = f"{major}.{minor}"
# [row_norm_cuda_env.end]


# [row_norm_race.begin]
def race(processes: int, flags: Path) -> list[str]:
    """Start processes that all ask for the same kernel at once; each one's output line."""
    flags.mkdir(parents=True, exist_ok=True)
    code = "import sys, row_norm_jit; row_norm_jit.race_worker(sys.argv[1], int(sys.argv[2]))"
    procs = [subprocess.Popen([sys.executable, "-c", code, str(flags), str(i)], cwd=HERE, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for i in range(processes)]
    while len(list(flags.glob("ready-*"))) < processes:  # all started, none asked yet
        if any(p.poll() is not None for p in procs):
            break
        time.sleep(0.05)
    (flags / "go").touch()  # release them together
    outputs = [p.communicate(timeout=600) for p in procs]
    for p, (_, err) in zip(procs, outputs):
        if p.returncode != 0:
            raise RuntimeError(f"a racing process failed:\n{err}")
    return [out.strip() for out, _ in outputs]


def race_worker(flags: str, index: int) -> None:
    """One racing process: wait for "go", get the kernel (prebuilt or JIT), run it, print."""
    import numpy as np

    (Path(flags) / f"ready-{index}").touch()
    while not (Path(flags) / "go").exists():
        time.sleep(0.01)
    kernel, path = row_norm_kernel("float32", 96, 2)
    x = np.arange(3 * 96, dtype=np.float32).reshape(3, 96) / 96
    out = np.empty(3, np.float32)
    kernel(x, out)
    print(path, *out.tolist())
# [row_norm_race.end]
