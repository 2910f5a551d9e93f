"""Turn argument descriptions (see :mod:`.cases`) into Python objects, in the child process."""

from __future__ import annotations

import mmap
import tempfile

import numpy as np
import torch
import tvm_ffi

_DEVICES = {"cpu": 1, "cuda": 2, "cuda_host": 3, "opencl": 4, "vulkan": 7, "metal": 8, "rocm": 10,
            "ext_dev": 12, "cuda_managed": 13}


_GPU_TYPES = {2, 3, 10, 11, 13}  # cuda, cuda_host, rocm, rocm_host, cuda_managed


def _float(v):
    return float(v) if isinstance(v, str) else v


def _numpy(dtype: str, shape: tuple, layout: str, fill: str, seed: int):
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    base_shape = tuple(reversed(shape)) if layout == "T" else shape
    if layout == "step" and shape:
        base_shape = shape[:-1] + (2 * shape[-1],)
    n = int(np.prod(base_shape, dtype=np.int64)) if base_shape else 1
    if n > 2**22:
        raise ValueError(f"shape {shape} is too large to fuzz with")
    if n == 0:  # possibly huge sizes with no element
        return np.empty(base_shape, dt)
    extra = 1 if layout in ("offset", "misaligned", "overlap") else 0
    if fill == "normal" and dt.kind in "fc":
        flat = (rng.standard_normal(n + extra) * 3).astype(dt)
    elif dt.kind == "b":
        flat = rng.integers(0, 2, n + extra).astype(dt)
    else:
        flat = np.frombuffer(rng.bytes((n + extra) * dt.itemsize), dtype=dt).copy()
    if layout == "misaligned":  # same values, data address one byte past alignment
        raw = np.zeros(flat.nbytes + 1, np.uint8)
        raw[1:] = flat.view(np.uint8)
        return np.frombuffer(raw.data, dtype=dt, count=n, offset=1).reshape(base_shape)
    if layout == "overlap" and shape:  # rows overlap: stride of one element for every dim
        return np.lib.stride_tricks.as_strided(flat, shape=shape, strides=(dt.itemsize,) * len(shape))
    array = flat[extra:].reshape(base_shape)
    if layout == "T":
        return array.T
    if layout == "step" and shape:
        return array[..., ::2]
    if layout == "neg" and shape:
        return array[..., ::-1]
    if layout == "readonly":
        array.flags.writeable = False
    if layout == "memmap":  # memory the process cannot write
        size = max(array.nbytes, 1)
        f = tempfile.TemporaryFile()
        f.write(array.tobytes() or b"\0")
        f.flush()
        return np.frombuffer(mmap.mmap(f.fileno(), size, prot=mmap.PROT_READ), dtype=dt,
                             count=array.size).reshape(array.shape)
    return array


def _torch(dtype: str, shape: tuple, device: str, layout: str, fill: str, seed: int):
    dt = getattr(torch, dtype)
    base_shape = tuple(reversed(shape)) if layout == "T" else shape
    if layout == "step" and shape:
        base_shape = shape[:-1] + (2 * shape[-1],)
    n = int(np.prod(base_shape, dtype=np.int64)) if base_shape else 1
    if n > 2**22 and device != "meta":
        raise ValueError(f"shape {shape} is too large to fuzz with")
    if device == "meta" or n == 0:
        t = torch.empty(base_shape, dtype=dt, device=device)
    else:
        gen = torch.Generator().manual_seed(seed)
        if fill == "normal" and (dt.is_floating_point or dt.is_complex) and dt.itemsize >= 2:
            t = (torch.randn(n + 1, generator=gen, dtype=torch.float64) * 3).to(dt)
        elif dt == torch.bool:
            t = torch.randint(0, 2, (n + 1,), generator=gen).bool()
        else:
            raw = torch.randint(0, 256, ((n + 1) * dt.itemsize,), dtype=torch.uint8, generator=gen)
            t = raw.view(dt) if dt.itemsize else raw
        t = t[1:] if layout == "offset" else t[:n]
        t = t.reshape(base_shape)
    if layout == "T":
        return t.permute(*reversed(range(t.ndim)))
    if layout == "step" and shape:
        return t[..., ::2]
    if layout == "overlap" and shape and t.numel():
        return t.flatten().as_strided(shape, (1,) * len(shape))
    if layout == "expand" and shape:
        return t.flatten()[:1].expand(shape) if t.numel() else t
    return t


