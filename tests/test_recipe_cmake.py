"""Every recipe's CMakeLists.txt builds with tvm_ffi's CMake package alone, in the same words.

A recipe folder must build on its own, so each carries its CMake set-up instead of
sharing a module. Recipe 01's `cookbook_cmake_*` regions are the original; every
other recipe repeats them verbatim, which this test holds them to.
"""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ORIGINAL = ROOT / "cookbook" / "01-add-one" / "CMakeLists.txt"
RECIPES = sorted(p.parent for p in (ROOT / "cookbook").glob("[0-9][0-9]-*/CMakeLists.txt"))
REGIONS = ["cookbook_cmake_tvm_ffi", "cookbook_cmake_cuda", "cookbook_cmake_library"]


def region(text: str, name: str) -> str | None:
    match = re.search(rf"^# \[{name}\.begin\]\n(.*?)^# \[{name}\.end\]$", text, re.M | re.S)
    return match.group(1) if match else None


@pytest.mark.parametrize("folder", RECIPES, ids=lambda p: p.name)
def test_recipe_cmake_uses_tvm_ffi_only_and_the_shared_regions(folder):
    text = (folder / "CMakeLists.txt").read_text()
    assert "find_package(tvm_ffi CONFIG REQUIRED)" in text
    assert "ffi_cookbook_add_library" not in text and "find_package(ffi_cookbook" not in text
    original = ORIGINAL.read_text()
    has_cuda = any(folder.glob("*.cu"))
    for name in REGIONS:
        if name == "cookbook_cmake_cuda" and not has_cuda:
            continue
        assert region(text, name) == region(original, name), f"{folder.name}: region {name} differs from 01's"
