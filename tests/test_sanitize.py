"""A sanitized build is one flag away: -DFFI_COOKBOOK_SANITIZE=address,undefined."""

import os
import subprocess
import sys

import pytest


def gcc_runtime(name):
    return subprocess.run(["gcc", f"-print-file-name={name}"], capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture(scope="module")
def sanitized_library(root, tmp_path_factory):
    build = tmp_path_factory.mktemp("asan")
    subprocess.run(["cmake", "-S", str(root / "runtime"), "-B", str(build), "-G", "Ninja",
                    f"-DPython_EXECUTABLE={sys.executable}", "-DFFI_COOKBOOK_CUDA=OFF",
                    "-DFFI_COOKBOOK_SANITIZE=address,undefined"], check=True, capture_output=True)
    subprocess.run(["cmake", "--build", str(build)], check=True, capture_output=True)
    return build / "libffi_cookbook.so"


def test_library_is_instrumented(sanitized_library):
    symbols = subprocess.run(["nm", "-D", "--undefined-only", str(sanitized_library)],
                             capture_output=True, text=True, check=True).stdout
    assert "__asan_report_load4" in symbols or "__asan_loadN" in symbols
    assert "__ubsan_handle" in symbols


def test_kernels_run_clean_under_sanitizers(sanitized_library):
    preload = f"{gcc_runtime('libasan.so')}:{gcc_runtime('libubsan.so')}"
    env = dict(os.environ, LD_PRELOAD=preload, ASAN_OPTIONS="detect_leaks=0",
               FFI_COOKBOOK_LIBRARY=str(sanitized_library))
    script = ("import ffi_cookbook, numpy as np; m = ffi_cookbook.load(); "
              "x = np.arange(1000, dtype=np.float32); y = np.empty_like(x); m.add_one_cpu(x, y); "
              "assert (y == x + 1).all(); print(ffi_cookbook.library_path())")
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == str(sanitized_library)
