"""Every helper in include/ffi_cookbook raises the documented exception, naming the argument."""

import re

import numpy as np
import pytest
import torch
import tvm_ffi

from tools.cmake_build import cmake_build


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


# --- Error messages for any DLPack value (hand-made DLTensors from the probe) ---------------

@pytest.mark.parametrize("code, bits, lanes, name", [
    (2, 32, 1, "float32"), (0, 8, 1, "int8"), (1, 1, 1, "uint1"), (4, 16, 1, "bfloat16"),
    (5, 64, 1, "complex64"), (5, 128, 1, "complex128"), (6, 8, 1, "bool"), (6, 1, 1, "bool1"),
    (3, 64, 1, "handle"), (3, 32, 2, "handle32x2"), (10, 8, 1, "float8_e4m3fn"),
    (14, 8, 1, "float8_e8m0fnu"), (16, 6, 1, "float6_e3m2fn"), (17, 4, 2, "float4_e2m1fnx2"),
    (12, 16, 1, "float8_e5m2(bits=16)"), (2, 32, 4, "float32x4"), (2, 16, 65532, "float16xvscalex4"),
    (2, 0, 0, "float0x0"), (18, 8, 1, "dtype(code=18, bits=8, lanes=1)"),
    (129, 16, 1, "dtype(code=129, bits=16, lanes=1)"), (255, 255, 65535, "dtype(code=255, bits=255, lanes=65535)"),
])
def test_dtype_name(probe, code, bits, lanes, name):
    assert probe.dtype_name(code, bits, lanes) == name


def test_dtype_name_never_fails(probe):
    for code in range(256):
        for bits, lanes in [(0, 1), (1, 1), (7, 3), (8, 1), (64, 1), (255, 0), (16, 65535), (32, 32768)]:
            assert probe.dtype_name(code, bits, lanes)


@pytest.mark.parametrize("device_type, device_id, name", [
    (1, 0, "cpu:0"), (2, 3, "cuda:3"), (3, 0, "cuda_host:0"), (9, 0, "vpi:0"), (11, 0, "rocm_host:0"),
    (12, 0, "ext_dev:0"), (13, 0, "cuda_managed:0"), (14, 0, "oneapi:0"), (15, 0, "webgpu:0"),
    (16, 0, "hexagon:0"), (17, 0, "maia:0"), (18, 0, "trn:0"), (0, 0, "device_type=0:0"),
    (5, 0, "device_type=5:0"), (19, -1, "device_type=19:-1"), (-7, 2, "device_type=-7:2"),
    (2**31 - 1, 2**31 - 1, "device_type=2147483647:2147483647"),
])
def test_device_name(probe, device_type, device_id, name):
    assert probe.device_name(device_type, device_id) == name


def test_dims_text(probe):
    shape = tvm_ffi.Shape
    assert probe.dims_text(shape((2, 3)), 2, False) == "[2, 3]"
    assert probe.dims_text(shape(()), 0, False) == "[]"
    assert probe.dims_text(shape(()), 0, True) == "[]"
    assert probe.dims_text(shape(()), 4, True) == "[none]"
    assert probe.dims_text(shape(()), -1, True) == "[invalid ndim -1]"
    assert probe.dims_text(shape((1,) * 64), 64, False) == "[" + ", ".join(["1"] * 64) + "]"


def raw(probe, shape=(2, 3), strides=None, code=2, bits=32, lanes=1, device=(1, 0), byte_offset=0):
    """A tensor with any DLPack metadata over CPU memory, made by the probe."""
    return probe.make_tensor(tvm_ffi.Shape(shape), None if strides is None else tvm_ffi.Shape(strides),
                             code, bits, lanes, device[0], device[1], byte_offset)


@pytest.mark.parametrize("code, bits, lanes, name", [
    (5, 64, 1, "complex64"), (5, 32, 1, "complex32"), (6, 16, 1, "bool16"), (3, 64, 1, "handle"),
    (17, 4, 2, "float4_e2m1fnx2"), (40, 8, 1, "dtype(code=40, bits=8, lanes=1)"),
    (200, 16, 1, "dtype(code=200, bits=16, lanes=1)"),
])
def test_dtype_checks_name_any_dtype(probe, code, bits, lanes, name):
    odd = raw(probe, code=code, bits=bits, lanes=lanes)
    with pytest.raises(TypeError, match=rf"^argument 'x': expected dtype float32, got {re.escape(name)}$"):
        probe.check_dtype_f32(odd)
    with pytest.raises(TypeError, match=rf"^argument 'b': expected dtype float32 \(the dtype of 'a'\), got {re.escape(name)}$"):
        probe.check_same_dtype(raw(probe), odd)
    with pytest.raises(TypeError, match=rf"^argument 'x': expected dtype float32, float16 or bfloat16, got {re.escape(name)}$"):
        probe.dispatch_name(odd)


def test_device_checks_name_any_device(probe):
    for device_type, name in [(12, "ext_dev:0"), (99, "device_type=99:0"), (-3, "device_type=-3:0")]:
        odd = raw(probe, device=(device_type, 0))
        with pytest.raises(ValueError, match=rf"^argument 'x': expected a tensor on cpu, got one on {name}$"):
            probe.check_device_cpu(odd)
        with pytest.raises(ValueError, match=rf"got one on {name}$"):
            probe.check_same_device(raw(probe), odd)


def test_shape_checks_any_ndim(probe):
    with pytest.raises(ValueError, match=r"^argument 'x': expected a 2-d tensor, got 0-d with shape \[\]$"):
        probe.check_ndim2(raw(probe, shape=()))
    wide = raw(probe, shape=(1,) * 40)
    with pytest.raises(ValueError, match=r"got 40-d with shape \[1(, 1){39}\]$"):
        probe.check_ndim2(wide)
    with pytest.raises(ValueError, match=r"\(the shape of 'a'\), got \[1(, 1){39}\]$"):
        probe.check_same_shape(raw(probe), wide)


def test_layout_checks_offset_negative_strides_and_alignment(probe):
    with pytest.raises(ValueError, match=r"^argument 'x': expected a contiguous tensor, got strides \[-3, 1\] for shape \[2, 3\]$"):
        probe.check_contiguous(raw(probe, strides=(-3, 1)))
    # DLPack allows the first element at data + byte_offset; kernels read data_ptr(), so refuse it.
    with pytest.raises(ValueError, match=r"^argument 'x': expected byte_offset 0 \(data starting at the data pointer\), got 4$"):
        probe.check_contiguous(raw(probe, byte_offset=4))
    misaligned = np.frombuffer(np.zeros(25, np.uint8).data, dtype=np.float32, count=6, offset=1).reshape(2, 3)
    with pytest.raises(ValueError, match=r"^argument 'x': expected data aligned to 4 bytes for float32, got an address 1 byte\(s\) off$"):
        probe.check_contiguous(misaligned)
    assert probe.check_contiguous(raw(probe, shape=(0, 3), byte_offset=0)) is None
    assert probe.check_contiguous(raw(probe, code=5, bits=128)) is None  # complex128: 8-byte alignment
