"""The child process: draws cases with hypothesis, calls the export, reports each outcome.

Runs as ``python -m tests.fuzz.worker`` with the repository root as working
directory. Messages are pickled frames: requests on stdin, replies on the
original stdout (the export's own output goes to stderr). Before each call the
worker announces the case, so when the call kills the process the parent
still knows which arguments did it.
"""

from __future__ import annotations

import faulthandler
import os
import pickle
import resource
import signal
import struct
import sys
import traceback
import warnings


def _read_exact(fd: int, size: int) -> bytes | None:
    """Exactly ``size`` bytes from a descriptor (unbuffered, so select() sees what is left)."""
    data = b""
    while len(data) < size:
        chunk = os.read(fd, size - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def read_frame(stream):
    header = _read_exact(stream.fileno(), 4)
    if header is None:
        return None
    (size,) = struct.unpack("<I", header)
    data = _read_exact(stream.fileno(), size)
    return None if data is None else pickle.loads(data)


def write_frame(stream, message) -> None:
    data = pickle.dumps(message)
    stream.write(struct.pack("<I", len(data)) + data)
    stream.flush()


class Caller:
    """Builds arguments, calls an export, and judges the outcome."""

    def __init__(self, probe_path: str | None):
        import tvm_ffi

        from tests.fuzz.materialize import build_all
        from tests.fuzz.references import REFERENCES, as_torch

        self.build_all, self.references, self.as_torch = build_all, REFERENCES, as_torch
        self.probe = tvm_ffi.load_module(probe_path) if probe_path else None
        self.modules: dict[str, object] = {}
        self.shapes: dict[tuple[str, str], tuple] = {}
        self.load = tvm_ffi.load_module

    def function(self, library: str, name: str):
        if library not in self.modules:
            self.modules[library] = self.load(library)
        return getattr(self.modules[library], name)

    def valid_sample(self, library: str, name: str) -> list:
        """A fresh valid argument list for an export (tests/fuzz/samples.py): its kinds
        from its signature, the tensor shapes it accepts found once per export."""
        from tests.fuzz.exports import kind_of, signature_types
        from tests.fuzz.samples import find_shapes, sample_args

        func = self.function(library, name)
        if (library, name) not in self.shapes:
            params = signature_types(func)
            kinds = tuple(kind_of(p) for p in params)
            self.shapes[library, name] = (kinds, find_shapes(name, func, kinds, tries=2000), params)
        kinds, shapes, _ = self.shapes[library, name]
        return sample_args(name, kinds, 0, shapes)

    def call(self, library: str, name: str, specs: tuple) -> tuple:
        func = self.function(library, name)
        try:
            valid = (self.valid_sample(library, name)
                     if _only_none_bad(specs) or any(s[0] in ("valid", "bad") for s in specs) else None)
            args = self.build_all(specs, self.probe, valid)
        except Exception as e:  # an input this machine's numpy/torch cannot make
            return ("unbuildable", f"{type(e).__name__}: {e}"[:300])
        reference = self.references.get(name)
        try:
            before = _snapshot(specs, args, self.as_torch) if reference else None
        except Exception:  # torch cannot copy some dtypes (uint7, ...): no reference then
            before = None
        try:
            result = func(*args)
        except Exception as e:
            if _only_none_bad(specs) and not isinstance(e, (TypeError, ValueError)):
                return ("wrong", f"None must raise TypeError or ValueError, not {type(e).__name__}: {e}"[:1500])
            return ("raised", type(e).__name__, str(e).split("\n")[0][:300])
        if _only_none_bad(specs):
            params, i = self.shapes[library, name][2], specs.index(("none",))
            param = params[i] if i < len(params) else "Any"
            if not param.startswith(("Optional<", "Any")):
                return ("wrong", f"None for a parameter of type {param} returned instead of raising")
        if before is not None:
            try:
                reference(before, [self.as_torch(a) for a in args], result)
            except Exception:
                return ("wrong", traceback.format_exc(limit=2)[-1500:])
        return ("returned", type(result).__name__)


def fuzz_job(caller: Caller, channel, job: dict) -> None:
    """Run one export's cases, announcing each before calling: the listed ``specs`` of the
    systematic pass, else ``cases`` drawn by hypothesis."""
    if "specs" in job:
        for specs in job["specs"]:
            write_frame(channel, ("case", specs))
            write_frame(channel, ("outcome", caller.call(job["library"], job["name"], specs)))
        return
    # Hypothesis keeps a folder of its own; under the build root, not in the checkout.
    build_root = os.environ.get("FFI_COOKBOOK_BUILD_DIR") or os.path.join(os.getcwd(), "_build")
    os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", os.path.join(build_root, "hypothesis"))
    from hypothesis import HealthCheck, Phase, given, seed, settings

    from tests.fuzz.cases import arguments

    @settings(max_examples=job["cases"], database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @seed(job["seed"])
    @given(arguments(job["kinds"]))
    def one_case(specs):
        write_frame(channel, ("case", specs))
        write_frame(channel, ("outcome", caller.call(job["library"], job["name"], specs)))

    one_case()


def main() -> None:
    # Keep the protocol on a private descriptor; anything printed goes to stderr.
    channel = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    requests = os.fdopen(0, "rb")
    config = read_frame(requests)
    faulthandler.enable()  # a fatal signal prints the Python stack to stderr
    faulthandler.register(signal.SIGUSR1, all_threads=True)  # the parent asks on a hang
    warnings.simplefilter("ignore")  # numpy and torch warn about the odd inputs drawn here
    caller = Caller(config.get("probe"))  # imports numpy, torch, tvm_ffi: seconds
    _limit_memory()
    write_frame(channel, ("ready", os.getpid()))
    while True:
        request = read_frame(requests)
        if request is None or request[0] == "exit":
            break
        if request[0] == "call":
            write_frame(channel, ("outcome", caller.call(*request[1:])))
        elif request[0] == "fuzz":
            fuzz_job(caller, channel, request[1])
            write_frame(channel, ("done",))


def _limit_memory(spare: int = 6 << 30) -> None:
    """Cap the address space a few GiB above what the imports took, so a huge
    allocation fails (and must raise) instead of exhausting the machine.
    Not under AddressSanitizer, whose shadow memory reserves terabytes."""
    with open("/proc/self/maps") as f:
        if "libasan" in f.read():
            return
    with open("/proc/self/status") as f:
        size = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
    resource.setrlimit(resource.RLIMIT_AS, (size + spare, resource.RLIM_INFINITY))


def _only_none_bad(specs) -> bool:
    """A systematic case whose one bad argument is None (the others valid)."""
    return specs.count(("none",)) == 1 and all(s == ("none",) or s[0] == "valid" for s in specs)


def _snapshot(specs, args, as_torch):
    """Copies of the tensor arguments before the call; None when no reference applies.

    References hold for plain contiguous CPU tensors with finite values that do
    not share memory (an in-place call on aliased tensors legitimately differs).
    """
    import numpy as np
    import torch
    import tvm_ffi

    for spec in specs:
        kind = spec[0]
        if kind == "raw" or (kind == "like" and spec[2] == "same"):
            return None
        if kind == "bad" and spec[2] not in ("float64", "int32", "float16", "bool", "complex64", "empty",
                                             "0d", "numpy", "readonly", "byte_offset"):
            return None
        if kind == "np" and (spec[5] != "normal" or spec[3] not in ("c", "readonly")):
            return None
        if kind == "torch" and (spec[5] != "normal" or spec[4] != "c" or spec[3] != "cpu"):
            return None
    # A tvm_ffi.Tensor here is a probe tensor (the byte_offset fault): torch reads it at
    # data + byte_offset, where DLPack puts its first element.
    tensors = [as_torch(a) for a in args if isinstance(a, (np.ndarray, torch.Tensor, tvm_ffi.Tensor))]
    live = [_address(t) for t in tensors if _nbytes(t)]
    if len(set(live)) < len(live):
        return None
    return [as_torch(a).clone() if isinstance(a, (np.ndarray, torch.Tensor, tvm_ffi.Tensor)) else a
            for a in args]


def _address(t):
    import numpy as np

    return t.ctypes.data if isinstance(t, np.ndarray) else t.data_ptr()


def _nbytes(t):
    import numpy as np

    return t.nbytes if isinstance(t, np.ndarray) else t.numel() * t.element_size()


if __name__ == "__main__":
    sys.exit(main())
