"""scale_triton: a Triton kernel compiled ahead of time and launched from a tvm_ffi library.

Anywhere the CUDA toolkit is: the cubin holds SASS for the configured architecture, the
launch facts in the generated header are the compiled kernel's, the library carries the
cubin, and a bad call is refused before any CUDA call. On a GPU of that architecture: the
results are torch's, on the caller's stream; on another, the call says which to build for.
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

HERE = Path(__file__).resolve().parent
BUILD = HERE / "build"

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU (none visible to torch)")
needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc on PATH")
pytestmark = needs_nvcc  # without the CUDA toolkit CMake builds nothing here


def _load(module_file):
    spec = importlib.util.spec_from_file_location(Path(module_file).stem, HERE / module_file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def build():
    cache = (BUILD / "CMakeCache.txt").read_text()  # CMake's record of the CUDA compiler it found
    if not re.search(r"^CMAKE_CUDA_COMPILER:\w+=\S*nvcc$", cache, re.M):  # the toolkit is there, but CUDA was off
        pytest.skip("this build has no CUDA part (configured with CUDA off)")
    return BUILD


@pytest.fixture(scope="module")
def mod(build):
    return tvm_ffi.load_module(str(build / "libscale_triton.so"))


@pytest.fixture(scope="module")
def facts(build):
    """The constants of the generated scale_triton_launch.h, by name."""
    text = (build / "scale_triton_launch.h").read_text()
    return {name: value.strip('"') for name, value in re.findall(r"constexpr [\w ]+?\*? (k\w+) = ([^;]+);", text)}


def gpu_arch() -> int:
    major, minor = torch.cuda.get_device_capability()
    return major * 10 + minor


def test_cubin_is_sass_for_the_configured_architecture_only(build, facts):
    found = _load("scale_triton.py").gpu_code(build / "scale_triton.cubin")
    # sm_90a on Hopper: Triton compiles for the architecture-specific form there
    assert len(found["sass"]) == 1 and re.fullmatch(rf"sm_{facts['kArch']}a?", found["sass"][0]), found
    assert found["ptx"] == []


def test_launch_facts_are_those_of_the_compiled_kernel(build, facts):
    scale_triton = _load("scale_triton.py")
    kernel = scale_triton.compile_cubin(int(facts["kArch"]))
    assert kernel.asm["cubin"] == (build / "scale_triton.cubin").read_bytes()  # the same compile
    assert facts["kKernel"] == kernel.metadata.name == "scale_kernel"
    assert int(facts["kThreads"]) == kernel.metadata.num_warps * 32
    assert int(facts["kSharedBytes"]) == kernel.metadata.shared
    assert int(facts["kBlock"]) == scale_triton.BLOCK
    params = scale_triton.ptx_parameters(kernel.asm["ptx"])
    assert len(params) == 4 + int(facts["kAppendedPointers"])
    assert params[2:4] == [".f32", ".u32"]  # factor, n
    assert all(p.startswith(".u64 .ptr") for p in params[:2] + params[4:])  # x, y, then Triton's


def test_library_carries_the_cubin(build):
    assert (build / "scale_triton.cubin").read_bytes() in (build / "libscale_triton.so").read_bytes()


@pytest.mark.parametrize("args, error, message", [
    ((np.ones(4, np.float32), np.empty(4, np.float32), 2.0), ValueError,
     "argument 'x': expected a CUDA tensor, got one on cpu"),
    ((torch.ones(4), torch.empty(4), 2.0), ValueError, "argument 'x': expected a CUDA tensor, got one on cpu"),
    ((torch.ones(4), torch.empty(4), "two"), TypeError, "float"),
    ((torch.ones(4), None, 2.0), TypeError, "Tensor"),
])
def test_bad_calls_are_refused_before_any_cuda_call(mod, args, error, message):
    with pytest.raises(error, match=re.escape(message)):
        mod.scale_triton(*args)


@needs_cuda
@pytest.mark.parametrize("shape", [(0,), (1,), (1000,), (1025,), (3, 700)])
def test_matches_torch_on_the_gpu_it_was_compiled_for(mod, facts, shape):
    x = torch.randn(shape, device="cuda")
    y = torch.empty_like(x)
    if gpu_arch() != int(facts["kArch"]):
        if x.numel() == 0:
            pytest.skip("an empty tensor launches nothing")
        with pytest.raises(RuntimeError, match=f"compiled for sm_{facts['kArch']}; GPU 0 is sm_{gpu_arch()}"):
            mod.scale_triton(x, y, 2.5)
        return
    mod.scale_triton(x, y, 2.5)
    torch.testing.assert_close(y, x * 2.5, rtol=0, atol=0)


@needs_cuda
def test_runs_on_the_callers_stream(mod, facts):
    if gpu_arch() != int(facts["kArch"]):
        pytest.skip(f"needs an sm_{facts['kArch']} GPU")
    x = torch.randn(1 << 20, device="cuda")
    y = torch.zeros_like(x)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        torch.cuda._sleep(10_000_000)  # keeps this stream busy: the launch must queue behind it
        mod.scale_triton(x, y, 3.0)
    stream.synchronize()
    torch.testing.assert_close(y, x * 3.0, rtol=0, atol=0)


@needs_cuda
@pytest.mark.parametrize("x, y, error, message", [
    (lambda: torch.ones(4, device="cuda", dtype=torch.float64), lambda: torch.empty(4, device="cuda"),
     TypeError, "argument 'x': expected float32"),
    (lambda: torch.ones(4, 4, device="cuda").T, lambda: torch.empty(4, 4, device="cuda"),
     ValueError, "argument 'x': expected a contiguous tensor"),
    (lambda: torch.ones(4, device="cuda"), lambda: torch.empty(5, device="cuda"),
     ValueError, "argument 'y': expected the shape of 'x'"),
    (lambda: torch.ones(4, device="cuda"), lambda: torch.empty(4),
     ValueError, "argument 'y': expected a CUDA tensor, got one on cpu"),
])
def test_bad_gpu_calls_are_refused(mod, x, y, error, message):
    with pytest.raises(error, match=re.escape(message)):
        mod.scale_triton(x(), y(), 2.0)


@needs_cuda
@pytest.mark.timing
def test_launch_from_tvm_ffi_costs_no_more_than_tritons_own(mod, facts):
    """The launch from C++ against Triton's launcher in Python, for a tensor small enough that
    the launch is what is measured."""
    if gpu_arch() != int(facts["kArch"]):
        pytest.skip(f"needs an sm_{facts['kArch']} GPU")
    scale_triton = _load("scale_triton.py")
    x = torch.randn(4096, device="cuda")
    y = torch.empty_like(x)
    grid = ((x.numel() + scale_triton.BLOCK - 1) // scale_triton.BLOCK,)
    launch_triton = scale_triton.scale_kernel[grid]
    launch_triton(x, y, 2.0, x.numel(), BLOCK=scale_triton.BLOCK)  # its first launch compiles: not timed
    ours = scale_triton.seconds_per_launch(lambda: mod.scale_triton(x, y, 2.0))
    tritons = scale_triton.seconds_per_launch(lambda: launch_triton(x, y, 2.0, x.numel(), BLOCK=scale_triton.BLOCK))
    assert ours <= tritons * 1.1, f"tvm_ffi {ours * 1e6:.1f} us, Triton's launcher {tritons * 1e6:.1f} us"
