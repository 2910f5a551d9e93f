"""Give every Python process of the sanitizer run the sanitizer runtimes, and only Python.

``make test-sanitize`` puts this folder on PYTHONPATH and the runtimes in
``FFI_COOKBOOK_SANITIZER_PRELOAD``. A Python process started without them
restarts itself with them in LD_PRELOAD (the sanitized libraries it loads need
them first); once they are in, LD_PRELOAD is dropped from the environment, so
the compilers and build tools it runs do not inherit them (LeakSanitizer would
report their deliberate leaks and fail the builds).
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
