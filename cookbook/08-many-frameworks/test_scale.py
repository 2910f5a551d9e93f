"""scale: one library serves NumPy, torch, tvm_ffi.Tensor and JAX, without copies."""

from pathlib import Path

import numpy as np
import pytest
import torch
import tvm_ffi

# Built by the README's commands (cmake -S . -B build) in this folder.
HERE = Path(__file__).resolve().parent
LIBRARY = HERE / "build" / "libscale.so"
SHAPES = [(0,), (1,), (7,), (3, 5)]
needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

# (x, out, error, message) that scale_cpu(x, alpha, out) must reject: the messages of
# CheckDtype(x, float32) and then CheckElementwise(x, "x", out, "out", kDLCPU) (check.h).
F32 = np.float32
BAD_INPUTS = [
    (np.zeros(3, np.float64), np.zeros(3, np.float64), TypeError, "argument 'x': expected dtype float32, got float64"),
    (np.zeros(3, F32), np.zeros(3, np.int32), TypeError, "argument 'out': expected dtype float32 (the dtype of 'x'), got int32"),
    (np.zeros(3, F32), np.zeros(4, F32), ValueError, "argument 'out': expected shape [3] (the shape of 'x'), got [4]"),
    (np.zeros((3, 4), F32).T, np.zeros((4, 3), F32), ValueError, "argument 'x': expected a contiguous tensor"),
    (np.zeros((3, 4), F32), np.zeros((4, 3), F32).T, ValueError, "argument 'out': expected a contiguous tensor"),
]


@pytest.fixture(scope="module")
def mod():
    return tvm_ffi.load_module(str(LIBRARY))


def reference(x, alpha):
    return np.float32(alpha) * np.asarray(x, dtype=np.float32)


def sample_inputs(device, shape):
    x = torch.randn(shape, generator=torch.Generator().manual_seed(0)).to(device)
    return x, torch.full_like(x, float("nan"))


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_numpy(mod, shape):
    x, out = (t.numpy() for t in sample_inputs("cpu", shape))
    mod.scale_cpu(x, 1.5, out)
    np.testing.assert_array_equal(out, reference(x, 1.5))
    assert mod.tensor_data_address(x) == x.ctypes.data


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_torch(mod, shape):
    x, out = sample_inputs("cpu", shape)
    mod.scale_cpu(x, -2.0, out)
    np.testing.assert_array_equal(out.numpy(), reference(x, -2.0))
    assert mod.tensor_data_address(out) == out.data_ptr()


def test_torch_view_address_includes_offset(mod):
    t = torch.arange(10, dtype=torch.float32)
    assert mod.tensor_data_address(t[4:]) == t.data_ptr() + 4 * t.element_size()


def test_tvm_ffi_tensor(mod):
    x = np.arange(5, dtype=np.float32)
    out = np.zeros_like(x)
    mod.scale_cpu(tvm_ffi.from_dlpack(x), 3.0, tvm_ffi.from_dlpack(out))
    np.testing.assert_array_equal(out, reference(x, 3.0))
    assert mod.tensor_data_address(tvm_ffi.from_dlpack(x)) == x.ctypes.data


@pytest.fixture(scope="module")
def jax_targets(mod):
    jax = pytest.importorskip("jax")
    jax_tvm_ffi = pytest.importorskip("jax_tvm_ffi")
    jax_tvm_ffi.register_ffi_target("cookbook_test.scale", mod.scale_cpu,
                                    ["args", "attrs.alpha", "rets"], platform="cpu")
    jax_tvm_ffi.register_ffi_target("cookbook_test.address", mod.tensor_data_address_into_cpu,
                                    ["args", "rets"], platform="cpu")
    # These targets are CPU kernels: keep the arrays on JAX's CPU device even where
    # JAX defaults to a GPU (XLA would look for a CUDA handler there).
    with jax.default_device(jax.devices("cpu")[0]):
        yield jax


def jax_gpus():
    try:
        import jax
        return [d for d in jax.devices() if d.platform == "gpu"]
    except (ImportError, RuntimeError):
        return []


