"""The CUDA template builds one wheel (pip, build isolation on) for sm_80 and sm_90 and
every CPython 3, against the oldest apache-tvm-ffi that has what its build uses; auditwheel retags
it manylinux without bundling tvm_ffi or CUDA; and it runs under every release of its dependency
range that pip offers, each in a process of its own."""

import importlib.util
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
# The helpers next to this file, loaded by file name (pytest's importlib mode adds no folder to sys.path).
spec = importlib.util.spec_from_file_location("cuda_wheel", HERE / "cuda_wheel.py")
cuda_wheel = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cuda_wheel)
pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc on PATH (the template is CUDA)")


def cuda_gpu() -> bool:
    try:
        import torch  # not in requirements.txt: without torch there is no GPU launch to check
    except ImportError:
        return False
    return torch.cuda.is_available()


needs_cuda = pytest.mark.skipif(not cuda_gpu(), reason="needs a CUDA GPU (none visible to torch)")


@pytest.fixture(scope="module")
def wheels(tmp_path_factory):
    """(the wheel pip built, the wheel auditwheel repaired): one build per test module."""
    built = cuda_wheel.build_wheel(tmp_path_factory.mktemp("dist"), tmp_path_factory.mktemp("cmake"))
    out = tmp_path_factory.mktemp("repaired")
    cuda_wheel.repair_wheel(built, out)
    (repaired,) = out.glob("*.whl")
    return built, repaired


@pytest.fixture(scope="module")
def library(wheels, tmp_path_factory):
    return cuda_wheel.extract_library(wheels[1], tmp_path_factory.mktemp("library"))


@pytest.fixture(scope="module")
def release_rows(wheels, library, tmp_path_factory):
    """(releases, rows): the wheel under every release of its tvm_ffi range that pip offers.

    One venv with NumPy and no tvm_ffi; each release installed alone into a folder of its own."""
    (requirement,) = cuda_wheel.requires(wheels[1])
    versions = cuda_wheel.releases(requirement)
    python = cuda_wheel.fresh_venv(tmp_path_factory.mktemp("venv"), "numpy", "typing-extensions")
    package = tmp_path_factory.mktemp("package")
    zipfile.ZipFile(wheels[1]).extractall(package)  # a wheel is a zip: its package, unpacked, is installed
    rows = cuda_wheel.release_table(versions, tmp_path_factory.mktemp("releases"), python, package,
                                    cuda_wheel.tvm_ffi_imports(library), cuda_wheel.build_needs(cuda_wheel.TEMPLATE))
    return versions, rows


def test_sass_and_ptx_for_two_architectures(library):
    assert cuda_wheel.gpu_code(library) == {"sass": ["sm_80", "sm_90"], "ptx": ["sm_80", "sm_90"]}


def test_repaired_wheel_is_manylinux_py3_and_bundles_no_runtime(wheels):
    built, repaired = wheels
    assert built.name == "gpukernels-0.1.0-py3-none-linux_x86_64.whl"
    assert re.fullmatch(r"gpukernels-0\.1\.0-py3-none-manylinux_2_\d+_x86_64\.whl", repaired.name), repaired.name
    names = zipfile.ZipFile(repaired).namelist()
    assert cuda_wheel.LIBRARY in names and "gpukernels/__init__.py" in names
    assert not [n for n in names if "libtvm_ffi" in n or "libcudart" in n or n.endswith(".libs/")], names


def test_manylinux_tag_is_the_newest_glibc_version_the_library_uses(wheels, library):
    undefined = cuda_wheel.run(["nm", "-D", "--undefined-only", library]).stdout
    major, minor = max((int(a), int(b)) for a, b in re.findall(r"@GLIBC_(\d+)\.(\d+)\b", undefined))
    assert wheels[1].name.endswith(f"-manylinux_{major}_{minor}_x86_64.whl"), (wheels[1].name, major, minor)


def test_library_needs_tvm_ffi_but_no_python_and_no_cuda_library(library):
    section = cuda_wheel.dynamic_section(library)
    assert "libtvm_ffi.so" in section["NEEDED"]
    assert not [n for n in section["NEEDED"] if n.startswith(("libpython", "libcudart", "libcuda"))], section
    assert section["RPATH"] == section["RUNPATH"] == []