def _like(args: list, spec: tuple, how: str):
    src = args[spec[1]]
    if how == "same":
        return src
    if how == "row" and getattr(src, "ndim", 0) and src.shape[-1] > 2**22:
        raise ValueError("a row this long is too large to fuzz with")
    if isinstance(src, np.ndarray):
        if how == "row":
            return np.ascontiguousarray(np.ones(src.shape[-1:] or (1,), src.dtype))
        out = np.zeros(src.shape, np.float64 if how == "cast" else src.dtype)
        return out
    if isinstance(src, torch.Tensor):
        if how == "row":
            return torch.ones(src.shape[-1:] or (1,), dtype=src.dtype, device=src.device)
        return torch.zeros(src.shape, dtype=torch.float64 if how == "cast" else src.dtype, device=src.device)
    return src


def _callback(how: str):
    """A Python function an export may call back with a size n."""
    def callback(*args):
        n = int(args[0]) if args and isinstance(args[0], int) and 0 <= args[0] < 2**20 else 1
        if how == "np_int64":
            return np.zeros(n, np.int64)
        if how == "torch_int64":
            return torch.zeros(n, dtype=torch.int64)
        if how == "np_float32":
            return np.zeros(n, np.float32)
        if how == "np_wrong_length":
            return np.zeros(n + 1, np.int64)
        if how == "np_misaligned":
            return np.frombuffer(np.zeros(8 * n + 1, np.uint8).data, np.int64, count=n, offset=1)
        if how == "raises":
            raise KeyError("raised by the callback")
        if how == "count":
            return len(args)
        return None
    return callback


def fault(t, how: str, probe):
    """A tensor like ``t`` (a torch CPU tensor of an export's valid sample) with one thing
    wrong (cases.TENSOR_FAULTS): its dtype, layout, size, alignment, writability, framework
    or device."""
    if not isinstance(t, torch.Tensor):
        raise ValueError(f"argument is not a tensor: {type(t).__name__}")
    if how in ("float64", "int32", "float16", "bool", "complex64"):
        return t.to(getattr(torch, how))
    if how == "strided":  # every other element of a tensor twice as long
        wide = torch.zeros(t.shape[:-1] + (2 * t.shape[-1],) if t.ndim else (2,), dtype=t.dtype)
        wide[..., ::2] = t
        return wide[..., ::2] if t.ndim else wide[::2].reshape(())
    if how == "transposed":  # the same shape and values, column-major
        if t.ndim < 2:
            raise ValueError("a tensor of fewer than 2 dimensions has no transpose")
        return t.T.contiguous().T
    if how == "overlap":  # rows that overlap: a stride of one element in every dimension
        if t.ndim < 2:
            raise ValueError("a tensor of fewer than 2 dimensions has no rows to overlap")
        return t.contiguous().flatten().clone().as_strided(t.shape, (1,) * t.ndim)
    if how == "expand":  # every element at one address (strides 0)
        if t.ndim == 0:
            raise ValueError("a 0-d tensor has no dimension to expand")
        return t.flatten()[:1].clone().expand(t.shape)
    if how == "empty":  # the same rank, no element
        return torch.empty((0,) + tuple(t.shape[1:]), dtype=t.dtype)
    if how == "0d":
        return t.flatten()[0].clone() if t.numel() else torch.zeros((), dtype=t.dtype)
    if how == "huge_empty":  # sizes that overflow 32 bits, no element
        return torch.empty((0, 2**40) + tuple(t.shape[1:]), dtype=t.dtype)
    if how == "misaligned":  # the same values one byte past the data's alignment
        if _numpy_dtype(t.dtype) is None:
            return _raw_like(t, probe, 1, 0)
        raw = np.zeros(t.numel() * t.element_size() + 1, np.uint8)
        raw[1:] = t.contiguous().flatten().view(torch.uint8).numpy()
        return np.frombuffer(raw.data, dtype=_numpy_dtype(t.dtype), count=t.numel(), offset=1).reshape(t.shape)
    if how == "byte_offset":  # the same values, one element past DLPack's data pointer
        raw = _raw_like(t, probe, t.element_size(), 0)
        torch.from_dlpack(raw).copy_(t)  # torch reads the first element at data + byte_offset
        return raw
    if how == "readonly":
        if _numpy_dtype(t.dtype) is None:
            raise ValueError(f"numpy has no {t.dtype}")
        array = t.numpy().copy()
        array.flags.writeable = False
        return array
    if how == "numpy":  # valid, but no framework allocator is set during the call
        if _numpy_dtype(t.dtype) is None:
            raise ValueError(f"numpy has no {t.dtype}")
        return t.numpy().copy()
    if how == "meta":
        return torch.empty(t.shape, dtype=t.dtype, device="meta")
    if how in ("fake_cuda", "ext_dev"):  # CPU memory labelled as another device's
        device = 2 if how == "fake_cuda" else 12
        if device in _GPU_TYPES and torch.cuda.is_available():
            raise ValueError("no fake GPU tensors where a GPU is present")
        return _raw_like(t, probe, 0, device)
    raise ValueError(f"unknown tensor fault {how!r}")


