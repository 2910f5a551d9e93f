"""A sanitized build is one flag away, and the sanitizer run (`make test-sanitize`) is armed.

The run itself (recipe tests + fuzz against sanitized builds) is `python -m tests.sanitize`;
these tests check its pieces: the build is instrumented, a kernel runs clean with the
runtimes in, and LeakSanitizer still reports a leak that is not Python's or torch's.
"""

import subprocess
import sys
from pathlib import Path

import pytest

from tools.cmake_build import cmake_build
from tests.sanitize import FLAGS, rpath_dlopen_folders, sanitizer_env
from tests.sanitize.__main__ import NOTHING_INSTRUMENTED

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def sanitized_build(tmp_path_factory):
    """A build root with recipe 01's library built as the run builds every recipe folder,
    and the folder the reports go to."""
    build = tmp_path_factory.mktemp("asan")
    cmake_build(ROOT / "cookbook" / "01-add-one", *FLAGS, verbose=False, build_dir=build / "add-one")
    (build / "reports").mkdir()
    return build


def test_library_is_instrumented(sanitized_build):
    symbols = subprocess.run(["nm", "-D", "--undefined-only", str(sanitized_build / "add-one" / "libadd_one.so")],
                             capture_output=True, text=True, check=True).stdout
    assert "__asan_report_load4" in symbols or "__asan_loadN" in symbols
    assert "__ubsan_handle" in symbols


def test_the_run_builds_every_project_the_fuzz_calls_sanitized(monkeypatch, tmp_path):
    """The fuzz calls the libraries of projects() and of the `ffi-cookbook new` project; the
    run builds each with the sanitizer flags before pytest starts (a recipe: its copy)."""
    import tools.cmake_build
    from tests.fuzz.run import new_library_copy, projects
    from tests.sanitize import __main__ as run

    built = {}
    monkeypatch.setattr(tools.cmake_build, "cmake_build", lambda folder, *flags, **kw: built.setdefault(folder, flags))
    monkeypatch.setenv("FFI_COOKBOOK_BUILD_DIR", str(tmp_path))
    def copy(build, name):  # what flags_for reads of the copy
        folder = build / "cookbook" / name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "CMakeLists.txt").write_text((ROOT / "cookbook" / name / "CMakeLists.txt").read_text())
        return folder

    monkeypatch.setattr(run, "recipe_copy", copy)
    run.build_all(tmp_path)
    recipes = {f for f in projects() if f.parent == ROOT / "cookbook"}
    copies = {tmp_path / "cookbook" / f.name for f in recipes}
    assert set(built) == (set(projects()) - recipes) | copies | {new_library_copy(), ROOT / "tests" / "probe"}
    assert all(run.FLAGS[1] in flags and run.FLAGS[1].startswith("-DCMAKE_CXX_FLAGS=-fsanitize=")
               for flags in built.values())
    cuda_kept = {folder.relative_to(ROOT).as_posix() for folder, flags in built.items()
                 if "-DCMAKE_CUDA_COMPILER=OFF" not in flags and folder.is_relative_to(ROOT)}
    assert cuda_kept == {"cookbook/22-cuda-wheel/template"}  # project(... CUDA): nvcc is required


def test_left_out_tests_exist():
    """Each test the run leaves out (nothing instrumented runs in it) is still there."""
    for node in NOTHING_INSTRUMENTED:
        path, _, name = node.partition("::")
        assert (ROOT / path).exists(), node
        assert not name or f"def {name}(" in (ROOT / path).read_text(), node


def run_sanitized(build, root, script):
    return subprocess.run([sys.executable, "-c", script], env=sanitizer_env(build), cwd=root,
                          capture_output=True, text=True)


@pytest.fixture
def report_build(tmp_path):
    """A build root with only the reports folder: for scripts that load no library of the run."""
    (tmp_path / "reports").mkdir()
    return tmp_path


def reports_of(build, pid_file):
    """What the sanitizers wrote for one process (the run sends reports to files, see log_path)."""
    return "".join(p.read_text() for p in (build / "reports").glob(f"*.{pid_file}"))


def test_kernels_run_clean_under_sanitizers(sanitized_build, root):
    library = sanitized_build / "add-one" / "libadd_one.so"
    script = ("import os, tvm_ffi, torch; "
              f"m = tvm_ffi.load_module({str(library)!r}); "
              "x = torch.arange(1000, dtype=torch.float32); y = torch.empty_like(x); m.add_one_cpu(x, y); "
              "assert (y == x + 1).all(); print(os.getpid(), 'LD_PRELOAD' in os.environ)")
    done = run_sanitized(sanitized_build, root, script)
    assert done.returncode == 0, done.stderr[-3000:]
    pid, preload = done.stdout.split()
    # The runtimes are not passed on to the build tools the process may run.
    assert preload == "False"
    assert reports_of(sanitized_build, pid) == ""


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


LEAKY_SOURCE = """\
#include <tvm/ffi/function.h>
#include <cstdint>

namespace {
// Forgets a buffer on every call: the kind of bug the sanitizer run is there to catch.
int64_t LeakyAddOne(int64_t x) {
  int64_t* scratch = new int64_t[512];
  scratch[0] = x + 1;
  return scratch[0];
}
}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(leaky_add_one, LeakyAddOne);
"""