@pytest.mark.skipif(not jax_gpus(), reason="needs JAX with a CUDA GPU")
def test_jax_jit_on_gpu(mod):
    jax = pytest.importorskip("jax")
    jax_tvm_ffi = pytest.importorskip("jax_tvm_ffi")
    jax_tvm_ffi.register_ffi_target("cookbook_test.scale_gpu", mod.scale_cuda,
                                    ["args", "attrs.alpha", "rets"], platform="gpu")
    x = jax.device_put(jax.numpy.linspace(-3, 3, 11, dtype=jax.numpy.float32), jax_gpus()[0])
    call = jax.ffi.ffi_call("cookbook_test.scale_gpu", jax.ShapeDtypeStruct(x.shape, x.dtype))
    y = jax.jit(lambda v: call(v, alpha=np.float64(0.5)) + 1)(x)
    assert y.devices() == {jax_gpus()[0]}
    np.testing.assert_allclose(np.asarray(y), reference(x, 0.5) + 1, rtol=1e-6)


def test_jax_eager_address(mod, jax_targets):
    x = jax_targets.numpy.arange(6, dtype="float32")
    assert mod.tensor_data_address(x) == x.unsafe_buffer_pointer()


def test_jax_jit_matches_reference(jax_targets):
    jax, jnp = jax_targets, jax_targets.numpy

    @jax.jit
    def f(x):
        call = jax.ffi.ffi_call("cookbook_test.scale", jax.ShapeDtypeStruct(x.shape, x.dtype))
        return call(x, alpha=np.float64(0.5)) + 1

    x = jnp.linspace(-3, 3, 11, dtype=jnp.float32)
    np.testing.assert_allclose(np.asarray(f(x)), reference(x, 0.5) + 1, rtol=1e-6)


def test_jax_jit_passes_parameter_buffer(jax_targets):
    jax, jnp = jax_targets, jax_targets.numpy
    x = jnp.arange(4, dtype=jnp.float32)

    def address_of(v):
        return jax.ffi.ffi_call("cookbook_test.address", jax.ShapeDtypeStruct((1,), jnp.int64))(v)

    with jax.enable_x64(True):
        param, temp = jax.jit(lambda v: (address_of(v), address_of(v + 1)))(x)
    assert int(param[0]) == x.unsafe_buffer_pointer()
    assert int(temp[0]) != x.unsafe_buffer_pointer()


def test_jax_jit_reports_kernel_error(jax_targets):
    jax, jnp = jax_targets, jax_targets.numpy
    x = jnp.arange(4, dtype=jnp.int32)
    call = jax.ffi.ffi_call("cookbook_test.scale", jax.ShapeDtypeStruct(x.shape, x.dtype))
    with pytest.raises(jax.errors.JaxRuntimeError, match="argument 'x': expected dtype float32, got int32"):
        jax.jit(lambda v: call(v, alpha=np.float64(1.0)))(x).block_until_ready()


@pytest.mark.parametrize("x, out, error, message", BAD_INPUTS)
def test_scale_rejects_bad_input(mod, x, out, error, message):
    with pytest.raises(error) as info:
        mod.scale_cpu(x, 1.0, out)
    assert message in str(info.value)


@pytest.mark.parametrize(
    "out, error, message",
    [
        (np.zeros(1, np.int32), TypeError, "argument 'out': expected dtype int64, got int32"),
        (np.zeros((1, 1), np.int64), ValueError, "argument 'out': expected a 1-d tensor, got 2-d"),
        (np.zeros(2, np.int64), ValueError, "argument 'out': expected shape [1], got [2]"),
    ],
)
def test_address_into_rejects_bad_output(mod, out, error, message):
    with pytest.raises(error) as info:
        mod.tensor_data_address_into_cpu(np.zeros(3, np.float32), out)
    assert message in str(info.value)


def test_address_into_writes_address(mod):
    x, out = np.zeros(3, np.float32), np.zeros(1, np.int64)
    mod.tensor_data_address_into_cpu(x, out)
    assert out[0] == x.ctypes.data


def test_cuda_entry_rejects_cpu_tensor(mod):
    if not hasattr(mod, "scale_cuda"):
        pytest.skip("CUDA variant not built (no nvcc)")
    with pytest.raises(ValueError, match="argument 'x': expected a tensor on cuda, got one on cpu:0"):
        mod.scale_cuda(np.zeros(3, np.float32), 1.0, np.zeros(3, np.float32))


@needs_cuda
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_cuda_torch(mod, shape):
    x, out = sample_inputs("cuda", shape)
    mod.scale_cuda(x, 1.5, out)
    np.testing.assert_array_equal(out.cpu().numpy(), reference(x.cpu(), 1.5))
    assert mod.tensor_data_address(x) == x.data_ptr()
