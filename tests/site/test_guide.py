"""Behaviour claimed by the kernel library guide, checked without its notebooks.

The guide is three pages (docs/guides/kernel-library.md, kernel-library-tensors.md,
kernel-library-memory.md). This file builds docs/guides/code (the CMake project
each of those pages builds) into code/build, where the pages build it, and asserts
return types, error types and messages, stream read-back, DLPack ownership and
the module-lifetime hazard against the pinned apache-tvm-ffi.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import tvm_ffi

from tools.cmake_build import cmake_build
from tests.needs import needs_cuda

CODE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "code"
KDLCUDA = int(tvm_ffi.DLDeviceType.kDLCUDA)


@pytest.fixture(scope="module")
def build_dir() -> Path:
    return cmake_build(CODE, verbose=False)


@pytest.fixture(scope="module")
def mod(build_dir):
    return tvm_ffi.load_module(str(build_dir / "libguide_kernels.so"))


def f32(*shape):
    return np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)


# --- the library depends on no Python and no framework ------------------------

def test_needed_libraries_exclude_python_and_torch(build_dir):
    out = subprocess.run(["readelf", "-d", str(build_dir / "libguide_kernels.so")],
                         capture_output=True, text=True, check=True).stdout
    needed = [line for line in out.splitlines() if "(NEEDED)" in line]
    assert any("libtvm_ffi.so" in line for line in needed)
    assert not any("python" in line or "torch" in line for line in needed)


def test_exported_symbols_have_the_tvm_ffi_prefix(build_dir):
    out = subprocess.run(["nm", "-D", "--defined-only", str(build_dir / "libguide_kernels.so")],
                         capture_output=True, text=True, check=True).stdout
    assert "__tvm_ffi_guide_scale_into" in out and "__tvm_ffi_guide_tensor_info" in out


# --- loading and calling -------------------------------------------------------

def test_load_module_needs_a_path_with_a_slash(build_dir):
    here = os.getcwd()
    os.chdir(build_dir)
    try:
        # A fresh process: an already-loaded library would be found by name.
        code = "import tvm_ffi; tvm_ffi.load_module('libguide_kernels.so')"
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        assert done.returncode != 0
        assert "RuntimeError" in done.stderr and "cannot open shared object file" in done.stderr
        code = "import tvm_ffi; tvm_ffi.load_module('./libguide_kernels.so')"
        subprocess.run([sys.executable, "-c", code], check=True)
    finally:
        os.chdir(here)


def test_missing_function_and_wrong_arguments(mod):
    with pytest.raises(AttributeError, match="Module has no function 'guide_no_such_function'"):
        mod.guide_no_such_function
    with pytest.raises(TypeError, match="Expected 3 but got 2 arguments"):
        mod.guide_scale_into(np.zeros(3, np.float32), 2.0)


@pytest.mark.parametrize("make", [np.asarray, torch.from_numpy, tvm_ffi.from_dlpack])
def test_scale_into_from_each_caller(mod, make):
    x = f32(2, 3)
    out = np.empty_like(x)
    assert mod.guide_scale_into(make(x), make(out), 2.0) is None
    np.testing.assert_array_equal(out, 2 * x)


def test_bad_input_names_the_argument(mod):
    with pytest.raises(TypeError, match="argument 'x': expected dtype float32"):
        mod.guide_scale_into(np.zeros(3, np.int32), np.zeros(3, np.float32), 1.0)
    with pytest.raises(ValueError, match="argument 'out': expected the shape of 'x'"):
        mod.guide_scale_into(np.zeros(3, np.float32), np.zeros(4, np.float32), 1.0)


# --- Tensor and TensorView -----------------------------------------------------

def test_views_demo_output(build_dir):
    out = subprocess.run([str(build_dir / "views_demo")], capture_output=True, text=True,
                         check=True).stdout
    assert "one Tensor:             use_count 1" in out
    assert "after copying it:       use_count 2" in out
    assert "after viewing it:       use_count 2, same data: true" in out
    assert "TensorView parameter, DLTensor* argument: numel 12" in out
    assert ("Tensor parameter, DLTensor* argument: TypeError: Mismatched type on argument #0"
            in out)
    assert "Expected `ffi.Tensor` but got `DLTensor*`" in out


def test_tensor_parameter_accepts_numpy(mod):
    x = f32(2, 3)
    out = np.empty_like(x)
    mod.guide_copy_owned(x, out)
    np.testing.assert_array_equal(out, x)


def test_jax_passes_views(mod):
    jax = pytest.importorskip("jax")
    jax_tvm_ffi = pytest.importorskip("jax_tvm_ffi")
    jnp = jax.numpy
    jax_tvm_ffi.register_ffi_target("test_guide_add_bias", mod.guide_add_bias, platform="cpu")
    jax_tvm_ffi.register_ffi_target("test_guide_copy_owned", mod.guide_copy_owned, platform="cpu")
    x = jnp.arange(6, dtype=jnp.float32).reshape(2, 3)
    spec = jax.ShapeDtypeStruct(x.shape, x.dtype)
    y = jax.jit(lambda a, b: jax.ffi.ffi_call("test_guide_add_bias", spec)(a, b))(x, jnp.ones_like(x))
    np.testing.assert_array_equal(np.asarray(y), np.asarray(x) + 1)
    with pytest.raises(Exception, match="Expected `ffi.Tensor` but got `DLTensor\\*`"):
        jax.ffi.ffi_call("test_guide_copy_owned", spec)(x).block_until_ready()


# --- metadata ------------------------------------------------------------------

def test_tensor_info_contiguous_numpy(mod):
    a = f32(3, 4)
    info = dict(mod.guide_tensor_info(a))
    assert info["ndim"] == 2 and info["shape"] == (3, 4) and info["strides"] == (4, 1)
    assert info["size(-1)"] == 4 and info["stride(0)"] == 4
    assert info["numel"] == 12 and info["nbytes"] == 48
    assert (info["dtype.code"], info["dtype.bits"], info["dtype.lanes"]) == (2, 32, 1)
    assert info["dtype"] == "float32"
    assert (info["device.device_type"], info["device.device_id"]) == (1, 0)
    assert info["data_ptr"] == a.ctypes.data and info["byte_offset"] == 0
    assert info["IsContiguous"] is True


def test_tensor_info_transposed_torch(mod):
    t = torch.arange(12, dtype=torch.float16).reshape(3, 4).t()
    info = dict(mod.guide_tensor_info(t))
    assert info["shape"] == (4, 3) and info["strides"] == (1, 4)
    assert info["dtype"] == "float16" and info["dtype.bits"] == 16
    assert info["data_ptr"] == t.data_ptr() and info["IsContiguous"] is False


def test_size_out_of_range_is_index_error(mod):
    with pytest.raises(IndexError, match="out of bounds"):
        mod.guide_tensor_info(np.array(1.0, dtype=np.float32))


# --- passing in and out --------------------------------------------------------

def test_return_types_by_caller(mod):
    x = f32(2, 3)
    for arg in (x, tvm_ffi.from_dlpack(x)):
        assert type(mod.guide_identity(arg)) is tvm_ffi.core.Tensor
        r = mod.guide_scaled_nd(arg, 2.0)
        assert type(r) is tvm_ffi.core.Tensor
        np.testing.assert_array_equal(np.from_dlpack(r), 2 * x)
        with pytest.raises(ValueError, match="no framework allocator is installed"):
            mod.guide_scaled(arg, 2.0)
    xt = torch.from_numpy(x)
    for fn in (lambda a: mod.guide_identity(a), lambda a: mod.guide_scaled_nd(a, 2.0),
               lambda a: mod.guide_scaled(a, 2.0)):
        assert isinstance(fn(xt), torch.Tensor)
    assert mod.guide_identity(xt).data_ptr() == xt.data_ptr()
    torch.testing.assert_close(mod.guide_scaled(xt, 2.0), 2 * xt)


def test_optional_argument(mod):
    x, out = f32(2, 3), np.empty((2, 3), np.float32)
    mod.guide_add_bias(x, np.full_like(x, 10.0), out)
    np.testing.assert_array_equal(out, x + 10)
    mod.guide_add_bias(x, None, out)
    np.testing.assert_array_equal(out, x)
    with pytest.raises(ValueError, match="argument 'bias'"):
        mod.guide_add_bias(x, np.zeros(4, np.float32), out)


# --- allocation ----------------------------------------------------------------

def test_from_env_alloc_needs_a_framework_tensor(mod):
    e = mod.guide_empty_env(torch.zeros(2, 3))
    assert isinstance(e, torch.Tensor) and tuple(e.shape) == (2, 3)
    with pytest.raises(RuntimeError, match="TVMFFIEnvTensorAlloc: allocator is nullptr"):
        mod.guide_empty_env(np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match="pass at least one torch tensor"):
        mod.guide_empty_like(np.zeros((2, 3), np.float32))


# --- the anatomy: tvm_ffi alone, then the cookbook's helpers ---------------------

@pytest.mark.parametrize("name", ["guide_twice", "guide_twice_with_helpers"])
def test_anatomy_entries_compute_and_name_the_argument(mod, name):
    fn = getattr(mod, name)
    x = f32(2, 3)
    y = np.empty_like(x)
    fn(x, y)
    np.testing.assert_array_equal(y, 2 * x)
    with pytest.raises(ValueError, match="argument 'y'.*shape"):
        fn(x, np.empty((3, 2), np.float32))
    with pytest.raises(TypeError, match="argument 'y'.*dtype"):
        fn(x, np.empty((2, 3), np.float64))
    with pytest.raises(ValueError, match="argument 'x'.*contiguous"):
        fn(f32(3, 2).T, np.empty((2, 3), np.float32))
    with pytest.raises(TypeError, match="argument 'x'"):
        fn(np.zeros(3, np.int32), np.zeros(3, np.int32))


@pytest.mark.parametrize("name, args", [("guide_twice", 2), ("guide_scale_into", 2), ("guide_scaled", 1),
                                        ("guide_add_bias", 3)])
def test_plain_entries_refuse_misaligned_data(mod, name, args):
    """Floats that start one byte into a buffer: the plain tvm_ffi entries check the alignment
    (the sanitizer run's fuzz found loads of misaligned floats before they did)."""
    misaligned = np.frombuffer(np.zeros(17, np.uint8).data, np.float32, count=4, offset=1)
    assert misaligned.ctypes.data % 4 != 0
    ok = np.zeros(4, np.float32)
    extra = (2.0,) if name.startswith("guide_sc") else ()
    for at in range(args):
        call = [ok] * args
        call[at] = misaligned
        with pytest.raises(ValueError, match=r"argument '\w+': expected data aligned to (4 bytes|its 4-byte elements)"):
            getattr(mod, name)(*call, *extra)


def test_plain_anatomy_dispatches_float64(mod):
    x = np.arange(5.0)
    y = np.empty_like(x)
    mod.guide_twice(x, y)
    np.testing.assert_array_equal(y, 2 * x)


@needs_cuda
def test_plain_cuda_entry_runs_on_the_callers_stream(mod):
    x = torch.arange(1 << 16, dtype=torch.float32, device="cuda")
    y = torch.empty_like(x)
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        mod.guide_twice_cuda(x, y)
    s.synchronize()
    torch.testing.assert_close(y, 2 * x)
    with pytest.raises(ValueError, match="argument 'x'"):
        mod.guide_twice_cuda(x.cpu(), y)
    with pytest.raises(TypeError, match="argument 'x'"):
        mod.guide_twice_cuda(x.double(), y.double())


def test_from_nd_alloc_cpu(mod):
    np.testing.assert_array_equal(np.from_dlpack(mod.guide_arange_nd(5)),
                                  np.arange(5, dtype=np.float32))
    with pytest.raises(ValueError, match="argument 'n'"):
        mod.guide_arange_nd(-1)


CHILD = """
import gc, sys, tvm_ffi
mod = tvm_ffi.load_module(sys.argv[1], keep_module_alive=sys.argv[2] == "True")
t = mod.guide_arange_nd(4)
del mod
gc.collect()
del t
gc.collect()
print("tensor freed")
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the demo relies on ELF loading")
def test_unloading_the_library_before_its_tensor_crashes(build_dir):
    def run(keep):
        return subprocess.run([sys.executable, "-c", CHILD,
                               str(build_dir / "libguide_unloadable.so"), str(keep)],
                              capture_output=True, text=True)
    symbols = subprocess.run(["readelf", "-sW", str(build_dir / "libguide_unloadable.so")],
                             capture_output=True, text=True, check=True).stdout
    assert " UNIQUE " not in symbols  # -fno-gnu-unique: dlclose really unloads it
    kept = run(True)
    assert kept.returncode == 0 and "tensor freed" in kept.stdout
    dropped = run(False)
    assert dropped.returncode != 0 and "tensor freed" not in dropped.stdout


def test_dlpack_demo_output(build_dir):
    out = subprocess.run([str(build_dir / "dlpack_demo")], capture_output=True, text=True,
                         check=True).stdout
    lines = [line.strip() for line in out.splitlines()]
    i = lines.index("leaving the Tensor's scope")
    assert lines[i + 1] == "producer's deleter called"  # the import released the producer
    assert "shape [6], zero-copy: true" in lines
    assert "imported back, same data: true, use_count 2" in lines
    assert "import released, use_count 1" in lines
    assert "exported, use_count 2" in lines and "consumer done, use_count 1" in lines
    assert "RuntimeError: FromDLPack: Tensor is not contiguous." in lines


# --- streams -------------------------------------------------------------------

def test_use_raw_stream_is_read_back_by_a_cpu_kernel(mod):
    cuda0 = tvm_ffi.device("cuda:0")
    assert mod.guide_current_stream(KDLCUDA, 0) == 0
    with tvm_ffi.use_raw_stream(cuda0, 0x1234):
        assert mod.guide_current_stream(KDLCUDA, 0) == 0x1234
        assert tvm_ffi.get_raw_stream(cuda0) == 0x1234
    assert mod.guide_current_stream(KDLCUDA, 0) == 0


def test_set_stream_from_cpp_and_restore(mod):
    inside, restored = mod.guide_set_stream_and_restore(KDLCUDA, 0, 0xABC)
    assert (inside, restored) == (0xABC, 0)


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the CPU-only torch behaviour")
def test_use_torch_stream_asserts_on_cpu_only_torch():
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        with tvm_ffi.use_torch_stream():
            pass


@needs_cuda
def test_torch_stream_is_published_for_cuda_arguments(mod):
    dev = torch.device("cuda:0")
    y = torch.empty(1 << 20, device=dev)
    s = torch.cuda.Stream(dev)
    with torch.cuda.stream(s):
        assert mod.guide_stream_of(y) == s.cuda_stream
        mod.guide_fill_cuda(y, 2.0)
    s.synchronize()
    torch.testing.assert_close(y, torch.full_like(y, 2.0))
    with tvm_ffi.use_torch_stream(torch.cuda.stream(s)):
        assert mod.guide_current_stream(KDLCUDA, 0) == s.cuda_stream


@needs_cuda
def test_cuda_allocators(mod):
    g = mod.guide_empty_cuda((4, 8), 0)
    mod.guide_fill_cuda(g, 1.5)
    torch.cuda.synchronize()
    torch.testing.assert_close(torch.from_dlpack(g), torch.full((4, 8), 1.5, device="cuda"))
    x = torch.zeros(1 << 20, device="cuda")
    before = torch.cuda.memory_allocated()
    e = mod.guide_empty_env(x)
    assert isinstance(e, torch.Tensor) and e.is_cuda
    assert torch.cuda.memory_allocated() - before >= x.numel() * 4


def test_cuda_entry_rejects_a_cpu_tensor(mod):
    if not hasattr(mod, "guide_fill_cuda"):
        pytest.skip("the CUDA sources were not compiled (no nvcc)")
    with pytest.raises(ValueError, match="argument 'y': expected a tensor on cuda, got one on cpu:0"):
        mod.guide_fill_cuda(np.zeros(3, np.float32), 1.0)
