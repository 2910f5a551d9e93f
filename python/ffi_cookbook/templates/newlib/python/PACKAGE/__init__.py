"""@name@: kernels compiled into lib@name@.so, which ships inside this package.

Every kernel the library exports is an attribute of the package::

    import @name@
    @name@.@name@_scale_cpu(x, y, 2.0)   # any DLPack tensors: NumPy, torch, JAX ...
"""

from __future__ import annotations

from pathlib import Path

import tvm_ffi

__all__ = ["library_path", "load", "variants"]

_LIBRARY = Path(__file__).resolve().parent / "lib@name@.so"
_module = None


def library_path() -> Path:
    """The shared library this package loads."""
    return _LIBRARY


def load() -> tvm_ffi.Module:
    """Load the library once and return it."""
    global _module
    if _module is None:
        if not _LIBRARY.is_file():
            raise FileNotFoundError(f"{_LIBRARY} is missing: install the package with `pip install .`")
        # load_module needs a path with a slash; an absolute path has one.
        _module = tvm_ffi.load_module(str(_LIBRARY))
    return _module


def variants() -> list[str]:
    """Device variants compiled in: ["cpu"] or ["cpu", "cuda"]."""
    return str(load().@name@_variants()).split(",")


def __getattr__(name: str):
    """Kernels by name, e.g. ``@name@.@name@_scale_cpu``; AttributeError for unknown names."""
    if name.startswith("__"):
        raise AttributeError(name)
    return getattr(load(), name)
