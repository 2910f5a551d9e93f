"""A pytest plugin of the sanitizer run: each pytest process (an xdist worker) appends the
node id of every test it starts to FFI_COOKBOOK_SANITIZER_PROCESSES/<pid>, as sitecustomize
does for the children a test starts; see tests/sanitize/__main__.py's tracer crashes."""

import os


def pytest_runtest_logstart(nodeid, location):
    folder = os.environ.get("FFI_COOKBOOK_SANITIZER_PROCESSES")
    if folder and os.path.isdir(folder):
        with open(os.path.join(folder, str(os.getpid())), "a") as out:
            out.write(nodeid + "\n")
