"""tools/rmsnorm_lab: every candidate compiles for sm_90, loads on a machine without a GPU, and
checks its arguments as recipe 10's ``rms_norm_cuda`` does, naming the argument.

No GPU is needed: the checks read only a tensor's metadata, so the tests hand the candidates
DLPack tensors that say they are on ``cuda:0`` and point at host memory nothing reads (a
check that passed would go on to CUDA, which these tests never reach). The build uses
``fewer_kernels`` (one register depth for every row length, the same sources and entry points,
compiled as one translation unit): about 25 s of CPU on this project's 2-core machines, 4 s
when tvm_ffi's build is current; the GPU sweep builds the full library.
"""

from __future__ import annotations

import ctypes
import os
import re
from pathlib import Path

import pytest

from tools import rmsnorm_lab

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("FFI_COOKBOOK_BUILD_DIR") or ROOT / "_build") / "rmsnorm-lab-check"

pytestmark = pytest.mark.skipif(rmsnorm_lab.cuda_home() is None, reason="no nvcc: the candidates are CUDA sources")

EPS = 1e-6
KDL_CPU, KDL_CUDA = 1, 2
FLOAT, BFLOAT, INT = 2, 4, 0


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


_BUFFER = ctypes.create_string_buffer(1 << 12)  # 16-byte aligned host memory that nothing reads
_KEEP: list = []  # the ctypes objects of every fake tensor, alive for the session


class FakeTensor:
    """A DLPack producer: a tensor of ``shape`` on ``device_type`` whose data is host memory."""

    def __init__(self, shape, dtype=(FLOAT, 32), device_type=KDL_CUDA, strides=None, offset_bytes=0):
        self.shape, self.dtype, self.device_type = shape, dtype, device_type
        self.strides, self.offset_bytes = strides, offset_bytes

    def __dlpack_device__(self):
        return (self.device_type, 0)

    def __dlpack__(self, **kwargs):
        shape = (ctypes.c_int64 * len(self.shape))(*self.shape)
        strides = (ctypes.c_int64 * len(self.shape))(*self.strides) if self.strides else None
        managed = DLManagedTensor()
        t = managed.dl_tensor
        t.data = ctypes.addressof(_BUFFER) + (16 - ctypes.addressof(_BUFFER) % 16) % 16 + self.offset_bytes
        t.device = DLDevice(self.device_type, 0)
        t.ndim = len(self.shape)
        t.dtype = DLDataType(self.dtype[0], self.dtype[1], 1)
        t.shape = shape
        t.strides = strides
        _KEEP.extend([shape, strides, managed])
        new = ctypes.pythonapi.PyCapsule_New
        new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        return new(ctypes.addressof(managed), b"dltensor", None)


def cuda(*shape, dtype=(FLOAT, 32), **kwargs):
    import tvm_ffi

    return tvm_ffi.from_dlpack(FakeTensor(shape, dtype, **kwargs))


@pytest.fixture(scope="module")
def lab():
    import tvm_ffi

    return tvm_ffi.load_module(rmsnorm_lab.build(BUILD, fewer_kernels=True))


def test_every_source_is_a_candidate_with_a_reason():
    """Each .cu file names in its header the candidates it exports, and CANDIDATES lists each."""
    exported = set()
    for source in rmsnorm_lab.SOURCES:
        text = source.read_text()
        names = re.findall(r"TVM_FFI_DLL_EXPORT_TYPED_FUNC\(rms_norm_lab_(\w+),", text)
        assert names, f"{source.name} exports no candidate"
        for name in names:
            assert f'"{name}"' in text.split("#include")[0], f"{source.name}: its header does not name {name}"
            assert "Hypothesis:" in text, f"{source.name}: its header states no hypothesis"
        exported |= set(names)
    assert exported == set(rmsnorm_lab.CANDIDATES)


def test_every_candidate_loads_without_a_gpu(lab):
    for name in rmsnorm_lab.CANDIDATES:
        assert callable(getattr(lab, f"rms_norm_lab_{name}"))


# (arguments, error, message): recipe 10's checks, as rms_norm_cuda words them.
BAD = [
    (lambda: (cuda(8), cuda(8), cuda(8), EPS), ValueError, "argument 'x': expected a tensor with 2 or more dimensions"),
    (lambda: (cuda(4, 8, strides=(1, 4)), cuda(8), cuda(4, 8), EPS), ValueError,
     "argument 'x': expected a contiguous tensor"),
    (lambda: (cuda(4, 8), cuda(1, 8), cuda(4, 8), EPS), ValueError, "argument 'weight': expected a 1-d tensor, got 2-d"),
    (lambda: (cuda(4, 8), cuda(7), cuda(4, 8), EPS), ValueError,
     "argument 'weight': expected 8 elements (the last dimension of 'x'), got 7"),
    (lambda: (cuda(4, 8), cuda(8, dtype=(FLOAT, 16)), cuda(4, 8), EPS), TypeError,
     "argument 'weight': expected dtype float32 (the dtype of 'x'), got float16"),
    (lambda: (cuda(4, 8), cuda(8, device_type=KDL_CPU), cuda(4, 8), EPS), ValueError,
     "argument 'weight': expected a tensor on cuda:0 (the device of 'x'), got one on cpu:0"),
    (lambda: (cuda(4, 8), cuda(8), cuda(4, 9), EPS), ValueError, "argument 'y': expected shape [4, 8]"),
    (lambda: (cuda(4, 8, dtype=(BFLOAT, 16)), cuda(8, dtype=(BFLOAT, 16)), cuda(4, 8, dtype=(FLOAT, 16)), EPS),
     TypeError, "argument 'y': expected dtype bfloat16 (the dtype of 'x'), got float16"),
    (lambda: (cuda(4, 8), cuda(8), cuda(4, 8, offset_bytes=2), EPS), ValueError,
     "argument 'y': expected data aligned to its 4-byte elements"),
    (lambda: (cuda(4, 8), cuda(8), cuda(4, 8), 0.0), ValueError, "argument 'eps': expected a positive number, got 0"),
    (lambda: (cuda(4, 8), cuda(8), cuda(4, 8), float("nan")), ValueError,
     "argument 'eps': expected a positive number, got nan"),
    (lambda: (cuda(4, 8, device_type=KDL_CPU), cuda(8), cuda(4, 8), EPS), ValueError,
     "argument 'x': expected a tensor on cuda, got one on cpu:0"),
]


@pytest.mark.parametrize("name", sorted(rmsnorm_lab.CANDIDATES))
def test_candidate_rejects_bad_arguments_naming_them(lab, name):
    rms_norm = getattr(lab, f"rms_norm_lab_{name}")
    for make, error, message in BAD:
        with pytest.raises(error) as info:
            rms_norm(*make())
        assert message in str(info.value), (name, message, str(info.value))


@pytest.mark.parametrize("name", sorted(rmsnorm_lab.CANDIDATES))
def test_candidate_takes_empty_tensors_without_touching_cuda(lab, name):
    """No rows, or empty rows: nothing to write, and no CUDA call (none could succeed here)."""
    rms_norm = getattr(lab, f"rms_norm_lab_{name}")
    rms_norm(cuda(0, 8), cuda(8), cuda(0, 8), EPS)
    rms_norm(cuda(4, 0), cuda(0), cuda(4, 0), EPS)


def test_a_wrong_signature_is_a_type_error(lab):
    with pytest.raises(TypeError):
        lab.rms_norm_lab_packed(cuda(4, 8), cuda(8), cuda(4, 8))
