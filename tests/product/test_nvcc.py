"""CUDA and NVSHMEM code compiles with nvcc (compile-only: no GPU is needed)."""

import shutil
import subprocess
import sys

import pytest

from ffi_cookbook.config import include_dir
from tests.needs import needs_nvcc, nvshmem_available

TVM_FFI_INCLUDE = subprocess.run([sys.executable, "-m", "tvm_ffi.config", "--includedir"],
                                 capture_output=True, text=True, check=True).stdout.strip()
CUDA_HEADERS = ["alloc_cuda.h", "stream.h", "launch.h", "dtype.h", "check.h", "env_alloc.h"]


def nvcc_compile(tmp_path, source: str, *flags: str) -> None:
    src = tmp_path / "probe.cu"
    src.write_text(source)
    cmd = ["nvcc", "-std=c++17", "-arch=sm_90", "-Xcompiler", "-fPIC", f"-I{TVM_FFI_INCLUDE}",
           f"-I{include_dir()}", *flags, "-c", str(src), "-o", str(tmp_path / "probe.o")]
    done = subprocess.run(cmd, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


@needs_nvcc
@pytest.mark.parametrize("header", CUDA_HEADERS)
def test_header_compiles_alone_with_nvcc(tmp_path, header):
    nvcc_compile(tmp_path, f"#include <ffi_cookbook/{header}>\n")


@needs_nvcc
def test_nvshmem_header_compiles(tmp_path):
    if not nvshmem_available():
        pytest.skip("nvidia-nvshmem-cu13 is not installed")
    import nvidia.nvshmem as nvshmem

    root = nvshmem.__path__[0]
    nvcc_compile(tmp_path, "#include <ffi_cookbook/alloc_nvshmem.h>\n", "-rdc=true", f"-I{root}/include")


@pytest.mark.parametrize("header", ["check.h", "dtype.h", "env_alloc.h", "alloc_cpu.h"])
def test_cpu_header_compiles_alone_with_gxx(tmp_path, header):
    src = tmp_path / "probe.cc"
    src.write_text(f"#include <ffi_cookbook/{header}>\n")
    done = subprocess.run(["g++", "-std=c++17", "-Wall", "-Wextra", "-Werror", f"-I{TVM_FFI_INCLUDE}",
                           f"-I{include_dir()}", "-c", str(src), "-o", str(tmp_path / "probe.o")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
