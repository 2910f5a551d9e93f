"""Build each recipe folder (the README's cmake commands) before its tests run.

The build goes out of tree (``build_dir_for``); ``$RECIPE_BUILD_DIR`` tells a test that
does not import ``cookbook_build`` (recipe 01's) where it is. A wheel template (recipes 13
and 22) has no include/ in the checkout (its zip carries the helper headers): pip's builds
of it get the checkout's include/ through ``$CXXFLAGS``, as ``cmake_build``'s do.
"""

import os
from pathlib import Path

import pytest

from ffi_cookbook.build import RECIPE_BUILD_ENV, cmake_build


INCLUDE = Path(__file__).resolve().parents[1] / "include"


@pytest.fixture(scope="module", autouse=True)
def _recipe_built(request):
    folder = Path(str(request.fspath)).parent
    if not (folder / "CMakeLists.txt").is_file():
        with pytest.MonkeyPatch.context() as patch:
            if (folder / "template").is_dir() and not (folder / "template" / "include").is_dir():
                for variable in ("CXXFLAGS", "CUDAFLAGS"):
                    patch.setenv(variable, f"{os.environ.get(variable, '')} -I{INCLUDE}".strip())
            yield
        return
    build = cmake_build(folder, verbose=False)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(RECIPE_BUILD_ENV, str(build))
        yield
