"""cuda_streams: kernels read the stream Python publishes, and launch on it."""

from pathlib import Path

import numpy as np
import pytest
import torch
import tvm_ffi

# Built by the README's commands (cmake -S . -B build) in this folder.
HERE = Path(__file__).resolve().parent
LIBRARY = HERE / "build" / "libcuda_streams.so"
needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
# (rtol, atol) per dtype: one rounding step of the output dtype, as the kernel rounds once.
TOLERANCE = {"float32": (1.3e-6, 1e-5), "float16": (1e-3, 1e-3), "bfloat16": (8e-3, 8e-3)}
DTYPES = [torch.float32, torch.float16, torch.bfloat16]
CUDA0 = tvm_ffi.device("cuda:0")


@pytest.fixture(scope="module")
def mod():
    return tvm_ffi.load_module(str(LIBRARY))


def sample_inputs(device, dtype=torch.float32, shape=(1000,)):
    x = torch.randn(shape, generator=torch.Generator().manual_seed(0)).to(device=device, dtype=dtype)
    return x, torch.empty_like(x)


def reference(x, alpha):
    return (x.float() * alpha).to(x.dtype)


def test_no_stream_is_published_by_default(mod):
    assert mod.env_stream_cpu(CUDA0) == 0


def test_use_raw_stream_publishes_the_handle(mod):
    with tvm_ffi.use_raw_stream(CUDA0, 1234):
        assert mod.env_stream_cpu(CUDA0) == 1234
        assert mod.env_stream_cpu(tvm_ffi.device("cuda:1")) == 0  # per device
        assert mod.env_stream_cpu(tvm_ffi.device("cpu")) == 0
    assert mod.env_stream_cpu(CUDA0) == 0  # restored on exit


def test_nested_contexts_restore_the_outer_stream(mod):
    with tvm_ffi.use_raw_stream(CUDA0, 1):
        with tvm_ffi.use_raw_stream(CUDA0, 2):
            assert mod.env_stream_cpu(CUDA0) == 2
        assert mod.env_stream_cpu(CUDA0) == 1


def test_env_stream_rejects_a_non_device(mod):
    with pytest.raises(TypeError, match=r"env_stream_cpu\(0: Device\) -> int.*Expected `Device` but got `int`"):
        mod.env_stream_cpu(1)


def test_cuda_entry_rejects_cpu_tensor(mod):
    if not hasattr(mod, "scale_on_stream_cuda"):
        pytest.skip("CUDA variant not built (no nvcc)")
    with pytest.raises(ValueError, match="argument 'x': expected a tensor on cuda, got one on cpu:0"):
        mod.scale_on_stream_cuda(np.zeros(3, np.float32), np.zeros(3, np.float32), 2.0)


@needs_cuda
@pytest.mark.parametrize(
    "make, error, message",
    [
        (lambda x: (x.to(torch.int32), x.to(torch.int32)), TypeError, "argument 'x': expected dtype float32, float16 or bfloat16"),
        (lambda x: (x, x.half()), TypeError, "argument 'y': expected dtype float32"),
        (lambda x: (x, x[:-1].clone()), ValueError, "argument 'y': expected shape"),
        (lambda x: (x[::2], torch.empty_like(x[::2])), ValueError, "argument 'x': expected a contiguous tensor"),
        (lambda x: (x, x.cpu()), ValueError, "argument 'y': expected a tensor on cuda:0"),
    ],
)
def test_cuda_rejects_bad_input(mod, make, error, message):
    x, _ = sample_inputs("cuda")
    with pytest.raises(error, match=message):
        mod.scale_on_stream_cuda(*make(x), 2.0)


@needs_cuda
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cuda_default_stream(mod, dtype):
    x, y = sample_inputs("cuda", dtype)
    used = mod.scale_on_stream_cuda(x, y, 3.0)
    assert used == torch.cuda.current_stream().cuda_stream
    torch.cuda.synchronize()
    rtol, atol = TOLERANCE[str(dtype).removeprefix("torch.")]
    torch.testing.assert_close(y, reference(x, 3.0), rtol=rtol, atol=atol)


@needs_cuda
def test_torch_tensors_carry_the_current_torch_stream(mod):
    x, y = sample_inputs("cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())  # x was written on the default stream
    with torch.cuda.stream(side):
        used = mod.scale_on_stream_cuda(x, y, 2.0)
    assert used == side.cuda_stream != torch.cuda.current_stream().cuda_stream
    side.synchronize()
    torch.testing.assert_close(y, reference(x, 2.0))


@needs_cuda
def test_use_torch_stream_for_tvm_ffi_tensors(mod):
    x, y = sample_inputs("cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    xt, yt = tvm_ffi.from_dlpack(x), tvm_ffi.from_dlpack(y)
    assert mod.scale_on_stream_cuda(xt, yt, 2.0) == 0  # no torch tensor: nothing published
    with tvm_ffi.use_torch_stream(torch.cuda.stream(side)):
        assert mod.scale_on_stream_cuda(xt, yt, 2.0) == side.cuda_stream
    side.synchronize()
    torch.testing.assert_close(y, reference(x, 2.0))


@needs_cuda
def test_use_raw_stream_for_tvm_ffi_tensors(mod):
    x, y = sample_inputs("cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with tvm_ffi.use_raw_stream(tvm_ffi.device("cuda:0"), side.cuda_stream):
        used = mod.scale_on_stream_cuda(tvm_ffi.from_dlpack(x), tvm_ffi.from_dlpack(y), 2.0)
    assert used == side.cuda_stream
    side.synchronize()
    torch.testing.assert_close(y, reference(x, 2.0))


@needs_cuda
def test_torch_tensor_overrides_a_raw_stream(mod):
    # During a call with torch CUDA tensors, torch's current stream wins.
    x, y = sample_inputs("cuda")
    side = torch.cuda.Stream()
    with tvm_ffi.use_raw_stream(tvm_ffi.device("cuda:0"), side.cuda_stream):
        used = mod.scale_on_stream_cuda(x, y, 2.0)
    assert used == torch.cuda.current_stream().cuda_stream
    torch.cuda.synchronize()


@needs_cuda
@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two GPUs")
def test_device_guard_runs_on_the_tensors_gpu(mod):
    x, y = sample_inputs("cuda:1")
    torch.cuda.set_device(0)
    with torch.cuda.device(1):
        expected_stream = torch.cuda.current_stream().cuda_stream
    used = mod.scale_on_stream_cuda(x, y, 2.0)
    assert used == expected_stream
    assert torch.cuda.current_device() == 0  # the guard restored the caller's device
    torch.cuda.synchronize(1)
    torch.testing.assert_close(y, reference(x, 2.0))
