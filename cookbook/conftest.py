"""Build each recipe folder before its tests run, as its README does first.

The commands are the README's (``cmake -S . -B build``, ``cmake --build build``), run once per
folder and test session; the tests then load ``build/lib*.so`` as a reader's run of them would.
This file is the checkout's, not a recipe's: a downloaded recipe is built by its README's commands.
"""

from pathlib import Path

import pytest

from tools.cmake_build import cmake_build


@pytest.fixture(scope="module", autouse=True)
def _recipe_built(request):
    folder = Path(str(request.fspath)).parent
    if (folder / "CMakeLists.txt").is_file():
        cmake_build(folder, verbose=False)
