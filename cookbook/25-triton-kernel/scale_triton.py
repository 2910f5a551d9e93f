"""y = factor * x for float32, written in Triton, and its ahead-of-time compile to a cubin.

    python scale_triton.py --arch 90 --out build      (what CMakeLists.txt runs)

writes ``scale_triton.cubin`` (SASS for sm_90) and ``scale_triton_launch.h``, the launch
facts that the compiled kernel fixes and the C++ launcher must follow: the kernel's name,
the threads of one block, its shared memory and the parameters Triton appends to ours.
Compiling needs Triton, not a GPU. The test and the notebook also use two helpers of this
file: gpu_code (what a cubin holds, read with cuobjdump) and seconds_per_launch (do_bench).
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import triton
import triton.language as tl

BLOCK = 1024  # elements per program, one CUDA block each


# [scale_kernel.begin]
@triton.jit
def scale_kernel(x_ptr, y_ptr, factor, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = offsets < n
    x = tl.load(x_ptr + offsets, mask=inside)
    tl.store(y_ptr + offsets, x * factor, mask=inside)
# [scale_kernel.end]


# [compile_cubin.begin]
#: The types of scale_kernel's parameters: a signature fixed ahead of time instead of the
#: one Triton reads from the first call's arguments. BLOCK is compiled in.
SIGNATURE = {"x_ptr": "*fp32", "y_ptr": "*fp32", "factor": "fp32", "n": "i32", "BLOCK": "constexpr"}


def compile_cubin(arch: int):
    """scale_kernel compiled for sm_<arch>; no GPU is asked which one it is."""
    from triton.backends.compiler import GPUTarget

    source = triton.compiler.ASTSource(fn=scale_kernel, signature=SIGNATURE, constexprs={"BLOCK": BLOCK})
    # A product alone has nothing to fuse into a multiply-add; saying so keeps Triton from
    # warning that the default of this option changes in a later release.
    return triton.compile(source, target=GPUTarget("cuda", arch, 32), options={"enable_fp_fusion": False})
# [compile_cubin.end]


def ptx_parameters(ptx: str) -> list[str]:
    """The kernel's parameter types as its PTX declares them, in order."""
    entry = re.search(r"\.entry\s+\w+\s*\((.*?)\)", ptx, re.S)
    return [" ".join(p.split()[1:-1]) for p in entry.group(1).split(",")] if entry else []


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
    import subprocess

    listing = subprocess.run([str(cuobjdump()), "--list-elf", "--list-ptx", str(binary)],
                             capture_output=True, text=True, check=True).stdout  # "ELF file 1: x.sm_90a.cubin"
    return {"sass": sorted(set(re.findall(r"^ELF file.*\.(sm_\w+)\.cubin$", listing, re.M))),
            "ptx": sorted(set(re.findall(r"^PTX file.*\.(sm_\w+)\.ptx$", listing, re.M)))}


# [launch_time.begin]
def seconds_per_launch(launch, launches: int = 100) -> float:
    """GPU time per call of ``launch()``, called ``launches`` times back to back.

    triton.testing.do_bench times each call of its function between two CUDA events. One
    small kernel alone would time the kernel; a burst keeps the GPU waiting for the next
    launch, so the time per kernel is what a launch costs its caller.
    """
    from triton.testing import do_bench

    def burst():
        for _ in range(launches):
            launch()

    return do_bench(burst, return_mode="min") / 1e3 / launches  # do_bench answers in ms
# [launch_time.end]


# [launch_header.begin]
def launch_header(kernel, arch: int) -> str:
    """The C++ constants the launcher needs, read from the compiled kernel."""
    meta = kernel.metadata
    ours = len(SIGNATURE) - 1  # BLOCK is compiled in, not passed
    appended = len(ptx_parameters(kernel.asm["ptx"])) - ours
    if getattr(meta, "global_scratch_size", 0) or getattr(meta, "profile_scratch_size", 0):
        raise SystemExit("scale_kernel now needs scratch memory: its launcher passes none")
    return f"""// Written by scale_triton.py: Triton {triton.__version__}'s compile of scale_kernel for sm_{arch}.
#pragma once

namespace scale_triton {{
constexpr const char* kKernel = "{meta.name}";
constexpr int kArch = {arch};  // the cubin holds SASS for this architecture only
constexpr int kBlock = {BLOCK};  // elements per block
constexpr unsigned kThreads = {meta.num_warps * meta.warp_size};  // num_warps * warp_size
constexpr unsigned kSharedBytes = {meta.shared};  // dynamic shared memory per block
constexpr int kAppendedPointers = {appended};  // parameters after our four: scratch, null if unused
}}  // namespace scale_triton
"""
# [launch_header.end]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--arch", type=int, default=90, help="GPU architecture: 90 for sm_90 (H100, H200)")
    parser.add_argument("--out", type=Path, required=True, help="folder for the cubin and the header")
    opts = parser.parse_args()
    kernel = compile_cubin(opts.arch)
    opts.out.mkdir(parents=True, exist_ok=True)
    (opts.out / "scale_triton.cubin").write_bytes(kernel.asm["cubin"])
    (opts.out / "scale_triton_launch.h").write_text(launch_header(kernel, opts.arch))


if __name__ == "__main__":
    main()
