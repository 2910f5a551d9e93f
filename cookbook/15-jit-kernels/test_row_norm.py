"""row_norm JIT: generated specialisations are right, keyed and cached, compiled once
across processes, and a prebuilt library is preferred over compiling."""

import importlib.util
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
import tvm_ffi

HERE = Path(__file__).resolve().parent
needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU (none visible to torch)")
needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc on PATH")


def _load(module_file):
    spec = importlib.util.spec_from_file_location(Path(module_file).stem, HERE / module_file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


jit = _load("row_norm_jit.py")


def reference(x):
    return np.sqrt((x.astype(np.float64) ** 2).sum(axis=1)).astype(x.dtype)


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    """An empty JIT cache: everything asked for is compiled."""
    monkeypatch.setenv("TVM_FFI_CACHE_DIR", "")
    return jit.use_cache_dir(tmp_path / "cache")


def test_cache_dir_is_the_users_alone(fresh_cache, tmp_path):
    """Whoever can write to the JIT cache picks the code we load: owner-only, even if it existed."""
    assert fresh_cache.stat().st_mode & 0o777 == 0o700
    existing = tmp_path / "existing"
    existing.mkdir(mode=0o777)
    existing.chmod(0o777)
    assert jit.use_cache_dir(existing).stat().st_mode & 0o777 == 0o700
    assert os.environ["TVM_FFI_CACHE_DIR"] == str(existing)


@pytest.fixture
def shared_cache(monkeypatch):
    """The recipe's cache in its build folder, kept between runs (and shared with the notebook)."""
    monkeypatch.setenv("TVM_FFI_CACHE_DIR", "")
    return jit.use_cache_dir()


def test_generated_source_is_one_instance_and_its_export():
    assert jit.generate_source("float64", 96, 2) == (
        '#include "row_norm_entry.h"\n'
        "TVM_FFI_DLL_EXPORT_TYPED_FUNC(row_norm_float64_n96_u2_cpu, (row_norm::RowNorm<double, 96, 2>));\n")
    assert "RowNormCUDA<float, 64, 4>" in jit.generate_source("float32", 64, 4, "cuda")


@pytest.mark.parametrize("args, error, message", [
    (("int8", 128, 4), TypeError, "dtype: expected one of ['float32', 'float64'], got 'int8'"),
    (("float32", 0, 1), ValueError, "n: expected an int in [1, 65536], got 0"),
    (("float32", True, 1), ValueError, "n: expected an int in [1, 65536], got True"),
    (("float32", "8); system(\"x\"", 1), ValueError, "n: expected an int"),
    (("float32", 128, 3), ValueError, "unroll: expected a divisor of n=128, got 3"),
    (("float32", 128, 32), ValueError, "unroll: expected an int in [1, 16], got 32"),
    (("float32", 128, 4, "rocm"), ValueError, "device: expected one of ['cpu', 'cuda'], got 'rocm'"),
])
def test_codegen_accepts_only_checked_values(args, error, message):
    with pytest.raises(error) as info:
        jit.generate_source(*args)
    assert message in str(info.value)


def test_prebuilt_library_is_used_first(fresh_cache):
    kernel, path = jit.row_norm_kernel("float32", 128, 4)
    assert path == "prebuilt" and list(fresh_cache.iterdir()) == []  # nothing compiled
    x = np.random.default_rng(0).standard_normal((5, 128)).astype(np.float32)
    out = np.empty(5, np.float32)
    kernel(x, out)
    np.testing.assert_allclose(out, reference(x), rtol=1e-6)


def test_jit_is_the_fallback(fresh_cache):
    _, path = jit.row_norm_kernel("float32", 128, 4, prebuilt=Path("/nonexistent/librow_norm.so"))
    assert path == "jit" and len(list(fresh_cache.iterdir())) == 1


@pytest.mark.parametrize("dtype, n, unroll", [("float64", 96, 2), ("float32", 40, 8), ("float32", 1, 1)])
def test_jit_kernel_matches_numpy(shared_cache, dtype, n, unroll):
    kernel, path = jit.row_norm_kernel(dtype, n, unroll)
    assert path == "jit"
    for rows in (0, 1, 7):
        x = np.random.default_rng(rows).standard_normal((rows, n)).astype(dtype)
        out = np.full(rows, np.nan, dtype)
        kernel(x, out)
        np.testing.assert_allclose(out, reference(x), rtol=1e-6 if dtype == "float32" else 1e-12)


@pytest.mark.parametrize("x, out, error, message", [
    (np.zeros((2, 127), np.float32), np.zeros(2, np.float32), ValueError, "specialised for rows of 128 elements, got 127"),
    (np.zeros((2, 128), np.float64), np.zeros(2, np.float64), TypeError, "argument 'x': expected dtype float32, got float64"),
    (np.zeros(128, np.float32), np.zeros(1, np.float32), ValueError, "argument 'x': expected a 2-d tensor"),
    (np.zeros((2, 128), np.float32), np.zeros(3, np.float32), ValueError, "argument 'out': expected 2 elements"),
    (np.zeros((2, 128), np.float32), np.zeros(2, np.float64), TypeError, "argument 'out': expected dtype float32"),
    (np.zeros((2, 128), np.float32), np.zeros((2, 1), np.float32), ValueError, "argument 'out': expected a 1-d tensor"),
    (np.zeros((2, 256), np.float32)[:, ::2], np.zeros(2, np.float32), ValueError, "argument 'x': expected a contiguous tensor"),
])
def test_kernel_rejects_bad_input(x, out, error, message):
    kernel, _ = jit.row_norm_kernel("float32", 128, 4)
    with pytest.raises(error) as info:
        kernel(x, out)
    assert message in str(info.value)


def test_what_changes_the_cache_key(fresh_cache):
    first = jit.jit_library("float32", 64, 4)
    assert first.parent.parent == fresh_cache and first.parent.name.startswith("row_norm_float32_n64_u4_cpu_")
    assert jit.jit_library("float32", 64, 4) == first and jit.compile_count(first.parent) == 1  # cached
    assert jit.jit_library("float32", 64, 8).parent != first.parent  # other source text
    assert jit.jit_library("float32", 64, 4, extra_cflags=["-O3"]).parent != first.parent  # other flags


def test_what_rebuilds_under_the_same_key(fresh_cache, tmp_path, monkeypatch):
    headers = tmp_path / "headers"
    headers.mkdir()
    for name in ("row_norm_entry.h", "row_norm_loop.h"):
        shutil.copy(HERE / name, headers)
    paths = [str(headers), str(jit.INCLUDE)]
    library = jit.jit_library("float32", 64, 2, include_paths=paths)
    assert jit.compile_count(library.parent) == 1
    (headers / "row_norm_loop.h").touch()  # a header is not part of the key; ninja sees it
    assert jit.jit_library("float32", 64, 2, include_paths=paths) == library
    assert jit.compile_count(library.parent) == 2
    monkeypatch.setenv("CXX", "g++")  # neither is the compiler; ninja sees a new command
    assert jit.jit_library("float32", 64, 2, include_paths=paths) == library
    assert jit.compile_count(library.parent) == 3


def test_four_processes_compile_once(fresh_cache, tmp_path):
    lines = jit.race(4, tmp_path / "flags")
    x = np.arange(3 * 96, dtype=np.float32).reshape(3, 96) / 96
    assert len(lines) == 4 and len(set(lines)) == 1
    path, *values = lines[0].split()
    assert path == "jit"
    np.testing.assert_allclose(np.array(values, np.float32), reference(x), rtol=1e-6)
    (folder,) = fresh_cache.iterdir()
    assert jit.compile_count(folder) == 1


@needs_nvcc
def test_cuda_source_compiles_through_jit(shared_cache):
    library = jit.jit_library("float32", 64, 2, "cuda")
    mod = tvm_ffi.load_module(str(library))
    assert mod.implements_function("row_norm_float32_n64_u2_cuda")
    with pytest.raises(ValueError, match="argument 'x': expected a tensor on cuda, got one on cpu:0"):
        mod.row_norm_float32_n64_u2_cuda(np.zeros((1, 64), np.float32), np.zeros(1, np.float32))


@needs_cuda
@pytest.mark.parametrize("dtype, n, unroll", [("float32", 128, 4), ("float32", 64, 2), ("float64", 96, 2)])
def test_cuda_kernels_match_torch(shared_cache, dtype, n, unroll):
    kernel, _ = jit.row_norm_kernel(dtype, n, unroll, "cuda")
    x = torch.randn(33, n, dtype=getattr(torch, dtype), device="cuda")
    out = torch.empty(33, dtype=x.dtype, device="cuda")
    kernel(x, out)
    torch.testing.assert_close(out, x.norm(dim=1))


def test_torch_extension_computes_the_same():
    ext = _load("row_norm_torch.py").torch_extension(HERE / "build" / "torch-extension")
    x = torch.randn(6, 128, generator=torch.Generator().manual_seed(0))
    out = torch.empty(6)
    jit.row_norm_kernel("float32", 128, 4)[0](x, out)
    torch.testing.assert_close(ext.row_norm_torch(x), out, rtol=0, atol=0)
