"""Where the helper headers and the CMake package are: ``python -m ffi_cookbook.config --includedir | --cmakedir``.

Mirrors ``tvm_ffi.config``, for build systems other than CMake and for pointing
``ffi_cookbook_DIR`` at the package. Works the same from a source checkout and
from an installed wheel. (The CMake package itself needs no Python query: it
finds the headers from its own location, so that a wheel build, whose isolated
environment has no ``ffi_cookbook``, can use it.)
"""

from __future__ import annotations

import argparse
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


def include_dir() -> Path:
    """Folder holding ``ffi_cookbook/*.h``: inside the wheel, else the checkout's ``include/``."""
    for candidate in (_PACKAGE_DIR / "include", _PACKAGE_DIR.parents[1] / "include"):
        if (candidate / "ffi_cookbook" / "check.h").is_file():
            return candidate
    raise FileNotFoundError("ffi_cookbook headers not found next to the package or in the checkout")


def cmake_dir() -> Path:
    """Folder holding ``ffi_cookbook-config.cmake``; pass it as ``-Dffi_cookbook_DIR=``."""
    return _PACKAGE_DIR / "cmake"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m ffi_cookbook.config", description=__doc__)
    parser.add_argument("--includedir", action="store_true", help="print the header folder")
    parser.add_argument("--cmakedir", action="store_true", help="print the CMake package folder")
    args = parser.parse_args(argv)
    if not (args.includedir or args.cmakedir):
        parser.error("pass --includedir or --cmakedir")
    if args.includedir:
        print(include_dir())
    if args.cmakedir:
        print(cmake_dir())


if __name__ == "__main__":
    main()
