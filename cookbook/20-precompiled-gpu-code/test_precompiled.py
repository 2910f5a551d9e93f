"""Precompiled GPU code: what the binaries hold and link (checked without a GPU), the
errors every export raises instead of crashing, and the launches (on a GPU)."""

import ctypes
import importlib.util
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch
import tvm_ffi

HERE = Path(__file__).resolve().parent
SOURCE = (HERE / "scale_kernel.cu").read_text()

spec = importlib.util.spec_from_file_location("gpu_binaries", HERE / "gpu_binaries.py")
gpu_binaries = importlib.util.module_from_spec(spec)
spec.loader.exec_module(gpu_binaries)

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU (none visible to torch)")
needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc on PATH")
pytestmark = needs_nvcc  # without nvcc CMake builds nothing here


def driver_present() -> bool:
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    return True


@pytest.fixture(scope="module")
def build():
    folder = HERE / "build"
    cache = (folder / "CMakeCache.txt").read_text()  # CMake's record of the CUDA compiler it found
    if not re.search(r"^CMAKE_CUDA_COMPILER:\w+=\S*nvcc$", cache, re.M):  # nvcc is there, but CUDA was off
        pytest.skip("this build has no CUDA variant (configured with CUDA off)")
    return folder


@pytest.fixture(scope="module")
def embedded(build):
    return tvm_ffi.load_module(str(build / "libscale_embedded.so"))


@pytest.fixture(scope="module")
def driver(build):
    return tvm_ffi.load_module(str(build / "libscale_driver.so"))


@pytest.fixture(scope="module")
def fatbin(build):
    return next(build.glob("CMakeFiles/scale_fatbin.dir/*.fatbin"))


def needed(library: Path) -> list[str]:
    out = subprocess.run(["readelf", "-d", str(library)], capture_output=True, text=True, check=True).stdout
    return re.findall(r"\(NEEDED\).*\[(.+)\]", out)


def undefined(library: Path) -> set[str]:
    out = subprocess.run(["nm", "-D", "--undefined-only", str(library)], capture_output=True, text=True,
                         check=True).stdout
    return {line.split()[-1].split("@")[0] for line in out.splitlines() if line.strip()}


# -- what the binaries hold -------------------------------------------------------------

def test_fatbin_has_sass_and_ptx_for_every_configured_architecture(build, fatbin):
    architectures = gpu_binaries.cuda_build(build)["architectures"]
    expected = sorted(f"sm_{a}" for a in architectures.split(";"))
    assert gpu_binaries.gpu_code(fatbin) == {"sass": expected, "ptx": expected, "kernels": ["scale_f32"]}


@pytest.mark.parametrize("library", ["libscale_embedded.so", "libscale_driver.so"])
def test_libraries_carry_the_fatbin(build, fatbin, library):
    assert fatbin.read_bytes() in (build / library).read_bytes()


@pytest.mark.parametrize("arch", ["sm_80", "sm_90", "sm_100"])
def test_nvrtc_compiles_for_a_named_architecture_without_a_gpu(tmp_path, arch):
    cubin = gpu_binaries.nvrtc_compile(SOURCE, arch, "scale_kernel.cu")
    assert cubin[:4] == b"\x7fELF"
    (tmp_path / "k.cubin").write_bytes(cubin)
    assert gpu_binaries.gpu_code(tmp_path / "k.cubin") == {"sass": [arch], "ptx": [], "kernels": ["scale_f32"]}


def test_nvrtc_error_carries_the_log():
    with pytest.raises(RuntimeError, match=r"(?s)NVRTC could not compile bad.cu:.*identifier \"j\" is undefined"):
        gpu_binaries.nvrtc_compile(SOURCE.replace("x[i]", "x[j]"), "sm_90", "bad.cu")
    with pytest.raises(ValueError, match="arch: expected a real architecture"):
        gpu_binaries.nvrtc_compile(SOURCE, "compute_90")


def test_driver_library_links_no_cuda_library(build):
    library = build / "libscale_driver.so"
    assert not [n for n in needed(library) if n.startswith(("libcudart", "libcuda."))], needed(library)
    symbols = undefined(library)
    assert {"dlopen", "dlsym"} <= symbols
    assert not [s for s in symbols if re.match(r"cu(da)?[A-Z]", s)]
    # The launcher built on tvm_ffi's cubin launcher goes through the CUDA runtime.
    assert "libcudart.so.13" in needed(build / "libscale_embedded.so")
    assert {"cudaLibraryLoadData", "cudaLaunchKernel"} <= undefined(build / "libscale_embedded.so")


def test_python_build_embeds_the_nvrtc_cubin(build):
    cubin = gpu_binaries.nvrtc_compile(SOURCE, "sm_90")
    library = gpu_binaries.build_with_cubin(cubin, build, "scale_from_python_test")
    assert cubin in library.read_bytes()
    mod = tvm_ffi.load_module(str(library))
    assert mod.implements_function("scale_embedded") and mod.implements_function("load_cubin")
    assert not [n for n in needed(library) if n.startswith("libcuda.")]


