"""Build each recipe folder (the README's cmake commands) before its tests run."""

from pathlib import Path

import pytest

from ffi_cookbook.build import cmake_build


@pytest.fixture(scope="module", autouse=True)
def _recipe_built(request):
    folder = Path(str(request.fspath)).parent
    if (folder / "CMakeLists.txt").is_file():
        cmake_build(folder, verbose=False)
