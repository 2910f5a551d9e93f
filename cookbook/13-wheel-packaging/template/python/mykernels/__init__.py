"""mykernels: kernels compiled into libmykernels.so, which ships inside this package."""

from pathlib import Path

import tvm_ffi

__all__ = ["library_path", "scale"]

_LIBRARY = Path(__file__).resolve().parent / "libmykernels.so"
# load_module needs a path with a slash; an absolute path has one.
_module = tvm_ffi.load_module(str(_LIBRARY))


def library_path() -> Path:
    """The shared library this package loaded."""
    return _LIBRARY


def scale(x, y, alpha: float) -> None:
    """Write ``alpha * x`` into ``y``: contiguous float32 CPU tensors of one shape, any framework."""
    _module.mykernels_scale(x, y, alpha)
