"""Every recipe's CMakeLists.txt is plain CMake on tvm_ffi's own package, a file to copy as it is.

Each recipe finds tvm_ffi's CMake package through the Python it is given and sets a
library up with ``tvm_ffi_configure_target``. What this repository's builds need
besides (a compiler cache, sanitizer flags) comes from outside: launcher variables,
CMake's flag variables, -D options (the Makefile, tests/sanitize); the helper headers
come through the recipe's tracked ``include`` link.
"""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RECIPES = sorted(p.parent for p in (ROOT / "cookbook").glob("[0-9][0-9]-*/CMakeLists.txt"))
#: What belongs to this repository's machinery, not to a reader's project.
MACHINERY = re.compile(r"ccache|COMPILER_LAUNCHER|prefix-map|sanitize|(?-i:FFI_COOKBOOK_)|\bCI\b|cookbook_cmake|"
                       r"add_kernel_library|ffi_cookbook_add_library|find_package\(ffi_cookbook", re.I)


@pytest.mark.parametrize("folder", RECIPES, ids=lambda p: p.name)
def test_recipe_cmake_is_tvm_ffi_and_plain(folder):
    text = (folder / "CMakeLists.txt").read_text()
    assert "-m tvm_ffi.config --cmakedir" in text and "find_package(tvm_ffi CONFIG REQUIRED)" in text
    # every shared library of kernels (a plain C library for ctypes is not one)
    libraries = [name for name, sources in re.findall(r"^\s*add_library\((\w+) SHARED ([^)]*)\)", text, re.M)
                 if not all(s.endswith(".c") for s in sources.split())]
    assert libraries, f"{folder.name}: no shared library"
    configured = set(re.findall(r"tvm_ffi_configure_target\((\w+|\$\{\w+\})", text))
    loop = re.search(r"foreach\((\w+) ([\w ]+)\)", text)
    if loop and "${" + loop.group(1) + "}" in configured:
        configured |= set(loop.group(2).split())
    assert set(libraries) <= configured, f"{folder.name}: {set(libraries) - configured} not configured"
    assert not MACHINERY.search(text), f"{folder.name}: {MACHINERY.search(text).group(0)!r}"
    assert not re.search(r"\.\./|\$\{CMAKE_CURRENT_SOURCE_DIR\}/\.\.", text), f"{folder.name}: a path outside the folder"


@pytest.mark.parametrize("folder", RECIPES, ids=lambda p: p.name)
def test_helper_headers_come_from_the_folder_s_include(folder):
    """A recipe whose sources include ffi_cookbook/*.h names its own include/ (the zip's);
    one that includes none builds from a plain copy of its folder."""
    text = (folder / "CMakeLists.txt").read_text()
    sources = [p for p in folder.iterdir() if p.suffix in {".cc", ".cu", ".cuh", ".h", ".cpp", ".c"}]
    uses_helpers = any(re.search(r'#\s*include\s*[<"]ffi_cookbook/', p.read_text()) for p in sources)
    names_include = bool(re.search(r"target_include_directories\(\S+ PRIVATE include\)", text))
    assert names_include == uses_helpers, folder.name


#: The one default of the GPU architectures, in every CMake file that compiles CUDA.
CUDA_ARCHITECTURES = 'set(CMAKE_CUDA_ARCHITECTURES 80 90 CACHE STRING "GPU architectures to compile for")'


def test_cuda_architectures_have_one_default():
    """Every tracked CMake file that sets the GPU architectures (recipes, wheel templates, the
    template `ffi-cookbook new` writes, the guides' code, the CMake package) sets the same
    default, the same way; one that compiles CUDA without setting them would ask a GPU."""
    import subprocess

    tracked = subprocess.run(["git", "ls-files", "*CMakeLists.txt", "*.cmake"], cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout.split()
    setting = {}
    for name in tracked:
        if name.startswith("conf/"):  # identifies the compilers for make's configures, compiles nothing
            continue
        text = (ROOT / name).read_text()
        lines = [line.strip() for line in text.splitlines() if re.match(r"\s*set\(CMAKE_CUDA_ARCHITECTURES\b", line)]
        if lines:
            setting[name] = lines
        elif re.search(r"enable_language\(CUDA\)|project\([^)]*\bCUDA\b", text):
            raise AssertionError(f"{name} compiles CUDA without a default for CMAKE_CUDA_ARCHITECTURES")
    assert {line for lines in setting.values() for line in lines} == {CUDA_ARCHITECTURES}, setting
    assert len(setting) >= len(RECIPES) // 2 + 4, sorted(setting)


WHEEL_TEMPLATES = {"13": ROOT / "cookbook/13-wheel-packaging/template", "22": ROOT / "cookbook/22-cuda-wheel/template",
                   "new": ROOT / "python/ffi_cookbook/templates/newlib"}


def _cmake_lines(folder, package):
    """The template's CMake lines without comments, the package name written as @name@."""
    text = (folder / "CMakeLists.txt").read_text().replace(package, "@name@")
    lines = (line.split("  #")[0].strip() for line in text.splitlines())  # trailing comments too
    return {line for line in lines if line and not line.startswith("#")}


def test_wheel_templates_agree():
    """Recipe 13's and 22's templates and the one `ffi-cookbook new` writes find tvm_ffi, link
    and install the same way; the two with CUDA compile for the same GPUs, cudart linked in."""
    lines = {key: _cmake_lines(folder, package) for (key, folder), package
             in zip(WHEEL_TEMPLATES.items(), ("mykernels", "gpukernels", "@name@"))}
    shared = {
        "set(CMAKE_CXX_VISIBILITY_PRESET hidden)",
        "find_package(Python COMPONENTS Interpreter REQUIRED)",
        'execute_process(COMMAND "${Python_EXECUTABLE}" -m tvm_ffi.config --cmakedir',
        "find_package(tvm_ffi CONFIG REQUIRED)",
        "tvm_ffi_configure_target(@name@)",
        "install(TARGETS @name@ LIBRARY DESTINATION @name@)",
        "set_target_properties(@name@ PROPERTIES BUILD_WITH_INSTALL_RPATH ON)",
    }
    for key, found in lines.items():
        assert shared <= found, (key, shared - found)
    cuda = {CUDA_ARCHITECTURES,
            "set(CMAKE_CUDA_VISIBILITY_PRESET hidden)",
            "set_target_properties(@name@ PROPERTIES CUDA_RUNTIME_LIBRARY Static)"}
    for key in ("22", "new"):
        assert cuda <= lines[key], (key, cuda - lines[key])
