"""Compile CUDA source to a cubin at run time with NVRTC, and read GPU binaries with cuobjdump.

Both tools come as wheels, so neither needs a CUDA toolkit nor a GPU:
``nvidia-cuda-nvrtc`` ships ``libnvrtc.so.13`` (called here through ctypes) and
``nvidia-cuda-cuobjdump`` ships the ``cuobjdump`` program. Both install under the
``nvidia/cu13/`` folder of site-packages.
"""

from __future__ import annotations

import ctypes
import re
import subprocess
from pathlib import Path

import tvm_ffi.cpp

HERE = Path(__file__).resolve().parent


def wheel_file(relative: str) -> Path:
    """A file of an installed NVIDIA wheel, e.g. "bin/cuobjdump", under nvidia/cu13/ of site-packages."""
    try:
        import nvidia  # a namespace package that several NVIDIA wheels share: look in each folder
    except ImportError:
        nvidia = None
    for folder in getattr(nvidia, "__path__", []):
        if (Path(folder) / "cu13" / relative).is_file():
            return Path(folder) / "cu13" / relative
    raise FileNotFoundError(f"nvidia/cu13/{relative}: install the wheel that ships it (requirements.txt)")


# [nvrtc_compile.begin]
def nvrtc_compile(source: str, arch: str, name: str = "kernel.cu") -> bytes:
    """The cubin NVRTC makes of ``source`` for ``arch`` (e.g. "sm_90"); RuntimeError with the log."""
    if not re.fullmatch(r"sm_\d{2,3}a?", arch):
        raise ValueError(f"arch: expected a real architecture such as 'sm_90', got {arch!r}")
    nvrtc = ctypes.CDLL(str(wheel_file("lib/libnvrtc.so.13")))
    program = ctypes.c_void_p()
    _check(nvrtc, nvrtc.nvrtcCreateProgram(ctypes.byref(program), source.encode(), name.encode(),
                                           0, None, None), "nvrtcCreateProgram")
    try:
        options = [f"--gpu-architecture={arch}".encode(), b"-std=c++17"]
        status = nvrtc.nvrtcCompileProgram(program, len(options), (ctypes.c_char_p * len(options))(*options))
        if status != 0:
            size = ctypes.c_size_t()
            nvrtc.nvrtcGetProgramLogSize(program, ctypes.byref(size))
            log = ctypes.create_string_buffer(size.value)
            nvrtc.nvrtcGetProgramLog(program, log)
            raise RuntimeError(f"NVRTC could not compile {name}:\n{log.value.decode()}")
        size = ctypes.c_size_t()
        _check(nvrtc, nvrtc.nvrtcGetCUBINSize(program, ctypes.byref(size)), "nvrtcGetCUBINSize")
        cubin = ctypes.create_string_buffer(size.value)
        _check(nvrtc, nvrtc.nvrtcGetCUBIN(program, cubin), "nvrtcGetCUBIN")
        return cubin.raw
    finally:
        nvrtc.nvrtcDestroyProgram(ctypes.byref(program))
# [nvrtc_compile.end]


def _check(nvrtc, status: int, call: str) -> None:
    if status != 0:
        nvrtc.nvrtcGetErrorString.restype = ctypes.c_char_p
        raise RuntimeError(f"{call}: {nvrtc.nvrtcGetErrorString(status).decode()}")


def nvrtc_version() -> str:
    nvrtc = ctypes.CDLL(str(wheel_file("lib/libnvrtc.so.13")))
    major, minor = ctypes.c_int(), ctypes.c_int()
    nvrtc.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
    return f"{major.value}.{minor.value}"


# [cuobjdump_contents.begin]
def cuobjdump(*args: str | Path) -> str:
    """Run the wheel's cuobjdump; its output."""
    command = [str(wheel_file("bin/cuobjdump")), *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout


def gpu_code(binary: str | Path) -> dict[str, list[str]]:
    """What a cubin, fatbin or host library holds for the GPU: SASS and PTX architectures, kernels."""
    listing = cuobjdump("--list-elf", "--list-ptx", binary)  # e.g. "ELF file 1: k.1.sm_90.cubin"
    usage = cuobjdump("--dump-resource-usage", binary)  # e.g. " Function scale_f32:"
    return {
        "sass": sorted(set(re.findall(r"^ELF file.*\.(sm_\w+)\.cubin$", listing, re.M))),
        "ptx": sorted(set(re.findall(r"^PTX file.*\.(sm_\w+)\.ptx$", listing, re.M))),
        "kernels": sorted(set(re.findall(r"^ Function (\w+):$", usage, re.M))),
    }
# [cuobjdump_contents.end]


def cuda_build(build_dir: Path) -> dict[str, str]:
    """What CMake's configure found and chose (cuda_build.txt in the build folder)."""
    lines = (Path(build_dir) / "cuda_build.txt").read_text().splitlines()
    return dict(line.split("=", 1) for line in lines if "=" in line)


# [embed_from_python.begin]
def build_with_cubin(cubin: bytes, build_dir: Path, name: str = "scale_from_python") -> Path:
    """scale_embedded.cc built from Python, with ``cubin`` embedded as scale_fatbin; the library.

    ``build_dir`` is a CMake build folder of this recipe: its cuda_build.txt
    says where CUDA's headers and libcudart are.
    """
    cuda = cuda_build(build_dir)
    return Path(tvm_ffi.cpp.build_inline(
        name,
        cpp_sources='#include "scale_embedded.cc"',  # the exports are in the file
        embed_cubin={"scale_fatbin": cubin},  # what TVM_FFI_EMBED_CUBIN(scale_fatbin) refers to
        extra_include_paths=[str(HERE), str(HERE / "include"), cuda["include"]],
        extra_ldflags=[f"-L{cuda['lib']}", f"-Wl,-rpath,{cuda['lib']}", "-lcudart"],
        build_directory=str(Path(build_dir).resolve() / name),
    ))
# [embed_from_python.end]
