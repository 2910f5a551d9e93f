"""Every helper in include/ffi_cookbook raises the documented exception, naming the argument."""

import numpy as np
import pytest
import torch
import tvm_ffi

from ffi_cookbook.build import cmake_build


@pytest.fixture(scope="module")
def probe(root):
    build_dir = cmake_build(root / "tests" / "probe", "-DFFI_COOKBOOK_CUDA=OFF", verbose=False)
    return tvm_ffi.load_module(str(build_dir / "libhelper_probe.so"))


F32 = np.zeros((2, 3), np.float32)


@pytest.mark.parametrize(
    "func, args, error, message",
    [
        ("check_dtype_f32", (np.zeros(3, np.float64),), TypeError, "argument 'x': expected dtype float32, got float64"),
        ("check_ndim2", (np.zeros(3, np.float32),), ValueError, "argument 'x': expected a 2-d tensor, got 1-d with shape [3]"),
        ("check_contiguous", (F32.T,), ValueError, "argument 'x': expected a contiguous tensor, got strides [1, 3] for shape [3, 2]"),
        ("check_same_shape", (F32, np.zeros((3, 2), np.float32)), ValueError, "argument 'b': expected shape [2, 3] (the shape of 'a'), got [3, 2]"),
        ("check_same_dtype", (F32, F32.astype(np.float16)), TypeError, "argument 'b': expected dtype float32 (the dtype of 'a'), got float16"),
        ("dispatch_name", (np.zeros(3, np.int8),), TypeError, "argument 'x': expected dtype float32, float16 or bfloat16, got int8"),
        ("check_elementwise", (F32, F32.astype(np.float64)), TypeError, "argument 'y': expected dtype float32 (the dtype of 'x'), got float64"),
        ("check_elementwise", (F32, np.zeros(6, np.float32)), ValueError, "argument 'y': expected shape [2, 3] (the shape of 'x'), got [6]"),
        ("check_elementwise", (F32.T, F32.T), ValueError, "argument 'x': expected a contiguous tensor, got strides [1, 3] for shape [3, 2]"),
        ("check_elementwise", (F32, np.zeros((3, 2), np.float32).T), ValueError, "argument 'y': expected a contiguous tensor, got strides [1, 2] for shape [2, 3]"),
    ],
)
def test_check_raises(probe, func, args, error, message):
    with pytest.raises(error) as info:
        getattr(probe, func)(*args)
    assert str(info.value) == message


def test_device_checks_name_both_devices(probe):
    probe.check_device_cpu(F32)
    probe.check_same_device(F32, F32)
    with pytest.raises(ValueError) as info:
        probe.check_fake_cuda(F32, False)
    assert str(info.value) == "argument 'x': expected a tensor on cpu, got one on cuda:1"
    with pytest.raises(ValueError) as info:
        probe.check_fake_cuda(F32, True)
    assert str(info.value) == "argument 'y': expected a tensor on cpu:0 (the device of 'x'), got one on cuda:1"


def test_checks_accept_good_input(probe):
    for func, args in [("check_dtype_f32", (F32,)), ("check_ndim2", (F32,)), ("check_contiguous", (F32,)),
                       ("check_same_shape", (F32, F32)), ("check_same_dtype", (F32, F32)),
                       ("check_elementwise", (F32, F32))]:
        assert getattr(probe, func)(*args) is None


@pytest.mark.parametrize("dtype, name", [(torch.float32, "float"), (torch.float16, "Float16"), (torch.bfloat16, "BFloat16")])
def test_dispatch_picks_type(probe, dtype, name):
    assert probe.dispatch_name(torch.zeros(1, dtype=dtype)) == name


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_to_float_exact_for_every_bit_pattern(probe, dtype):
    bits = torch.arange(-(2**15), 2**15, dtype=torch.int32).to(torch.int16)
    x = bits.view(dtype)
    y = torch.empty(x.shape, dtype=torch.float32)
    probe.widen(x, y)
    torch.testing.assert_close(y, x.float(), rtol=0, atol=0, equal_nan=True)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_from_float_rounds_like_torch(probe, dtype):
    gen = torch.Generator().manual_seed(0)
    special = torch.tensor([0.0, -0.0, 1.0, 65504.0, 65520.0, 1e6, 6e-8, 3e-8, 2.98e-8, 1e-40,
                            float("inf"), float("-inf"), float("nan")])
    # Every float16/bfloat16 value and the midpoints between neighbours exercise
    # round-half-to-even; random magnitudes cover the rest.
    grid = torch.arange(-(2**15), 2**15, dtype=torch.int32).to(torch.int16).view(dtype).float()
    grid = grid[torch.isfinite(grid)].sort().values
    midpoints = (grid[1:].double() + grid[:-1].double()).div(2).float()
    x = torch.cat([special, grid, midpoints, torch.randn(10_000, generator=gen) * 10.0 ** torch.randint(-9, 6, (10_000,), generator=gen)])
    y = torch.empty(x.shape, dtype=dtype)
    probe.narrow(x, y)
    torch.testing.assert_close(y, x.to(dtype), rtol=0, atol=0, equal_nan=True)


def test_env_alloc_with_torch_argument(probe):
    x = torch.zeros(3, 4, dtype=torch.float16)
    y = probe.empty_like(x)
    assert isinstance(y, torch.Tensor) and y.shape == x.shape and y.dtype == x.dtype


def test_env_alloc_without_framework_tensor_raises(probe):
    with pytest.raises(ValueError, match="no framework allocator is installed for this call"):
        probe.empty_like(np.zeros(3, np.float32))


def test_cpu_allocator_is_aligned_and_owned(probe):
    t = probe.cpu_alloc(10)
    assert isinstance(t, tvm_ffi.Tensor) and t.shape == (10,)
    assert probe.data_address(t) % 64 == 0
    arr = np.from_dlpack(t)
    arr[:] = 3.0
    assert arr.sum() == 30.0
    assert probe.cpu_alloc(0).shape == (0,)
