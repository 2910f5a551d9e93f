"""Every way this recipe calls the same functions, and the timing harness.

The notebook and the test both import this file, so what the page measures is
what the test checks.
"""

from __future__ import annotations

import ctypes
import importlib
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import torch
import tvm_ffi
from torch.utils import benchmark

# Built by the README's commands (cmake -S . -B build) next to this file.
HERE = Path(__file__).resolve().parent
BUILD = HERE / "build"
ARITIES = (1, 3, 8)
ADD_SIZE = 1024


# [torch_extension_build.begin]
def build_torch_extension():
    """Compile overhead_torch.cpp once into torch_ext/ of the build folder; later calls reuse it."""
    from torch.utils.cpp_extension import load

    out = BUILD / "torch_ext"
    out.mkdir(parents=True, exist_ok=True)
    ext = load(name="cookbook_overhead_torch", sources=[str(HERE / "overhead_torch.cpp")],
               build_directory=str(out), extra_cflags=["-O2"], verbose=False)
    # Record what was compiled, like every CMake build in the cookbook does.
    compdb = subprocess.run(["ninja", "-C", str(out), "-t", "compdb"], capture_output=True, text=True)
    if compdb.returncode == 0:
        (out / "compile_commands.json").write_text(compdb.stdout)
    return ext
# [torch_extension_build.end]


def load_nanobind():
    """The nanobind module from the build folder, or None when CMake skipped it."""
    if not list(BUILD.glob("overhead_nb*.so")):
        return None
    sys.path.insert(0, str(BUILD))
    try:
        return importlib.import_module("overhead_nb")
    finally:
        sys.path.remove(str(BUILD))


# [custom_op_wrappers.begin]
def custom_op_wrappers(mod):
    """Python torch.library.custom_op wrappers around the tvm_ffi functions (as in recipe 12)."""
    ops = {}
    for n in ARITIES:
        schema = "(" + ", ".join(f"Tensor a{i}" for i in range(n)) + ") -> ()"
        ops[n] = torch.library.custom_op(f"cookbook_overhead_py::noop{n}", getattr(mod, f"overhead_noop{n}_cpu"),
                                         mutates_args=(), schema=schema)
    ops["add"] = torch.library.custom_op("cookbook_overhead_py::add", mod.overhead_add_cpu,
                                         mutates_args=("out",), schema="(Tensor a, Tensor b, Tensor(a!) out) -> ()")
    return ops
# [custom_op_wrappers.end]


def _ctypes_library():
    lib = ctypes.CDLL(str(BUILD / "liboverhead_ctypes.so"))
    signatures = {f"overhead_c_noop{n}": [ctypes.c_void_p] * n for n in ARITIES}
    signatures["overhead_c_add"] = [ctypes.c_void_p] * 3 + [ctypes.c_int64]
    for name, argtypes in signatures.items():
        getattr(lib, name).argtypes = argtypes
        getattr(lib, name).restype = None  # void, not ctypes' default int
    return lib


# [dlpack_only.begin]
class DLPackOnly:
    """A torch tensor seen through the DLPack protocol alone.

    The class has ``__dlpack__`` but no ``__dlpack_c_exchange_api__``, so tvm_ffi takes it
    as it takes any DLPack producer: one Python-level ``__dlpack__`` call per argument.
    """

    __slots__ = ("tensor",)

    def __init__(self, tensor):
        self.tensor = tensor

    def __dlpack__(self, **kwargs):
        return self.tensor.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.tensor.__dlpack_device__()
# [dlpack_only.end]


