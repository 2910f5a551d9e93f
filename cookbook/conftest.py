"""Build each recipe folder (the README's cmake commands) before its tests run.

The build goes out of tree (``build_dir_for``); a test that names its library where the
README builds it, ``LIBRARY = <folder>/build/libX.so`` (recipe 01's), is pointed there. A
wheel template (recipes 13 and 22) has no include/ in the checkout (its zip carries the
helper headers): pip's builds of it get the checkout's include/ through the same
environment as ``cmake_build``'s (``checkout_environment``).
"""

from pathlib import Path

import pytest

from ffi_cookbook.build import checkout_environment, cmake_build


@pytest.fixture(scope="module", autouse=True)
def _recipe_built(request):
    folder = Path(str(request.fspath)).parent
    if not (folder / "CMakeLists.txt").is_file():
        with pytest.MonkeyPatch.context() as patch:
            if (folder / "template").is_dir():
                for variable, value in checkout_environment(folder / "template", [])[1].items():
                    patch.setenv(variable, value)
            yield
        return
    build = cmake_build(folder, verbose=False)
    with pytest.MonkeyPatch.context() as patch:
        library = getattr(request.module, "LIBRARY", None)
        if isinstance(library, Path) and library.parent == folder.resolve() / "build":
            patch.setattr(request.module, "LIBRARY", build / library.name)
        yield
