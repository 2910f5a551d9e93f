"""silu: the tvm_ffi port matches the PyTorch extension it replaces, result for result and error for error."""

import hashlib
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import tvm_ffi
from torch.utils.cpp_extension import load

HERE = Path(__file__).resolve().parent
BUILD = HERE / "build"  # the README's cmake commands build libsilu_ffi.so here
needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU (none visible to torch)")
SHAPES = [(0,), (1,), (7,), (3, 5), (2, 3, 4)]


@pytest.fixture(scope="module")
def mod():
    return tvm_ffi.load_module(str(BUILD / "libsilu_ffi.so"))


def torch_ext_dir():
    """The notebook's build folder for the extension, so that each builds it at most once."""
    parts = [(HERE / n).read_bytes() for n in ("silu_torch_ext.cpp", "silu_ffi_cpu.cc", "CMakeLists.txt")]
    parts += [torch.__version__.encode(), tvm_ffi.__version__.encode()]
    return BUILD / f"torch_ext_{hashlib.sha256(b''.join(parts)).hexdigest()[:16]}"


@pytest.fixture(scope="module")
def ext():
    folder = torch_ext_dir()
    folder.mkdir(parents=True, exist_ok=True)
    return load("silu_torch_ext", [str(HERE / "silu_torch_ext.cpp")], build_directory=str(folder),
                extra_cflags=["-O2"])


def sample_inputs(device, shape):
    return torch.randn(shape, generator=torch.Generator().manual_seed(0)).to(device)


def reference(x):
    return (x.double() * torch.sigmoid(x.double())).to(x.dtype)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_ffi_matches_extension_and_reference(mod, ext, shape):
    x = sample_inputs("cpu", shape)
    y = mod.silu_ffi_cpu(x)
    assert isinstance(y, torch.Tensor) and y.shape == x.shape and y.dtype == torch.float32
    assert torch.equal(y, ext.silu(x))
    assert torch.equal(y, torch.ops.cookbook_ext.silu(x))
    torch.testing.assert_close(y, reference(x))


@pytest.mark.parametrize(
    "x",
    [torch.zeros(2, 3, 4), torch.zeros(3, 5).T, torch.zeros(4, 6)[:, ::2], torch.tensor(2.0), torch.zeros(0, 7)],
    ids=["contiguous", "transposed", "strided", "0-d", "empty"],
)
def test_describe_agrees(mod, ext, x):
    assert str(mod.silu_ffi_describe_cpu(x)) == ext.describe(x)


@pytest.mark.parametrize(
    "bad, error, ffi_message, ext_message",
    [
        (torch.zeros(3, dtype=torch.int32), TypeError,
         "argument 'x': expected dtype float32, got int32", "argument 'x': expected dtype float32, got Int"),
        (torch.zeros(3, 4).T, ValueError,
         "argument 'x': expected a contiguous tensor, got strides [1, 4]", "argument 'x': expected a contiguous tensor"),
    ],
    ids=["dtype", "layout"],
)
def test_both_reject_bad_input_alike(mod, ext, bad, error, ffi_message, ext_message):
    with pytest.raises(error) as from_ffi:
        mod.silu_ffi_cpu(bad)
    with pytest.raises(error) as from_ext:
        ext.silu(bad)
    assert ffi_message in str(from_ffi.value)
    assert ext_message in str(from_ext.value)


def test_extension_loads_only_after_torch(ext):
    """No RUNPATH: without `import torch` first, the loader cannot find torch's libraries."""
    script = "import ctypes, sys; ctypes.CDLL(sys.argv[1])"
    alone = subprocess.run([sys.executable, "-c", script, ext.__file__], capture_output=True, text=True)
    assert alone.returncode != 0 and "libc10.so: cannot open shared object file" in alone.stderr
    after = subprocess.run([sys.executable, "-c", "import torch; " + script, ext.__file__],
                           capture_output=True, text=True)
    assert after.returncode == 0, after.stderr


def test_ffi_loads_without_torch(mod):
    library = BUILD / "libsilu_ffi.so"
    script = "import ctypes, sys; ctypes.CDLL(sys.argv[1]); assert 'torch' not in sys.modules"
    done = subprocess.run([sys.executable, "-c", script, str(library)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_ffi_without_a_torch_argument_cannot_allocate(mod):
    with pytest.raises(ValueError, match="no framework allocator is installed for this call"):
        mod.silu_ffi_cpu(np.zeros(3, np.float32))


def test_describe_accepts_numpy(mod, ext):
    x = np.zeros((2, 5), np.float32)
    assert str(mod.silu_ffi_describe_cpu(x)) == ext.describe(torch.from_numpy(x))


def test_cuda_entry_rejects_cpu_tensor(mod):
    if not hasattr(mod, "silu_ffi_cuda"):
        pytest.skip("CUDA variant not built (no nvcc)")
    with pytest.raises(ValueError, match="argument 'x': expected a tensor on cuda, got one on cpu:0"):
        mod.silu_ffi_cuda(torch.zeros(3))


@needs_cuda
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_cuda_matches_cpu_and_reference(mod, shape):
    x = sample_inputs("cuda", shape)
    y = mod.silu_ffi_cuda(x)
    assert isinstance(y, torch.Tensor) and y.device == x.device
    torch.testing.assert_close(y, reference(x))
    torch.testing.assert_close(y.cpu(), mod.silu_ffi_cpu(x.cpu()))


@needs_cuda
def test_cuda_rejects_bad_input(mod):
    with pytest.raises(TypeError, match="argument 'x': expected dtype float32, got int32"):
        mod.silu_ffi_cuda(torch.zeros(3, dtype=torch.int32, device="cuda"))
    with pytest.raises(ValueError, match="argument 'x': expected a contiguous tensor"):
        mod.silu_ffi_cuda(torch.zeros(3, 4, device="cuda").T)


@needs_cuda
def test_both_reject_cuda_tensor(mod, ext):
    x = sample_inputs("cuda", (4,))
    with pytest.raises(ValueError, match="argument 'x': expected a tensor on cpu, got one on cuda:0"):
        mod.silu_ffi_cpu(x)
    with pytest.raises(ValueError, match="argument 'x': expected a tensor on cpu"):
        ext.silu(x)
