"""Each recipe's zip holds files a reader copies as they are (issue 26, item 4).

Checked on the zips the generator writes (``tools.takeaway``, which the site
uses): no line that only marks a page's region, no compiler-cache, CI or sanitizer
line, no path out of the folder, a short CMakeLists.txt where the recipe is one CPU
and one CUDA source, and a README that names only files the zip holds.
"""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import PurePosixPath

import pytest

from ffi_cookbook import catalog
from tools import takeaway

RECIPE_NAMES = [r.name for r in catalog.recipes()]
MARKER = re.compile(r"\[[\w.-]+\.(?:begin|end)\]")
MACHINERY = re.compile(r"ccache|COMPILER_LAUNCHER|CCACHE_|-ffile-prefix-map|FFI_COOKBOOK_SANITIZE|"
                       r"FFI_COOKBOOK_BUILD_DIR|GITHUB_ACTIONS|\.ci/")
OUTSIDE = re.compile(r"(?:^|[\s\"'(=])\.\./|\$\{CMAKE_CURRENT_SOURCE_DIR\}/\.\.")
#: A name in a README that stands for a file: a known suffix, or a folder ending in "/".
FILE_NAME = re.compile(r"`([\w./-]+(?:\.(?:md|ipynb|txt|py|cc|cu|cuh|h|hpp|cpp|c|toml|cmake|in)|/))`")
CPU_SOURCES, CUDA_SOURCES = {".cc", ".cpp", ".c"}, {".cu"}
TEXT = {".md", ".txt", ".py", ".cc", ".cu", ".cuh", ".h", ".hpp", ".cpp", ".c", ".toml", ".cmake", ".in",
        ".cfg", ".sh", ".ipynb"}


def zipped(name: str) -> dict[str, str]:
    """The text files of recipe ``name``'s zip, as the zip holds them."""
    data = takeaway.zip_bytes(takeaway.recipe_files(name), name)
    archive = zipfile.ZipFile(io.BytesIO(data))
    files = {}
    for info in archive.infolist():
        rel = info.filename.split("/", 1)[1]
        if PurePosixPath(rel).suffix in TEXT or PurePosixPath(rel).name in {"CMakeLists.txt", "gitignore"}:
            files[rel] = archive.read(info).decode()
    return files


@pytest.fixture(scope="module", params=RECIPE_NAMES)
def recipe_zip(request):
    return request.param, zipped(request.param)


def test_no_file_holds_a_doc_marker(recipe_zip):
    name, files = recipe_zip
    for rel, text in files.items():
        if rel == "notebook.ipynb":  # its Markdown quotes files, already without markers
            continue
        assert not MARKER.search(text), f"{name}/{rel}: {MARKER.search(text).group(0)}"


def test_no_cache_ci_or_sanitizer_lines_in_what_a_reader_copies(recipe_zip):
    name, files = recipe_zip
    for rel in [r for r in files if PurePosixPath(r).name in {"CMakeLists.txt", "README.md", "pyproject.toml"}
                or PurePosixPath(r).name.startswith("test_")]:
        assert not MACHINERY.search(files[rel]), f"{name}/{rel}: {MACHINERY.search(files[rel]).group(0)}"


def test_no_path_outside_the_folder(recipe_zip):
    name, files = recipe_zip
    for rel, text in files.items():
        if PurePosixPath(rel).name in {"CMakeLists.txt", "README.md"} or rel.endswith(".toml"):
            assert not OUTSIDE.search(text), f"{name}/{rel}: {OUTSIDE.search(text).group(0)!r}"


def test_cmake_of_one_cpu_and_one_cuda_source_is_short(recipe_zip):
    name, files = recipe_zip
    top = [PurePosixPath(r) for r in files if "/" not in r]
    cpu = [p for p in top if p.suffix in CPU_SOURCES]
    cuda = [p for p in top if p.suffix in CUDA_SOURCES]
    if any(not p.name.endswith("_cuda.cu") for p in cuda):  # NVSHMEM or a fatbin: more than CUDA
        pytest.skip(f"{name}: GPU code beyond one CUDA source")
    if "CMakeLists.txt" not in files or len(cpu) != 1 or len(cuda) != 1:
        pytest.skip(f"{name}: not one CPU and one CUDA source")
    lines = files["CMakeLists.txt"].splitlines()
    assert len(lines) <= 30, f"{name}: CMakeLists.txt has {len(lines)} lines"


def test_readme_names_only_files_the_zip_holds(recipe_zip):
    name, files = recipe_zip
    every = set(takeaway.recipe_files(name))
    folders = {str(p) + "/" for rel in every for p in PurePosixPath(rel).parents if str(p) != "."}
    named = set(FILE_NAME.findall(files["README.md"]))
    # what a build makes, the folder itself, and tvm_ffi's own headers are not the zip's
    elsewhere = {n for n in named if n.startswith(("build", "dist/", "./", "tvm/"))}
    missing = {n for n in named - elsewhere if n not in every and n not in folders
               and not any(f.endswith("/" + n) for f in every | folders)}
    assert not missing, f"{name}/README.md names {sorted(missing)}, which its zip does not hold"


def test_recipe_01_is_tvm_ffi_alone_and_small():
    files = takeaway.recipe_files("01-add-one")
    assert not any(rel.startswith("include/") for rel in files)
    assert "cookbook_build.py" not in files and "cookbook_testing.py" not in files
    assert len(takeaway.zip_bytes(files, "01-add-one")) < 20_000