def test_leak_in_a_kernel_library_called_through_tvm_ffi_is_reported(report_build, root, tmp_path):
    # A leak in a library of ours, called from Python through tvm_ffi (whose frames are on the
    # stack): no suppression may hide it, and the report names the function and the file.
    source = tmp_path / "leaky.cc"
    source.write_text(LEAKY_SOURCE)
    library = tmp_path / "libleaky.so"
    config = [sys.executable, "-m", "tvm_ffi.config"]
    flags = subprocess.run([*config, "--cxxflags", "--ldflags", "--libs"], capture_output=True, text=True,
                           check=True).stdout.split()
    subprocess.run(["g++", "-shared", "-fPIC", "-O1", "-g", "-fno-omit-frame-pointer", "-fsanitize=address,undefined",
                    "-o", str(library), str(source), *flags], check=True)
    done = run_sanitized(report_build, root, "import os, tvm_ffi; print(os.getpid(), flush=True); "
                                             f"m = tvm_ffi.load_module({str(library)!r}); "
                                             "assert m.leaky_add_one(41) == 42")
    assert done.returncode != 0, done.stderr[-3000:]
    report = reports_of(report_build, done.stdout.strip())
    assert "ERROR: LeakSanitizer: detected memory leaks" in report
    assert "4096 byte(s) in 1 object(s)" in report and "leaky.cc" in report, report[-3000:]


def test_what_python_still_owns_at_exit_is_not_reported(report_build, root):
    # tvm_ffi objects owned by live Python objects at exit (a Function in a global, the error of
    # a caught exception that is kept) are not leaks; under CPython's own allocator LeakSanitizer
    # cannot see those owners and reported them from libtvm_ffi.so (see sanitizer_env).
    script = ("import os, tvm_ffi\n"
              "print(os.getpid(), flush=True)\n"
              "def alloc(n):\n    raise ValueError('no room')\n"
              "f = tvm_ffi.convert(alloc)\n"
              "kept = []\n"
              "for _ in range(3):\n"
              "    try:\n        f(1)\n    except ValueError as e:\n        kept.append(e)\n"
              "assert len(kept) == 3 and str(kept[0]) == 'no room'\n")
    done = run_sanitized(report_build, root, script)
    pid = done.stdout.strip()
    assert done.returncode == 0, reports_of(report_build, pid)[-3000:] or done.stderr[-3000:]
    assert reports_of(report_build, pid) == ""


def test_nvrtc_finds_its_builtins_under_the_sanitizer_runtimes(report_build, root):
    # ASan's dlopen interceptor hides libnvrtc's RPATH from the loader; the run's
    # LD_LIBRARY_PATH gives NVRTC its builtins library back (see rpath_dlopen_folders).
    if not rpath_dlopen_folders():
        pytest.skip("needs the nvidia-cuda-nvrtc wheel (recipe 20's requirements)")
    script = ("import os, sys; print(os.getpid(), flush=True); "
              "sys.path.insert(0, 'cookbook/20-precompiled-gpu-code'); import gpu_binaries; "
              "cubin = gpu_binaries.nvrtc_compile('extern \"C\" __global__ void k(float* x) { x[0] = 1; }', 'sm_90'); "
              "assert cubin[:4] == b'\\x7fELF', cubin[:16]")
    done = run_sanitized(report_build, root, script)
    assert done.returncode == 0, done.stderr[-3000:]
    assert reports_of(report_build, done.stdout.strip()) == ""


TRACER_CRASH = """Tracer caught signal 11: addr=0x8db0 pc=0x7ff6d88e80f0 sp=0x7ff6d53ffd10
==1139==LeakSanitizer has encountered a fatal error.
==1139==HINT: For debugging, try setting environment variable LSAN_OPTIONS=verbosity=1:log_threads=1
==1139==HINT: LeakSanitizer does not work under ptrace (strace, gdb, etc)
"""


def test_a_crashed_leak_tracer_names_the_tests_to_run_again(tmp_path):
    from tests.sanitize.__main__ import tracer_crashes

    reports, processes = tmp_path / "reports", tmp_path / "processes"
    reports.mkdir(), processes.mkdir()
    (reports / "asan.1139").write_text(TRACER_CRASH)
    # a worker's tests, as tests_per_process writes them (xdist's "@group" dropped for the rerun)
    (processes / "1139").write_text("cookbook/a/test_a.py::test_one@cookbook/a/test_a.py\n"
                                    "cookbook/a/test_a.py::test_two[x y]@cookbook/a/test_a.py\n")
    files = sorted(reports.glob("*"))
    assert tracer_crashes(files, processes) == {
        "1139": ["cookbook/a/test_a.py::test_one", "cookbook/a/test_a.py::test_two[x y]"]}
    # a process whose tests are not known cannot be run again: the crash fails the run
    (processes / "1139").unlink()
    assert tracer_crashes(files, processes) is None
    # nor does a crash excuse a finding in another process
    (processes / "1139").write_text("cookbook/a/test_a.py::test_one\n")
    (reports / "asan.1140").write_text("==1140==ERROR: LeakSanitizer: detected memory leaks\n")
    (processes / "1140").write_text("cookbook/a/test_a.py::test_two\n")
    assert tracer_crashes(sorted(reports.glob("*")), processes) is None


def test_each_child_notes_the_test_that_started_it(report_build, root):
    (report_build / "processes").mkdir()
    env = dict(sanitizer_env(report_build), PYTEST_CURRENT_TEST="t.py::test_x[a (b)] (call)")
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], cwd=root, capture_output=True,
                          text=True, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (report_build / "processes" / done.stdout.strip()).read_text() == "t.py::test_x[a (b)]\n"
