"""ffi_cookbook: the TVM FFI Kernel Cookbook's recipe library, its catalog and the `ffi-cookbook` CLI.

``ffi_cookbook.load()`` loads the library built from ``runtime/`` (every
recipe's kernels in one shared object) and ``variants()`` says which device
variants it was built with. The package holds what a pip user needs: this, the recipes
(``catalog``: each recipe's self-contained folder, made when the wheel was built), the CLI
(``get``, ``new``, ``add``, ``list``) and a CMake package for the helper headers.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import tvm_ffi

__all__ = ["library_path", "load", "variants"]

_PACKAGE_DIR = Path(__file__).resolve().parent
_LIBRARY_NAME = "libffi_cookbook.so"
_module = None


def library_path() -> Path:
    """Where the recipe library is: ``$FFI_COOKBOOK_LIBRARY``, the wheel, or ``build/runtime``."""
    candidates = []
    if os.environ.get("FFI_COOKBOOK_LIBRARY"):
        candidates.append(Path(os.environ["FFI_COOKBOOK_LIBRARY"]))
    candidates.append(_PACKAGE_DIR / "lib" / _LIBRARY_NAME)
    candidates.append(_PACKAGE_DIR.parents[1] / "build" / "runtime" / _LIBRARY_NAME)
    for path in candidates:
        if path.is_file():
            return path.resolve()
    tried = ", ".join(str(p) for p in candidates)
    raise FileNotFoundError(
        f"the ffi_cookbook library is not built (looked at: {tried}); "
        "run `make runtime` in the checkout or `pip install .`"
    )


def load() -> tvm_ffi.Module:
    """Load the recipe library once and return it (later calls return the same module)."""
    global _module
    if _module is None:
        import tvm_ffi  # here, not at import: the catalog and the CLI's `get`/`list` need no torch

        # load_module needs a path with a slash; an absolute path has one.
        _module = tvm_ffi.load_module(str(library_path()))
    return _module


def variants() -> list[str]:
    """Device variants compiled into the library: a subset of ``["cpu", "cuda", "nvshmem"]``."""
    return str(load().ffi_cookbook_variants()).split(",")
