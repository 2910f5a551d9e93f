"""A sanitized build is one flag away, and the sanitizer run (`make test-sanitize`) is armed.

The run itself (recipe tests + fuzz against sanitized builds) is `python -m tests.sanitize`;
these tests check its pieces: the build is instrumented, a kernel runs clean with the
runtimes in, and LeakSanitizer still reports a leak that is not Python's or torch's.
"""

import subprocess
import sys

import pytest

from tests.sanitize import FLAGS, sanitizer_env


@pytest.fixture(scope="module")
def sanitized_build(root, tmp_path_factory):
    build = tmp_path_factory.mktemp("asan")
    subprocess.run(["cmake", "-S", str(root / "runtime"), "-B", str(build / "runtime"), "-G", "Ninja",
                    f"-DPython_EXECUTABLE={sys.executable}", *FLAGS], check=True, capture_output=True)
    subprocess.run(["cmake", "--build", str(build / "runtime")], check=True, capture_output=True)
    return build


def test_library_is_instrumented(sanitized_build):
    symbols = subprocess.run(["nm", "-D", "--undefined-only", str(sanitized_build / "runtime" / "libffi_cookbook.so")],
                             capture_output=True, text=True, check=True).stdout
    assert "__asan_report_load4" in symbols or "__asan_loadN" in symbols
    assert "__ubsan_handle" in symbols


def run_sanitized(build, root, script):
    return subprocess.run([sys.executable, "-c", script], env=sanitizer_env(build), cwd=root,
                          capture_output=True, text=True)


def reports_of(build, pid_file):
    """What the sanitizers wrote for one process (the run sends reports to files, see log_path)."""
    return "".join(p.read_text() for p in (build / "reports").glob(f"*.{pid_file}"))


def test_kernels_run_clean_under_sanitizers(sanitized_build, root):
    script = ("import os, ffi_cookbook, torch; m = ffi_cookbook.load(); "
              "x = torch.arange(1000, dtype=torch.float32); y = torch.empty_like(x); m.add_one_cpu(x, y); "
              "assert (y == x + 1).all(); print(ffi_cookbook.library_path(), 'LD_PRELOAD' in os.environ)")
    done = run_sanitized(sanitized_build, root, script)
    assert done.returncode == 0, done.stderr[-3000:]
    # Loaded the sanitized library; the runtimes are not passed on to the build tools it may run.
    assert done.stdout.split() == [str(sanitized_build / "runtime" / "libffi_cookbook.so"), "False"]


def test_leak_sanitizer_reports_a_leak_that_is_not_pythons(sanitized_build, root):
    # malloc called through ctypes (libffi), not through CPython's allocator: not suppressed.
    done = run_sanitized(sanitized_build, root,
                         "import ctypes, os; print(os.getpid()); ctypes.CDLL(None).malloc(4321)")
    assert done.returncode != 0
    report = reports_of(sanitized_build, done.stdout.strip())
    assert "ERROR: LeakSanitizer: detected memory leaks" in report
    assert "4321 byte(s)" in report


def test_undefined_behaviour_stops_the_process_and_lands_in_a_file(sanitized_build, root, tmp_path):
    # GCC's UBSan beside ASan ignores UBSAN_OPTIONS' log_path; sitecustomize hands it over, or
    # the report would go to the stderr that pytest captures and loses when the process halts.
    source = tmp_path / "overflow.c"
    source.write_text("int add_one(int x) { return x + 1; }\n")
    library = tmp_path / "liboverflow.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-fsanitize=address,undefined", "-o", str(library), str(source)],
                   check=True)
    done = run_sanitized(sanitized_build, root, "import ctypes, os, sys; print(os.getpid(), flush=True); "
                                                f"ctypes.CDLL({str(library)!r}).add_one(2**31 - 1); print('went on')")
    assert done.returncode != 0 and "went on" not in done.stdout
    report = reports_of(sanitized_build, done.stdout.strip())
    assert "runtime error: signed integer overflow: 2147483647 + 1" in report
    assert "runtime error" not in done.stderr
