"""Object lifetime against library lifetime, each case in a process of its own
(a crash ends that process, not the caller)."""

import subprocess
import sys
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


def has_gnu_unique_symbols(library: str | Path) -> bool:
    """True when the library defines a GNU unique symbol, which glibc never unloads."""
    symbols = subprocess.run(["readelf", "--dyn-syms", "-W", str(library)],
                             capture_output=True, text=True, check=True).stdout
    return any(" UNIQUE " in line and " UND " not in line for line in symbols.splitlines())


def outcome(done: subprocess.CompletedProcess) -> str:
    """'exit status N' or 'killed by SIGNAME'."""
    import signal

    if done.returncode < 0:
        return f"killed by {signal.Signals(-done.returncode).name}"
    return f"exit status {done.returncode}"
