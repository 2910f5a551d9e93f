"""Recipe 19: each failure is provoked in a child process and its diagnosis asserted.

The broken kernels are built on request into their own folders under build/ (crash_demos.py);
the checked gather the recipe ships is tested like any kernel.
"""

import importlib.util
import re
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import tvm_ffi


def _load(file_name):
    name = Path(file_name).stem
    spec = importlib.util.spec_from_file_location(name, Path(__file__).resolve().parent / file_name)
    module = sys.modules[name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


crash_demos = _load("crash_demos.py")

HERE = Path(__file__).resolve().parent
LIBRARY = HERE / "build" / "libdebugging.so"
# The debug info names broken_kernels.cc as CMake gave it to the compiler: a path, absolute or
# relative to the build folder, depending on the generator.
SOURCE = r"(?:\S*/)?broken_kernels\.cc"
needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU (none visible to torch)")
needs_gdb = pytest.mark.skipif(shutil.which("gdb") is None, reason="needs gdb (apt-get install gdb)")
needs_nvcc_build = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc on PATH for the CUDA demos")


@pytest.fixture(scope="module")
def mod():
    return tvm_ffi.load_module(str(LIBRARY))


# -- the kernel the recipe ships -------------------------------------------------------

def test_gather_matches_numpy(mod):
    x = np.arange(7, dtype=np.float32) * 1.5
    index = np.array([6, 0, 3, 3, 1])
    out = np.empty(5, np.float32)
    mod.gather_cpu(x, index, out)
    np.testing.assert_array_equal(out, x[index])


@pytest.mark.parametrize("bad", [7, -1, 1 << 40])
def test_gather_rejects_an_index_out_of_range_and_writes_nothing(mod, bad):
    x, out = np.arange(7, dtype=np.float32), np.full(3, -5.0, np.float32)
    with pytest.raises(IndexError, match=rf"argument 'index': index\[2\] = {bad} is out of range for 'x' of 7 elements"):
        mod.gather_cpu(x, np.array([0, 1, bad]), out)
    assert (out == -5.0).all()


@pytest.mark.parametrize("x, index, out, error, message", [
    (np.zeros(3, np.float64), np.zeros(2, np.int64), np.zeros(2, np.float32), TypeError, "argument 'x': expected dtype float32"),
    (np.zeros(3, np.float32), np.zeros(2, np.int32), np.zeros(2, np.float32), TypeError, "argument 'index': expected dtype int64"),
    (np.zeros(3, np.float32), np.zeros(2, np.int64), np.zeros(3, np.float32), ValueError, "argument 'out': expected shape [2]"),
    (np.zeros((3, 1), np.float32), np.zeros(2, np.int64), np.zeros(2, np.float32), ValueError, "argument 'x': expected a 1-d tensor, got 2-d"),
])
def test_gather_rejects_bad_arguments(mod, x, index, out, error, message):
    with pytest.raises(error) as info:
        mod.gather_cpu(x, index, out)
    assert message in str(info.value)


# -- the failures, each in a child process -------------------------------------------------

def test_address_sanitizer_finds_the_write_past_the_end():
    done = crash_demos.scan_under_asan()
    assert done.returncode != 0 and "returned" not in done.stdout
    report = done.stderr
    assert "ERROR: AddressSanitizer: heap-buffer-overflow" in report
    assert "WRITE of size 4" in report
    assert re.search(r"#0 0x[0-9a-f]+ in ExclusiveScanOffByOne " + SOURCE + r":\d+", report), report
    assert "0 bytes to the right of 20-byte region" in report  # 5 floats, and the write just past them


def test_faulthandler_names_the_python_line_of_the_crash():
    done = crash_demos.gather_with_faulthandler()
    assert done.returncode != 0
    assert "Fatal Python error: Segmentation fault" in done.stderr
    # The line of GATHER_OUT_OF_RANGE that calls the kernel.
    line = crash_demos.GATHER_OUT_OF_RANGE.splitlines().index(
        "    mod.gather_unchecked(x, index, out)") + 1
    assert f'File "<string>", line {line} in <module>' in done.stderr


@needs_gdb
def test_gdb_names_the_kernel_source_line():
    done = crash_demos.gather_under_gdb()
    assert 'received signal SIGSEGV, Segmentation fault.' in done.stdout, done.stdout[-3000:] + done.stderr[-2000:]
    assert re.search(r"#0 .*GatherUnchecked .* at " + SOURCE + r":\d+", done.stdout), done.stdout


@needs_nvcc_build
@pytest.mark.skipif(torch.cuda.is_available(), reason="on a GPU the launch works: see the GPU test")
def test_unchecked_launch_fails_silently_and_the_check_raises_without_a_gpu():
    done = crash_demos.fill_launches()
    assert done.returncode == 0, done.stderr[-3000:]
    assert "fill_unchecked returned\nout is still all zero: True\n" in done.stdout
    assert re.search(r"fill_checked raised RuntimeError: CUDA Runtime Error: cuda\w+ \(\d+\)", done.stdout), done.stdout


@needs_cuda
@needs_nvcc_build
def test_invalid_launch_configuration_on_a_gpu():
    done = crash_demos.fill_launches()
    assert done.returncode == 0, done.stderr[-3000:]
    assert "fill_unchecked returned\n" in done.stdout
    # 2048 threads in a block: CUDA documents cudaErrorInvalidConfiguration ("invalid
    # configuration argument"); an H200 with CUDA 13.0 answered cudaErrorInvalidValue.
    # The pending error: out unchanged, or torch's next launch check reports it as its own.
    assert re.search(r"out is still all zero: True|the next torch operation raised: CUDA error: "
                     r"invalid (configuration )?argument", done.stdout), done.stdout
    assert re.search(r"fill_checked raised RuntimeError: CUDA Runtime Error: "
                     r"(cudaErrorInvalidConfiguration \(9\)|cudaErrorInvalidValue \(1\))", done.stdout), done.stdout


@needs_cuda
@needs_nvcc_build
def test_a_kernel_fault_surfaces_at_the_next_synchronisation():
    done = crash_demos.write_far()
    assert "write_at returned" in done.stdout, done.stderr[-3000:]
    assert re.search(r"torch.cuda.synchronize raised: .*illegal memory access", done.stdout), done.stdout


@needs_cuda
@needs_nvcc_build
def test_launch_blocking_moves_the_error_to_the_launch():
    done = crash_demos.write_far(blocking=True)
    assert "write_at returned" not in done.stdout
    assert "cudaErrorIllegalAddress" in done.stderr, done.stderr[-3000:]


def test_compute_sanitizer_comes_from_its_wheel_and_runs():
    version = crash_demos.tool(str(crash_demos.compute_sanitizer()), "--version")
    assert version.startswith("NVIDIA (R) Compute Sanitizer"), version


@needs_cuda
@needs_nvcc_build
def test_a_write_one_past_the_end_is_silent_alone_and_reported_by_memcheck():
    alone = crash_demos.write_one_past(sanitized=False)
    assert alone.returncode == 0 and "returned and synchronised without an error" in alone.stdout, alone.stderr[-3000:]
    checked = crash_demos.write_one_past(sanitized=True)
    report = checked.stdout + checked.stderr
    assert checked.returncode == 3, report[:3000]  # --error-exitcode: memcheck reported an error
    assert "Invalid __global__ write of size 4 bytes" in report and "WriteAtKernel" in report, report[:3000]


def test_an_undefined_symbol_ends_the_process_at_the_first_call():
    done = crash_demos.call_missing_symbol()
    assert done.returncode == 127 and "loaded; calling twice(1.0)" in done.stdout
    assert "symbol lookup error" in done.stderr and "undefined symbol: _Z11ScaleFactorf" in done.stderr
    library = crash_demos.build_demos().parent / "libmissing_symbol.so"
    undefined = crash_demos.tool("nm", "-DC", "--undefined-only", str(library))
    assert re.search(r"^\s+U ScaleFactor\(float\)$", undefined, re.M)
    assert "undefined symbol: _Z11ScaleFactorf" in crash_demos.tool("ldd", "-r", str(library))


def test_ld_bind_now_fails_the_load_instead():
    done = crash_demos.call_missing_symbol(bind_now=True)
    assert done.returncode == 1 and "loaded" not in done.stdout
    assert "RuntimeError" in done.stderr and "undefined symbol: _Z11ScaleFactorf" in done.stderr


def test_a_second_libtvm_ffi_aborts_and_ldd_shows_which_copy_a_library_takes():
    done = crash_demos.load_second_copy()
    assert done.returncode != 0 and "never printed" not in done.stdout
    assert "libtvm_ffi.so files mapped: 1" in done.stdout
    assert "is already registered" in done.stderr, done.stderr[-3000:]
    bundled = crash_demos.bundled_copy()
    assert f"libtvm_ffi.so => {tvm_ffi.libinfo.find_libtvm_ffi()}" in crash_demos.tool("ldd", str(LIBRARY))
    assert f"libtvm_ffi.so => {bundled}" in crash_demos.ldd_with_library_path(LIBRARY, bundled.parent)
    assert "(NEEDED)             Shared library: [libtvm_ffi.so]" in crash_demos.tool("readelf", "-d", str(LIBRARY))


def test_the_broken_kernels_are_not_in_the_default_build():
    """The fuzz and the thread tests load every library of the default build: none of these is there."""
    built = {p.name for p in (HERE / "build").glob("*.so")}  # the demos are in build/demos, build/asan
    assert built == {"libdebugging.so"}
    assert "gather_unchecked" not in crash_demos.tool("nm", "-D", "--defined-only", str(LIBRARY))
