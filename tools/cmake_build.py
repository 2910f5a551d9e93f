"""Build a recipe folder with CMake, the same two commands its README shows.

A folder builds into its own ``build/`` (ignored by git), as a recipe's README says;
:func:`build_dir_for` is the rule. This is the checkout's tooling (tests, the fuzz, the
sanitizer run): no recipe imports it. Standard library only.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

BUILD_DIR_ENV = "FFI_COOKBOOK_BUILD_DIR"


def checkout_root(folder: str | Path) -> Path | None:
    """The cookbook checkout that holds ``folder``, or None when it is not in one."""
    folder = Path(folder).resolve()
    for parent in (folder, *folder.parents):
        if (parent / "runtime" / "CMakeLists.txt").is_file() and (parent / "cookbook").is_dir():
            return parent
    return None


def build_root(checkout: Path) -> Path:
    """Where a checkout's builds go: ``$FFI_COOKBOOK_BUILD_DIR``, else ``<checkout>/_build``."""
    return Path(os.environ.get(BUILD_DIR_ENV) or checkout / "_build").resolve()


#: Set by the sanitizer run (tests/sanitize): checkout folders build under it, by their path,
#: so that its instrumented builds never replace the ones in their own build/.
BUILDS_ELSEWHERE_ENV = "FFI_COOKBOOK_CMAKE_BUILDS"


def build_dir_for(folder: str | Path) -> Path:
    """The build folder of the CMake project in ``folder``: ``<folder>/build``, as its README says
    (``build/`` is ignored by git, so the folder stays as tracked); under
    ``$FFI_COOKBOOK_CMAKE_BUILDS`` by its path in the checkout when that is set (a copy under the
    build root still builds in its own build/)."""
    folder = Path(folder).resolve()
    elsewhere = os.environ.get(BUILDS_ELSEWHERE_ENV)
    checkout = checkout_root(folder)
    if elsewhere and checkout is not None and not folder.is_relative_to(build_root(checkout)):
        return Path(elsewhere).resolve() / folder.relative_to(checkout)
    return folder / "build"


def cmake_commands(folder: Path, build_dir: Path, *extra: str) -> list[list[str]]:
    """The configure and build command lines for ``folder``."""
    configure = ["cmake", "-S", str(folder), "-B", str(build_dir),
                 f"-DPython_EXECUTABLE={sys.executable}"]
    # Ninja for a new build folder only: one configured already (say by a README's plain
    # `cmake -S . -B build`) keeps its generator, which CMake refuses to change.
    if shutil.which("ninja") and not (Path(build_dir) / "CMakeCache.txt").exists():
        configure += ["-G", "Ninja"]
    return [configure + list(extra), ["cmake", "--build", str(build_dir)]]


def _relative(match: re.Match) -> str:
    """An absolute path relative to the current folder, keeping a trailing slash."""
    path = match.group(1)
    rel = os.path.relpath(path)
    return rel + "/" if path.endswith("/") and not rel.endswith("/") else rel


def _shown(cmd: list[str]) -> str:
    """A command as a reader would type it here: relative paths, and the README's Python."""
    shown = []
    for arg in cmd:
        if arg.startswith("-DPython_EXECUTABLE="):
            shown.append('-DPython_EXECUTABLE="$(command -v python)"')
        elif os.path.isabs(arg):
            shown.append(shlex.quote(os.path.relpath(arg)))
        elif arg.startswith("-D") and "/" in arg:
            # -DNAME=/abs/path and flags such as -ffile-prefix-map=/abs/path/=: relative
            # paths, not this machine's folders.
            shown.append(shlex.quote(re.sub(r"(?:(?<==)|(?<=\s)|^)(/[^\s=]*)", _relative, arg)))
        else:
            shown.append(shlex.quote(arg))
    return " ".join(shown)


def cmake_build(folder: str | Path = ".", *extra: str, verbose: bool = True,
                build_dir: str | Path | None = None) -> Path:
    """Configure and build ``folder`` into ``build_dir`` (default: :func:`build_dir_for` it);
    return the build folder. Without ``verbose``, a folder configured with the same arguments
    (or more) is only built.

    With ``verbose`` the commands are printed with paths relative to the current
    folder (``$(command -v python)`` stands for the running interpreter).
    Raises ``subprocess.CalledProcessError`` with CMake's output when a step fails.
    """
    folder = Path(folder).resolve()
    build_dir = build_dir_for(folder) if build_dir is None else Path(build_dir).resolve()
    # Quietly (tests, the fuzz), a folder configured before with these arguments (or more:
    # the cache keeps each -D) is only built again: the build step reruns CMake by itself
    # when a CMakeLists.txt changed, and CMake reads the environment's flags at the first
    # configure only. A verbose build runs both commands it prints, as a reader types them.
    configured = build_dir / ".configured-with"
    arguments = [str(folder), sys.executable, *extra]
    with _one_at_a_time(build_dir):
        commands = cmake_commands(folder, build_dir, *extra)
        if not verbose and (build_dir / "CMakeCache.txt").is_file() and configured.is_file() \
                and set(arguments) <= set(configured.read_text().split("\n")):
            commands = commands[1:]
        else:
            configured.unlink(missing_ok=True)
        for cmd in commands:
            if verbose:
                print("$", _shown(cmd))
            done = subprocess.run(cmd, capture_output=True, text=True)
            if done.returncode != 0:
                raise subprocess.CalledProcessError(done.returncode, cmd, done.stdout, done.stderr)
            if "-S" in cmd:
                configured.write_text("\n".join(arguments))
    return build_dir


@contextlib.contextmanager
def _one_at_a_time(build_dir: Path):
    """Two processes (pytest-xdist workers, a notebook and a test) never build one folder at once."""
    build_dir.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # not POSIX: no lock
        yield
        return
    with open(build_dir / ".cmake_build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield
