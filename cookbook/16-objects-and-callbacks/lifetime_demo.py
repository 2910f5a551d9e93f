"""Object lifetime against library lifetime, each case in a process of its own
(a crash ends that process, not the caller)."""

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

# [unload_script.begin]
UNLOAD = """
import gc, sys, tvm_ffi
path, keep = sys.argv[1], sys.argv[2] == "True"
mod = tvm_ffi.load_module(path, keep_module_alive=keep)
RunningStats = tvm_ffi.register_object("cookbook.RunningStats")(
    type("RunningStats", (tvm_ffi.Object,), {}))
stats = RunningStats(4)  # its destructor is code in the library
del mod
gc.collect()
print("library still mapped:", any(path in line for line in open("/proc/self/maps")), flush=True)
del stats
print("object freed", flush=True)
"""
# [unload_script.end]

# [two_copies_script.begin]
TWO_COPIES = """
import sys, tvm_ffi
for path in sys.argv[1:]:
    tvm_ffi.load_module(path)  # loading runs the library's registration
    print("loaded", path.rsplit("/", 1)[-1], flush=True)
"""
# [two_copies_script.end]


def run(script: str, *args: str | Path) -> subprocess.CompletedProcess:
    """Run one of the scripts above in a new Python process."""
    return subprocess.run([sys.executable, "-c", script, *map(str, args)],
                          capture_output=True, text=True, timeout=120)


def gnu_unique_symbols(library: str | Path) -> list[str]:
    """The GNU unique symbols the library defines (GCC makes some template statics unique)."""
    symbols = subprocess.run(["readelf", "--dyn-syms", "-W", str(library)],
                             capture_output=True, text=True, check=True).stdout
    return [line.split()[-1] for line in symbols.splitlines() if " UNIQUE " in line and " UND " not in line]


# [loader_account.begin]
LOAD = "import sys, tvm_ffi; tvm_ffi.load_module(sys.argv[1])"


def loader_account(library: str | Path, *load_first: str | Path) -> tuple[bool, set[str]]:
    """Load the library (after ``load_first``) with glibc's LD_DEBUG=bindings and read what the
    loader did: whether it marked the library NODELETE (never unloaded) for a unique symbol,
    and the libraries its unique symbols were bound to (each is one copy per process)."""
    name, unique = Path(library).name, gnu_unique_symbols(library)
    script = "".join(f"import ctypes; ctypes.CDLL({str(p)!r})\n" for p in load_first) + LOAD
    with tempfile.TemporaryDirectory() as folder:
        env = dict(os.environ, LD_DEBUG="bindings", LD_DEBUG_OUTPUT=f"{folder}/ld")
        subprocess.run([sys.executable, "-c", script, str(library)], env=env, check=True, capture_output=True, timeout=120)
        log = "".join(p.read_text(errors="replace") for p in Path(folder).glob("ld.*"))
    pinned = re.search(rf"marking (\S*/)?{re.escape(name)} \[\d+\] as NODELETE due to unique symbol", log)
    bound = re.findall(rf"binding file (?:\S*/)?{re.escape(name)} \[\d+\] to (?:\S*/)?(\S+) \[\d+\]: "
                       rf"normal symbol `({'|'.join(map(re.escape, unique)) or '$^'})'", log)
    return pinned is not None, {definer for definer, _ in bound}
# [loader_account.end]


def outcome(done: subprocess.CompletedProcess) -> str:
    """'exit status N' or 'killed by SIGNAME'."""
    import signal

    if done.returncode < 0:
        return f"killed by {signal.Signals(-done.returncode).name}"
    return f"exit status {done.returncode}"
