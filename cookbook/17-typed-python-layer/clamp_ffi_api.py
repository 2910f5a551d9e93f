"""The raw functions of libscaled_clamp.so, with stubs written by tvm-ffi-stubgen.

Everything between a ``tvm-ffi-stubgen(begin)`` and ``tvm-ffi-stubgen(end)`` line
is generated from the signatures the loaded library registered; regenerate with

    tvm-ffi-stubgen --dlls build/libscaled_clamp.so clamp_ffi_api.py

and ``--check`` tells whether this file is up to date. The stubs type tensors as
``DLPackTensor`` (the ``ty-map`` line): anything with ``__dlpack_device__``,
which is what tvm_ffi accepts, instead of only ``tvm_ffi.Tensor``.
"""

# tvm-ffi-stubgen(begin): import-section
# fmt: off
# isort: off
from __future__ import annotations
from tvm_ffi import init_ffi_api as _FFI_INIT_FUNC
from typing import TYPE_CHECKING
if TYPE_CHECKING:
    from dlpack_tensor import DLPackTensor
# isort: on
# fmt: on
# tvm-ffi-stubgen(end)
from pathlib import Path

import tvm_ffi

# [clamp_ffi_load.begin]
# tvm-ffi-stubgen(ty-map): Tensor -> dlpack_tensor.DLPackTensor
# Loading the library registers cookbook_typed.scaled_clamp; the block below binds it here.
LIB = tvm_ffi.load_module(str(Path(__file__).resolve().parent / "build" / "libscaled_clamp.so"))
# [clamp_ffi_load.end]

# [clamp_ffi_stub.begin]
# tvm-ffi-stubgen(begin): global/cookbook_typed
# fmt: off
_FFI_INIT_FUNC("cookbook_typed", __name__)
if TYPE_CHECKING:
    def scaled_clamp(_0: DLPackTensor, _1: DLPackTensor, _2: float, _3: float | None, _4: float | None, /) -> None: ...
# fmt: on
# tvm-ffi-stubgen(end)
# [clamp_ffi_stub.end]