def test_without_exclude_auditwheel_bundles_a_second_tvm_ffi(wheels, tmp_path):
    """What --exclude prevents: with libtvm_ffi.so findable, auditwheel copies it into the wheel."""
    import tvm_ffi.libinfo

    lib_dir = Path(tvm_ffi.libinfo.find_libtvm_ffi()).parent
    env_python = [sys.executable, "-m", "auditwheel", "repair", "-w", tmp_path, wheels[0]]
    done = subprocess.run([str(c) for c in env_python], capture_output=True, text=True,
                          env={"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "LD_LIBRARY_PATH": str(lib_dir)})
    assert done.returncode == 0, done.stderr
    (grafted,) = tmp_path.glob("*.whl")
    assert [n for n in zipfile.ZipFile(grafted).namelist() if n.startswith("gpukernels.libs/libtvm_ffi-")]


def test_metadata_asks_for_a_range_of_tvm_ffi(wheels):
    metadata = zipfile.ZipFile(wheels[1]).read("gpukernels-0.1.0.dist-info/METADATA").decode()
    assert "Requires-Dist: apache-tvm-ffi<0.2,>=0.1.0" in metadata
    assert cuda_wheel.OLDEST == "0.1.0"  # the lower bound of the range is the release tested


def test_one_row_per_release_of_the_range_from_the_oldest(release_rows):
    versions, rows = release_rows
    assert versions[0] == cuda_wheel.OLDEST and [row["release"] for row in rows] == versions
    assert len(versions) >= 21  # 0.1.0 to 0.1.15.post2 when this recipe was written; PyPI keeps them


def test_every_release_loads_and_runs_the_wheel(release_rows):
    for row in release_rows[1]:
        assert (row["result"], row["error"], row["missing"]) == ("loads and runs", "", []), row
        assert f"tvm_ffi {row['release']} scale on the CPU: [[-0.0, -1.5, -3.0], [-4.5, -6.0, -7.5]]" in row["stdout"]
        assert "scale_cuda: ValueError: argument 'x': expected a tensor on cuda" in row["stdout"]


def test_built_against_the_oldest_release_that_has_what_the_build_uses(release_rows):
    lacking = [row["release"] for row in release_rows[1] if row["lacks"]]
    assert lacking == release_rows[0][:len(lacking)]  # the releases before one that has all
    assert cuda_wheel.build_release() == release_rows[0][len(lacking)]
    assert "tvm_ffi_configure_target" in cuda_wheel.build_needs(cuda_wheel.TEMPLATE)


def test_same_wheel_runs_under_another_cpython(wheels, tmp_path):
    """The py3-none wheel, unchanged, under a CPython of another minor version (with tvm_ffi's oldest)."""
    other = cuda_wheel.other_cpython()
    if other is None:
        pytest.skip("needs a second CPython 3.9+ (python3.N on PATH or in pyenv)")
    python = cuda_wheel.fresh_venv(tmp_path / "venv", f"apache-tvm-ffi=={cuda_wheel.OLDEST}", "numpy", wheels[1],
                                   base=other)
    done = cuda_wheel.run([python, "-I", "-c",
                           "import sys; print(*sys.version_info[:2]);" + cuda_wheel.CHECK_IN_VENV], cwd=tmp_path)
    assert done.stdout.split("\n")[0] != f"{sys.version_info.major} {sys.version_info.minor}"
    assert f"tvm_ffi {cuda_wheel.OLDEST} scale on the CPU" in done.stdout


def test_library_imports_tvm_ffi_c_functions_only(library):
    """No C++ symbol of libtvm_ffi.so: what crosses to the user's tvm_ffi is its C ABI alone."""
    imports = cuda_wheel.tvm_ffi_imports(library)
    assert "TVMFFIErrorSetRaised" in imports and "TVMFFIEnvGetStream" in imports
    undefined = cuda_wheel.run(["nm", "-D", "--undefined-only", library]).stdout
    assert "_ZN3tvm3ffi" not in undefined


@needs_cuda
def test_launches_on_this_gpu(wheels, tmp_path):
    """On a GPU: the wheel's kernel runs on this GPU, from SASS for sm_8x and sm_90, from PTX beyond."""
    import torch

    major, minor = torch.cuda.get_device_capability()
    arch = major * 10 + minor
    assert arch >= 80, f"the wheel has code for sm_80 and newer, this GPU is sm_{arch}"
    cuda_wheel.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", tmp_path, wheels[1]])
    sys.path.insert(0, str(tmp_path))
    try:
        import gpukernels

        x = torch.randn(1000, device="cuda")
        y = torch.empty_like(x)
        gpukernels.scale(x, y, 3.0)
        torch.testing.assert_close(y, 3.0 * x)
        assert gpukernels.cuda_device_count() == torch.cuda.device_count()
    finally:
        sys.path.remove(str(tmp_path))
