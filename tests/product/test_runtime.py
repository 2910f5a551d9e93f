"""The recipe library builds, loads, and reports its variants truthfully."""

import shutil
import sys
import subprocess

import numpy as np
import pytest

import ffi_cookbook
from tests.needs import needs_nvcc, nvshmem_available


def test_library_loads_once():
    mod = ffi_cookbook.load()
    assert ffi_cookbook.load() is mod
    assert ffi_cookbook.library_path().name == "libffi_cookbook.so"


def cuda_turned_off() -> bool:
    """Whether the library's build was configured with FFI_COOKBOOK_CUDA=OFF (`make runtime`
    does where no GPU is visible: each recipe's own build compiles the CUDA sources there)."""
    cache = ffi_cookbook.library_path().parent / "CMakeCache.txt"
    return cache.is_file() and "FFI_COOKBOOK_CUDA:STRING=OFF" in cache.read_text()


def test_variants_match_toolchain():
    variants = ffi_cookbook.variants()
    assert variants[0] == "cpu"
    assert ("cuda" in variants) == (shutil.which("nvcc") is not None and not cuda_turned_off())


@needs_nvcc
def test_runtime_contains_cuda_variant():
    if cuda_turned_off():
        pytest.skip("the recipe library was built CPU-only (make does where no GPU is visible)")
    assert "cuda" in ffi_cookbook.variants()
    assert "nvshmem" in ffi_cookbook.variants() or not nvshmem_available()


def test_recipe_kernels_are_in_the_library():
    mod = ffi_cookbook.load()
    x = np.arange(4, dtype=np.float32)
    y = np.empty_like(x)
    mod.add_one_cpu(x, y)
    np.testing.assert_array_equal(y, x + 1)
    if "cuda" in ffi_cookbook.variants():
        assert hasattr(mod, "add_one_cuda")


def test_missing_library_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setattr(ffi_cookbook, "_PACKAGE_DIR", tmp_path / "pkg" / "python" / "ffi_cookbook")
    monkeypatch.delenv("FFI_COOKBOOK_LIBRARY", raising=False)
    with pytest.raises(FileNotFoundError, match="the ffi_cookbook library is not built"):
        ffi_cookbook.library_path()


def test_config_cli_prints_paths(root):
    out = subprocess.run([sys.executable, "-m", "ffi_cookbook.config", "--includedir", "--cmakedir"],
                         capture_output=True, text=True, check=True, cwd=root).stdout.split()
    assert out == [str(root / "include"), str(root / "python" / "ffi_cookbook" / "cmake")]