# [callers_table.begin]
def callers(case, mod, ext, nb_mod, ops, lib):
    """name -> (function, arguments) for one case: an arity (1, 3, 8) or "add"."""
    if case == "add":
        a, b = torch.randn(ADD_SIZE), torch.randn(ADD_SIZE)
        torch_args = [a, b, torch.zeros(ADD_SIZE)]
        names = ("overhead_add_cpu", "add", torch.ops.cookbook_overhead.add, ops["add"], lib.overhead_c_add)
    else:
        torch_args = [torch.zeros(4) for _ in range(case)]
        names = (f"overhead_noop{case}_cpu", f"noop{case}", getattr(torch.ops.cookbook_overhead, f"noop{case}"),
                 ops[case], getattr(lib, f"overhead_c_noop{case}"))
    ffi_name, ext_name, torch_op, custom_op, c_func = names
    pointers = [t.data_ptr() for t in torch_args] + ([ADD_SIZE] if case == "add" else [])
    table = {
        "tvm_ffi + tvm_ffi.Tensor": (getattr(mod, ffi_name), [tvm_ffi.from_dlpack(t) for t in torch_args]),
        "tvm_ffi + torch.Tensor": (getattr(mod, ffi_name), torch_args),
        "tvm_ffi + __dlpack__ only": (getattr(mod, ffi_name), [DLPackOnly(t) for t in torch_args]),
        "tvm_ffi + numpy": (getattr(mod, ffi_name), [t.numpy() for t in torch_args]),
        "pybind11 extension": (getattr(ext, ext_name), torch_args),
        "TORCH_LIBRARY via torch.ops": (torch_op, torch_args),
        "torch.library.custom_op": (custom_op, torch_args),
        "ctypes, raw pointers": (c_func, pointers),
    }
    if nb_mod is not None:
        table["nanobind + torch.Tensor"] = (getattr(nb_mod, ext_name), torch_args)
        table["nanobind + numpy"] = (getattr(nb_mod, ext_name), [t.numpy() for t in torch_args])
    return table
# [callers_table.end]


# [timing_harness.begin]
def ns_per_call(fn, args, repeat=7, seconds=0.01):
    """Minimum over `repeat` runs of N back-to-back calls, in ns per call.

    N is chosen so that one run takes about `seconds`.
    """
    names = [f"a{i}" for i in range(len(args))]
    stmt = f"fn({', '.join(names)})"  # spelled out: no *args unpacking in the loop
    timer = benchmark.Timer(stmt, globals={"fn": fn, **dict(zip(names, args))})
    probe = timer.timeit(50).median  # seconds per call
    number = max(50, int(seconds / max(probe, 1e-9)))
    return min(timer.timeit(number).median for _ in range(repeat)) * 1e9


def measure(table, repeat=7):
    """ns per call for every caller of one case, all measured in the same run."""
    return {name: ns_per_call(fn, args, repeat) for name, (fn, args) in table.items()}
# [timing_harness.end]


def without_exchange_api(arity=3):
    """ns per call of the no-op with tvm_ffi.Tensor and with torch.Tensor arguments, measured
    in a fresh process that tells tvm_ffi to ignore torch's exchange API."""
    code = (f"import overhead_callers as oc, torch, tvm_ffi\n"
            f"mod = tvm_ffi.load_module(str(oc.BUILD / 'liboverhead.so'))\n"
            f"args = [torch.zeros(4) for _ in range({arity})]\n"
            f"fn = mod.overhead_noop{arity}_cpu\n"
            f"print(oc.ns_per_call(fn, [tvm_ffi.from_dlpack(t) for t in args]), oc.ns_per_call(fn, args))")
    env = {**os.environ, "TVM_FFI_SKIP_DLPACK_C_EXCHANGE_API": "1"}
    done = subprocess.run([sys.executable, "-c", code], cwd=HERE, env=env, capture_output=True, text=True,
                          check=True)
    baseline, torch_tensors = map(float, done.stdout.split())
    return {"tvm_ffi + tvm_ffi.Tensor": baseline, "tvm_ffi + torch.Tensor": torch_tensors}


def load_all():
    """Build what is not built yet and load every caller's library."""
    mod = tvm_ffi.load_module(str(BUILD / "liboverhead.so"))
    ext = build_torch_extension()
    return mod, ext, load_nanobind(), custom_op_wrappers(mod), _ctypes_library()
