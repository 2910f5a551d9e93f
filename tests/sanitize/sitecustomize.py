"""Give every Python process of the sanitizer run the sanitizer runtimes, and only Python.

``make test-sanitize`` puts this folder on PYTHONPATH and the runtimes in
``FFI_COOKBOOK_SANITIZER_PRELOAD``. A Python process started without them
restarts itself with them in LD_PRELOAD (the sanitized libraries it loads need
them first); once they are in, LD_PRELOAD is dropped from the environment, so
the compilers and build tools it runs do not inherit them (LeakSanitizer would
report their deliberate leaks and fail the builds).

GCC's UBSan runtime (libubsan) is a library of its own next to ASan's: beside
ASan it starts as a plug-in that never applies UBSAN_OPTIONS' log_path (only a
standalone UBSan does), so its reports would go to stderr, which pytest
captures and loses when halt_on_error ends the process. This module hands
libubsan the log_path itself, so its reports land in files too.

Each process also leaves, under FFI_COOKBOOK_SANITIZER_PROCESSES, a file named by its
pid holding the test that was running when it started (PYTEST_CURRENT_TEST, which a
test's children inherit): when LeakSanitizer's own tracer crashes at a process's exit,
the run knows which test to run again (see tests/sanitize/__main__.py).
"""

import os
import sys

_preload = os.environ.get("FFI_COOKBOOK_SANITIZER_PRELOAD")
if _preload:
    if os.environ.get("LD_PRELOAD") != _preload:
        with open("/proc/self/cmdline", "rb") as _f:
            _argv = [a.decode() for a in _f.read().split(b"\0")[:-1]]
        os.execve(sys.executable, _argv, dict(os.environ, LD_PRELOAD=_preload))
    del os.environ["LD_PRELOAD"]
    _processes = os.environ.get("FFI_COOKBOOK_SANITIZER_PROCESSES")
    if _processes and os.path.isdir(_processes) and os.environ.get("PYTEST_CURRENT_TEST"):
        with open(os.path.join(_processes, str(os.getpid())), "a") as _f:
            _f.write(os.environ["PYTEST_CURRENT_TEST"].rsplit(" (", 1)[0] + "\n")
    _ubsan_log = dict(o.split("=", 1) for o in os.environ.get("UBSAN_OPTIONS", "").split(":") if "=" in o)
    if "log_path" in _ubsan_log:
        import ctypes

        _ubsan = next(p for p in _preload.split(":") if "libubsan" in p)
        ctypes.CDLL(_ubsan, mode=os.RTLD_NOLOAD).__sanitizer_set_report_path(_ubsan_log["log_path"].encode())