def _raw_like(t, probe, byte_offset: int, device: int):
    """A probe tensor of t's shape and dtype (zeros), at a byte offset or on another device."""
    dt = tvm_ffi.dtype(str(t.dtype).removeprefix("torch."))
    return probe.make_tensor(tvm_ffi.Shape(tuple(t.shape)), None, dt.type_code, dt.bits, dt.lanes,
                             device or 1, 0, byte_offset)


def _numpy_dtype(dtype):
    try:
        return torch.empty(0, dtype=dtype).numpy().dtype
    except Exception:
        return None


def build(spec: tuple, args: list, probe, valid: list | None = None):
    """One argument from its description; ``args`` holds the arguments built before it,
    ``valid`` the export's valid sample (for ``("valid", i)`` and ``("bad", i, how)``)."""
    kind = spec[0]
    if kind in ("valid", "bad"):
        if valid is None or spec[1] >= len(valid):
            raise ValueError("no valid sample for this argument")
        return valid[spec[1]] if kind == "valid" else fault(valid[spec[1]], spec[2], probe)
    if kind == "np":
        return _numpy(*spec[1:])
    if kind == "torch":
        return _torch(*spec[1:])
    if kind == "raw":
        code, bits, lanes, shape, strides, dev, dev_id, offset = spec[1:]
        if dev in _GPU_TYPES and torch.cuda.is_available():
            # CPU memory labelled as a GPU's would reach a real kernel launch here.
            raise ValueError("no fake GPU tensors where a GPU is present")
        return probe.make_tensor(tvm_ffi.Shape(shape), None if strides is None else tvm_ffi.Shape(strides),
                                 code, bits, lanes, dev, dev_id, offset)
    if kind == "like":
        return _like(args, spec, spec[2])
    if kind in ("int", "bool", "str"):
        return spec[1]
    if kind == "float":
        return _float(spec[1])
    if kind == "none":
        return None
    if kind == "complex":
        return complex(spec[1], spec[2])
    if kind == "bytes":
        return np.random.default_rng(spec[2]).bytes(spec[1])
    if kind == "npscalar":
        return np.dtype(spec[1]).type(spec[2])
    if kind == "shape":
        return tvm_ffi.Shape(spec[1])
    if kind == "dtype":
        return tvm_ffi.dtype(spec[1])
    if kind == "device":
        return tvm_ffi.device(spec[1])
    if kind in ("list", "tuple"):
        items = [build(s, args, probe) for s in spec[1]]
        return items if kind == "list" else tuple(items)
    if kind == "object":
        return object()
    if kind == "dict":
        return {"a": 1}
    if kind == "callable":
        return _callback(spec[1])
    if kind == "ffi_function":
        return tvm_ffi.convert(lambda *a: None)
    raise ValueError(f"unknown argument kind {kind!r}")


def build_all(specs: tuple, probe, valid: list | None = None) -> list:
    args: list = []
    for spec in specs:
        args.append(build(spec, args, probe, valid))
    return args
