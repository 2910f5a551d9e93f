"""tensor_view: views read, owning tensors count references and keep buffers alive."""

import gc
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import tvm_ffi

# Built by the README's commands (cmake -S . -B build) in this folder.
HERE = Path(__file__).resolve().parent
LIBRARY = HERE / "build" / "libtensor_view.so"
SHAPES = [(0,), (1,), (7,), (3, 5)]


@pytest.fixture(scope="module")
def mod():
    return tvm_ffi.load_module(str(LIBRARY))


def sample_inputs(device, shape):
    return torch.randn(shape, generator=torch.Generator().manual_seed(0)).to(device)


def reference_sum(x):
    return x.double().sum().item()


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_view_sum_matches_torch(mod, shape):
    x = sample_inputs("cpu", shape)
    assert mod.view_sum_cpu(x) == pytest.approx(reference_sum(x), rel=1e-12, abs=1e-12)


def test_use_count_follows_owners(mod):
    t = tvm_ffi.from_dlpack(np.zeros(4, np.float32))
    assert mod.tensor_use_count(t) == 2  # Python's t and the parameter
    keepers = [mod.tensor_keep(t) for _ in range(3)]
    assert mod.tensor_use_count(t) == 5
    returned = keepers[0]()
    assert mod.tensor_use_count(t) == 6
    del returned, keepers
    assert mod.tensor_use_count(t) == 2


def test_use_count_of_a_temporary_is_the_parameter_plus_conversion(mod):
    # A NumPy array is wrapped for the call: the wrapper and the parameter own it.
    assert mod.tensor_use_count(np.zeros(2, np.float32)) == 2


@pytest.mark.parametrize("make", [lambda: np.arange(6, dtype=np.float32),
                                  lambda: torch.arange(6, dtype=torch.float32)],
                         ids=["numpy", "torch"])
def test_keeper_keeps_buffer_alive(mod, make):
    src = make()
    expected = np.from_dlpack(src).copy()
    address = src.ctypes.data if isinstance(src, np.ndarray) else src.data_ptr()
    keeper = mod.tensor_keep(src)
    del src
    gc.collect()
    back = keeper()
    assert isinstance(back, tvm_ffi.Tensor)
    back_np = np.from_dlpack(back)
    assert back_np.ctypes.data == address
    np.testing.assert_array_equal(back_np, expected)


def test_view_sum_rejects_bad_dtype(mod):
    with pytest.raises(TypeError, match="argument 'x': expected dtype float32"):
        mod.view_sum_cpu(np.zeros(3, np.int32))


def test_view_sum_rejects_strided(mod):
    with pytest.raises(ValueError, match="argument 'x': expected a contiguous tensor"):
        mod.view_sum_cpu(np.zeros((3, 4), np.float32).T)


def test_view_sum_rejects_misaligned_data(mod):
    raw = np.zeros(4 * 3 + 1, np.uint8)
    x = np.frombuffer(raw.data, dtype=np.float32, count=3, offset=1)  # one byte past alignment
    with pytest.raises(ValueError, match="argument 'x': expected data aligned to 4 bytes"):
        mod.view_sum_cpu(x)


@pytest.mark.parametrize("name", ["tensor_use_count", "tensor_keep"])
def test_tensor_parameter_rejects_none(mod, name):
    with pytest.raises(TypeError, match="argument 't': expected a tensor, got None"):
        getattr(mod, name)(None)


@pytest.mark.parametrize("name", ["tensor_use_count", "tensor_keep"])
def test_tensor_parameter_rejects_non_tensor(mod, name):
    with pytest.raises(TypeError, match=f"Mismatched type on argument #0 when calling: `{name}"):
        getattr(mod, name)(3)


def test_view_of_temporary_tensor_does_not_compile(tmp_path):
    source = tmp_path / "view_of_temporary.cc"
    source.write_text("#include <tvm/ffi/container/tensor.h>\n"
                      "tvm::ffi::Tensor MakeTensor();\n"
                      "void* Dangling() { tvm::ffi::TensorView v = MakeTensor(); return v.data_ptr(); }\n")
    cxxflags = subprocess.run([sys.executable, "-m", "tvm_ffi.config", "--cxxflags"],
                              capture_output=True, text=True, check=True).stdout.split()
    done = subprocess.run(["c++", "-fsyntax-only", *cxxflags, str(source)], capture_output=True, text=True)
    assert done.returncode != 0 and "deleted" in done.stderr, done.stderr


def test_view_of_living_tensor_compiles(tmp_path):
    # The control for the test above: the same code with a named tensor is fine.
    source = tmp_path / "view_of_named.cc"
    source.write_text("#include <tvm/ffi/container/tensor.h>\n"
                      "tvm::ffi::Tensor MakeTensor();\n"
                      "void* Fine() { tvm::ffi::Tensor t = MakeTensor(); tvm::ffi::TensorView v = t; return v.data_ptr(); }\n")
    cxxflags = subprocess.run([sys.executable, "-m", "tvm_ffi.config", "--cxxflags"],
                              capture_output=True, text=True, check=True).stdout.split()
    done = subprocess.run(["c++", "-fsyntax-only", *cxxflags, str(source)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
