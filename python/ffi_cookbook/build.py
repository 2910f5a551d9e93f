"""Build a recipe folder with CMake, the same two commands its README shows.

Notebooks call :func:`cmake_build` so that what a reader sees executed is
exactly ``cmake -S <folder> -B <folder>/build -DPython_EXECUTABLE=<python>``
followed by ``cmake --build <folder>/build``.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path


def cmake_commands(folder: Path, build_dir: Path, *extra: str) -> list[list[str]]:
    """The configure and build command lines for ``folder``."""
    configure = ["cmake", "-S", str(folder), "-B", str(build_dir),
                 f"-DPython_EXECUTABLE={sys.executable}"]
    if shutil.which("ninja"):
        configure += ["-G", "Ninja"]
    return [configure + list(extra), ["cmake", "--build", str(build_dir)]]


def cmake_build(folder: str | Path = ".", *extra: str, verbose: bool = True) -> Path:
    """Configure and build ``folder`` into ``folder/build``; return the build folder.

    Raises ``subprocess.CalledProcessError`` with CMake's output when a step fails.
    """
    folder = Path(folder).resolve()
    build_dir = folder / "build"
    for cmd in cmake_commands(folder, build_dir, *extra):
        if verbose:
            print("$", shlex.join(cmd).replace(str(folder) + "/", "").replace(str(folder), "."))
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise subprocess.CalledProcessError(done.returncode, cmd, done.stdout, done.stderr)
    return build_dir


def built_variants(build_dir: str | Path) -> dict[str, bool]:
    """Which toolchains the configure step found, read from the CMake cache."""
    cache = (Path(build_dir) / "CMakeCache.txt").read_text()
    cuda = "CMAKE_CUDA_COMPILER:" in cache and "CMAKE_CUDA_COMPILER-NOTFOUND" not in cache
    return {"cpu": True, "cuda": cuda}
