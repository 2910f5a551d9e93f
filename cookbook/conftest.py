"""Build each recipe folder (the README's cmake commands) before its tests run.

The build goes out of tree (``build_dir_for``); ``$RECIPE_BUILD_DIR`` tells a test that
does not import ``cookbook_build`` (recipe 01's) where it is.
"""

from pathlib import Path

import pytest

from ffi_cookbook.build import RECIPE_BUILD_ENV, cmake_build


@pytest.fixture(scope="module", autouse=True)
def _recipe_built(request):
    folder = Path(str(request.fspath)).parent
    if not (folder / "CMakeLists.txt").is_file():
        yield
        return
    build = cmake_build(folder, verbose=False)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(RECIPE_BUILD_ENV, str(build))
        yield