# -- errors, never crashes --------------------------------------------------------------

def scale_exports(embedded, driver):
    return {"scale_embedded": embedded.scale_embedded, "scale_driver": driver.scale_driver}


@pytest.mark.parametrize("name", ["scale_embedded", "scale_driver"])
@pytest.mark.parametrize("x, y, error, message", [
    (np.ones(4, np.float32), np.empty(4, np.float32), ValueError, "argument 'x': expected a tensor on cuda, got one on cpu:0"),
    (None, np.empty(4, np.float32), TypeError, "x"),
    (np.ones(4, np.float32), "y", TypeError, "y"),
])
def test_bad_arguments_raise(embedded, driver, name, x, y, error, message):
    with pytest.raises(error, match=re.escape(message)):
        scale_exports(embedded, driver)[name](x, y, 2.0)


@pytest.mark.parametrize("image", [b"", b"junk", b"\x7fELF" + bytes(60), bytes.fromhex("50ed55ba") + bytes(12)],
                         ids=["empty", "junk", "elf-header-only", "fatbin-header-only"])
def test_load_cubin_refuses_incomplete_images(embedded, image):
    with pytest.raises(ValueError, match="argument 'image': expected a cubin .* or a fatbin"):
        embedded.load_cubin(image, "scale_f32")


@pytest.mark.parametrize("cut", [64, 1000])
def test_load_cubin_refuses_a_truncated_cubin(embedded, cut):
    cubin = gpu_binaries.nvrtc_compile(SOURCE, "sm_90")
    with pytest.raises(ValueError, match="argument 'image'"):
        embedded.load_cubin(cubin[:cut], "scale_f32")


def test_truncated_fatbin_is_refused(embedded, fatbin):
    with pytest.raises(ValueError, match="argument 'image'"):
        embedded.load_cubin(fatbin.read_bytes()[:-1], "scale_f32")


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the errors of a machine without a GPU")
def test_without_a_gpu_the_first_cuda_call_raises(embedded, fatbin):
    with pytest.raises(RuntimeError, match="CUDA Error: cuda"):
        embedded.load_cubin(gpu_binaries.nvrtc_compile(SOURCE, "sm_90"), "scale_f32")
    with pytest.raises(RuntimeError, match="CUDA Error: cuda"):
        embedded.load_cubin(fatbin.read_bytes(), "scale_f32")


@pytest.mark.skipif(driver_present(), reason="checks a machine without the CUDA driver")
def test_without_a_driver_the_driver_library_loads_and_raises(driver):
    with pytest.raises(RuntimeError, match=r"the CUDA driver \(libcuda.so.1\) cannot be loaded"):
        driver.driver_version()


# -- on a GPU -----------------------------------------------------------------------------

def device_arch() -> str:
    return "sm_{}{}".format(*torch.cuda.get_device_capability())


@needs_cuda
def test_every_path_matches_torch(build, embedded, driver):
    cubin = gpu_binaries.nvrtc_compile(SOURCE, device_arch())
    python_built = tvm_ffi.load_module(str(gpu_binaries.build_with_cubin(cubin, build, "scale_from_python_test")))
    launches = [embedded.scale_embedded, embedded.load_cubin(cubin, "scale_f32"), python_built.scale_embedded,
                driver.scale_driver]
    for n in (0, 1, 255, 256, 257, 1 << 20):
        x = torch.randn(n, device="cuda")
        for launch in launches:
            y = torch.full_like(x, float("nan"))
            launch(x, y, -1.5)
            torch.testing.assert_close(y, -1.5 * x, rtol=0, atol=0)


@needs_cuda
def test_launches_go_to_the_current_stream(embedded, driver):
    x = torch.randn(1 << 20, device="cuda")
    for launch in (embedded.scale_embedded, driver.scale_driver):
        y = torch.zeros_like(x)
        torch.cuda.synchronize()
        side = torch.cuda.Stream()
        with torch.cuda.stream(side):
            torch.cuda._sleep(100_000_000)  # the side stream is busy for tens of milliseconds
            launch(x, y, 2.0)  # so a launch on it waits, while one on another stream would not
        early = y.clone()  # on the default stream, which does not wait for the side stream
        side.synchronize()
        assert torch.count_nonzero(early) == 0
        torch.testing.assert_close(y, 2.0 * x, rtol=0, atol=0)


@needs_cuda
def test_load_cubin_errors_on_a_gpu(embedded):
    cubin = gpu_binaries.nvrtc_compile(SOURCE, device_arch())
    with pytest.raises(RuntimeError, match="CUDA Error"):
        embedded.load_cubin(cubin, "no_such_kernel")
    x = torch.ones(4, device="cuda", dtype=torch.float64)
    with pytest.raises(TypeError, match="argument 'x': expected dtype float32, got float64"):
        embedded.load_cubin(cubin, "scale_f32")(x, torch.empty_like(x), 1.0)


@needs_cuda
def test_driver_version_on_a_gpu(driver):
    assert driver.driver_version() >= 12000  # cuLibraryLoadData needs a CUDA 12 driver
