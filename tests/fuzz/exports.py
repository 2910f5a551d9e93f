"""Which libraries and exports the fuzz calls, and what their signatures say."""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

#: The one export allowed to end the process: recipe 04's demonstration that a
#: thrown non-std::exception value (`throw 42`) aborts (throw_int.cc).
MAY_ABORT = {"throw_int_demo"}

_SYMBOL = re.compile(r"^__tvm_ffi_([A-Za-z][A-Za-z0-9_]*)$")
_SIGNATURE = re.compile(r"`(\w+)\((.*)\) -> (.*)`")


def exports(library: Path) -> list[str]:
    """Export names of a library: its dynamic symbols `__tvm_ffi_<name>`."""
    out = subprocess.run(["nm", "-D", "--defined-only", str(library)], capture_output=True,
                         text=True, check=True).stdout
    names = (_SYMBOL.match(line.split()[-1]) for line in out.splitlines() if line.strip())
    return sorted(m.group(1) for m in names if m)


def parse_signature(message: str) -> list[str] | None:
    """Parameter types from tvm_ffi's arity error, e.g. ['DLTensor*', 'float']."""
    m = _SIGNATURE.search(message)
    if m is None:
        return None
    params = [p.split(": ", 1)[1] for p in _split(m.group(2))]
    return params


def _split(params: str) -> list[str]:
    """Split 'a: T, b: Map<K, V>' at top-level commas."""
    parts, depth, current = [], 0, ""
    for ch in params:
        depth += ch in "<([" and 1 or (ch in ">)]" and -1 or 0)
        if ch == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += ch
    return parts + [current.strip()] if current.strip() else parts


def kind_of(type_name: str) -> str:
    """The argument kind the fuzz draws for a parameter type."""
    t = type_name.replace(" ", "")
    if t.startswith("Optional<") and t.endswith(">"):  # None is drawn for any kind anyway
        return kind_of(t[len("Optional<"):-1])
    for prefix, kind in [("DLTensor", "tensor"), ("ffi.Tensor", "tensor"),
                         ("float", "float"), ("int", "int"), ("bool", "bool"), ("bytes", "bytes"),
                         ("str", "str"), ("std::string", "str"), ("Device", "device"),
                         ("ffi.Shape", "shape"), ("DataType", "dtype"), ("ffi.Function", "function")]:
        if t.startswith(prefix):
            return kind
    return "any"


@dataclass(frozen=True)
class Target:
    """One export of one library, with its parameter kinds."""

    library: Path
    name: str
    kinds: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.name} ({self.library.name})"


def signature_types(func) -> tuple[str, ...]:
    """Parameter types of a loaded export, from the TypeError of a call with 40 arguments;
    three of type Any for an export written against the C ABI, which states none."""
    try:
        func(*([None] * 40))
    except TypeError as e:
        params = parse_signature(str(e))
        if params is not None:
            return tuple(params)
    except Exception:
        pass
    return ("Any",) * 3


def signature_of(func) -> tuple[str, ...]:
    """Parameter kinds of a loaded export (see signature_types)."""
    return tuple(kind_of(p) for p in signature_types(func))
