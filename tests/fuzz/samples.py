"""A valid argument list for each export, for the thread and repetition tests.

Built from the signature the export reports; the few exports that need more
than "tensors of one shape" have an entry in SPECIAL. Every call uses torch CPU
tensors (the framework allocator then serves exports that allocate).
"""

from __future__ import annotations

import itertools

import torch
import tvm_ffi

#: Arguments for exports a generic argument list does not fit (n: tensor length).
SPECIAL = {
    "rms_norm_cpu": lambda g: [torch.randn(4, 16, generator=g), torch.randn(16, generator=g),
                               torch.empty(4, 16), 1e-6],
    "tensor_data_address_into_cpu": lambda g: [torch.randn(8, generator=g), torch.zeros(1, dtype=torch.int64)],
    "checked_add_cpu": lambda g: [torch.randn(4, 16, generator=g), torch.randn(4, 16, generator=g),
                                  torch.empty(4, 16)],
    "ring_shift_cpu": lambda g: [torch.randn(4, 16, generator=g), torch.empty(4, 16)],
    "gemm_cpu": lambda g: [torch.randn(4, 16, generator=g), torch.randn(16, 8, generator=g), torch.empty(4, 8)],
    "throw_int_demo": lambda g: [0],  # any other value ends the process, by design
    "std_exception_demo_cpu": lambda g: [0],
    "check_workspace_cpu": lambda g: [1024],
    "icheck_demo_cpu": lambda g: [7],
    "alloc_dlpack_round_trip_cpu": lambda g: [torch.randn(8, generator=g), True],
    "env_stream_cpu": lambda g: [tvm_ffi.device("cpu:0")],
    "nonzero_indices_cpu": lambda g: [torch.randn(32, generator=g).clamp(min=0),
                                      lambda n: torch.empty(n, dtype=torch.int64)],
}

_GENERIC = {
    "float": lambda g: 1.5, "int": lambda g: 3, "bool": lambda g: True, "str": lambda g: "x",
    "bytes": lambda g: b"\0" * 8, "device": lambda g: tvm_ffi.device("cpu:0"),
    "shape": lambda g: tvm_ffi.Shape((2, 3)), "dtype": lambda g: tvm_ffi.dtype("float32"),
    "function": lambda g: (lambda *a: None), "any": lambda g: None,
}


#: Shapes tried for each tensor parameter, in this order, until the export accepts a call.
SHAPES = [(64,), (4, 16), (16,), (4,), (4, 128), (4, 256), (1,)]


def sample_args(name: str, kinds: tuple[str, ...], seed: int, shapes=None) -> list:
    """Arguments for one call; different seeds give different data of the same shapes."""
    g = torch.Generator().manual_seed(seed)
    if name in SPECIAL:
        return SPECIAL[name](g)
    shapes = iter(shapes or [(64,)] * len(kinds))
    return [torch.randn(next(shapes), generator=g) if k == "tensor" else _GENERIC[k](g) for k in kinds]


def find_shapes(name: str, func, kinds: tuple[str, ...], tries: int = 20000):
    """Shapes for the tensor parameters that the export accepts, or None (then every call of
    the thread and repetition tests goes through the export's validation only)."""
    count = sum(k == "tensor" for k in kinds)
    candidates = [[(64,)] * count] + list(itertools.islice(itertools.product(SHAPES, repeat=count), tries))
    if name in SPECIAL:
        candidates = [None]
    for shapes in candidates:
        try:
            func(*sample_args(name, kinds, 0, shapes))
        except Exception:
            continue
        return shapes or []
    return None


def comparable(value):
    """A value two calls' results can be compared by (tensors as lists, maps as dicts)."""
    if isinstance(value, torch.Tensor):
        return ("tensor", value.dtype, value.tolist())
    if hasattr(value, "__dlpack__"):
        return comparable(torch.from_dlpack(value))
    if isinstance(value, tvm_ffi.Function):
        return "function"
    if hasattr(value, "items"):
        return dict(value.items())
    return value
