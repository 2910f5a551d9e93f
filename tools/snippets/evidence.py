"""Evidence that a file shown with literalinclude is compiled, configured or tested.

Nothing here is a hand-kept list: the evidence is what the builds left behind.
The builds of a recipe's notebook run in an unzipped copy of the recipe
(``<build root>/recipe-runs/<name>``, tools/recipe_runs.py): a file there that is
byte for byte the checkout's (``cookbook/<name>/...``, or ``include/...`` for a
helper header) counts as the checkout's, and is judged fresh against the copy.
- C, C++, CUDA sources: a compile step of some ninja build (`ninja -t compdb`:
  CMake builds, torch extension builds) or an entry of a compile_commands.json,
  whose object file exists and is newer than the source.
- Headers: a dependency of an object of such a build (`ninja -t deps`).
- CMake files: an input of a configured CMake build (the RERUN_CMAKE inputs in
  build.ninja), and build.ninja newer than the file.
- pyproject.toml: the source of a scikit-build-core build (a CMake cache with
  SKBUILD set whose source folder is the file's folder), newer than the file.
- Python files: test modules that pytest collects (pyproject's testpaths and
  python_files), and modules such a test imports from its own folder.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import subprocess
import tomllib
from functools import cached_property
from pathlib import Path

from tools.cmake_build import build_root
from tools.takeaway import strip_markers
from tools.recipe_runs import RUNS

from .collect import Block

SOURCES = {".c", ".cc", ".cpp", ".cxx", ".cu"}
HEADERS = {".h", ".hh", ".hpp", ".cuh"}
PRUNE = {".git", ".venv", "node_modules", "__pycache__", "_build", "scratch", "CMakeFiles"}


def _newer(product: Path, source: Path) -> bool:
    return product.is_file() and product.stat().st_mtime >= source.stat().st_mtime


class Evidence:
    def __init__(self, root: Path):
        self.root = root
        self.compilers: dict[Path, str] = {}  # object file -> its compiler as called (filled by `objects`)
        self.build_root = build_root(self.root)
        self.copies: dict[Path, Path] = {}  # checkout file -> its copy in a recipe run (filled by `_twin`)

    def _twin(self, path: Path) -> Path:
        """The checkout file a recipe run's file is a byte-identical copy of; else ``path``."""
        runs = self.build_root / RUNS
        if not path.is_relative_to(runs) or not path.is_file():
            return path
        name, *rest = path.relative_to(runs).parts
        rel = Path(*rest) if rest else Path()
        twin = (self.root / rel) if rel.parts[:1] == ("include",) else self.root / "cookbook" / name / rel
        # the zip leaves out the lines that only mark a page's region (takeaway.strip_markers)
        if not twin.is_file() or strip_markers(twin.name, twin.read_bytes()) != path.read_bytes():
            return path
        self.copies[twin] = path
        return twin

    def _fresh(self, product: Path, path: Path) -> bool:
        """``product`` is newer than the checkout file ``path``, or than its copy in a recipe run."""
        return _newer(product, path) or (path in self.copies and _newer(product, self.copies[path]))

    @cached_property
    def build_dirs(self) -> list[Path]:
        """Every build folder (one holding build.ninja, CMakeCache.txt or compile_commands.json,
        the record a page's own compile leaves: docs/_code/first_kernel.py) under the root, and
        under <build root>/cmake, where the builds of the checkout's folders go
        (`$FFI_COOKBOOK_BUILD_DIR`, else root/_build; see tools.cmake_build.build_dir_for),
        and under <build root>/recipe-runs."""
        found = []
        for top in [self.root, self.build_root / "cmake", self.build_root / RUNS]:
            for folder, dirs, files in os.walk(top):
                dirs[:] = [d for d in dirs if d not in PRUNE and not d.startswith("_build")]
                if "build.ninja" in files or "CMakeCache.txt" in files or "compile_commands.json" in files:
                    found.append(Path(folder))
        return found

    @cached_property
    def objects(self) -> dict[Path, list[Path]]:
        """Compiled source -> the object files built from it."""
        table: dict[Path, list[Path]] = {}
        for build in self.build_dirs:
            entries = []
            if (build / "build.ninja").is_file():
                done = subprocess.run(["ninja", "-C", str(build), "-t", "compdb"], capture_output=True, text=True)
                entries += json.loads(done.stdout) if done.returncode == 0 and done.stdout.strip() else []
            if (build / "compile_commands.json").is_file():
                entries += json.loads((build / "compile_commands.json").read_text())
            for entry in entries:
                directory = Path(entry["directory"])
                source = self._twin((directory / entry["file"]).resolve())
                output = entry.get("output") or _output_from_command(entry)
                if output:
                    table.setdefault(source, []).append((directory / output).resolve())
                    self.compilers[(directory / output).resolve()] = _compiler(entry)
        return table

    @cached_property
    def header_deps(self) -> dict[Path, list[Path]]:
        """Header -> the object files that include it (from ninja's dependency log)."""
        deps: dict[Path, list[Path]] = {}
        for build in self.build_dirs:
            if not (build / "build.ninja").is_file():
                continue
            done = subprocess.run(["ninja", "-C", str(build), "-t", "deps"], capture_output=True, text=True)
            target = None
            for line in done.stdout.splitlines():
                if line and not line.startswith(" "):
                    target = (build / line.split(":")[0]).resolve()
                elif line.strip() and target is not None:
                    deps.setdefault(self._twin((build / line.strip()).resolve()), []).append(target)
        return deps

    @cached_property
    def cmake_inputs(self) -> dict[Path, list[Path]]:
        """CMake file -> the build.ninja files of the configured builds that read it."""
        inputs: dict[Path, list[Path]] = {}
        for build in self.build_dirs:
            ninja = build / "build.ninja"
            if not ninja.is_file():
                continue
            text = ninja.read_text().replace("$\n", " ")
            match = re.search(r"^build build\.ninja[^\n]*?: RERUN_CMAKE[^|\n]*\|([^\n]*)", text, re.M)
            for item in re.split(r"(?<!\$) ", match.group(1)) if match else []:
                item = item.replace("$ ", " ").strip()
                if item:
                    inputs.setdefault(self._twin((build / item).resolve()), []).append(ninja)
        return inputs

    @cached_property
    def skbuild_sources(self) -> dict[Path, list[Path]]:
        """Source folder -> CMakeCache.txt files of scikit-build-core builds of it."""
        found: dict[Path, list[Path]] = {}
        for build in self.build_dirs:
            cache = build / "CMakeCache.txt"
            text = cache.read_text(errors="replace") if cache.is_file() else ""
            home = re.search(r"^CMAKE_HOME_DIRECTORY:INTERNAL=(.*)$", text, re.M)
            if home and re.search(r"^SKBUILD:", text, re.M):
                found.setdefault(self._twin(Path(home.group(1)).resolve() / "pyproject.toml").parent, []).append(cache)
        return found

    @cached_property
    def test_modules(self) -> set[Path]:
        config = tomllib.loads((self.root / "pyproject.toml").read_text()) if (self.root / "pyproject.toml").is_file() else {}
        options = config.get("tool", {}).get("pytest", {}).get("ini_options", {})
        found = set()
        for folder in options.get("testpaths", []):
            for path in (self.root / folder).rglob("*.py"):
                if any(fnmatch.fnmatch(path.name, p) for p in options.get("python_files", ["test_*.py"])):
                    found.add(path.resolve())
        return found

    def _importing_test(self, path: Path) -> Path | None:
        """A pytest test module next to `path` that imports it (by module or file name)."""
        pattern = _imports(path.stem)
        for test in sorted(self.test_modules):
            if test.parent == path.parent and pattern.search(test.read_text()):
                return test
        return None

    def verify(self, block: Block) -> None:
        path = block.include
        shown = path.relative_to(self.root) if path.is_relative_to(self.root) else path
        suffix = path.suffix.lower()
        if suffix in SOURCES:
            objects = self.objects.get(path, [])
            fresh = [o for o in objects if self._fresh(o, path)]
            if fresh:
                block.tool = self.compilers.get(fresh[0], "")
                return block.ok(f"{shown} is compiled by a build (compile_commands.json, object up to date)")
            why = "its object is older than the source: rebuild" if objects else "no build compiles it"
            return block.fail(f"{shown}: {why}")
        if suffix in HEADERS:
            user = next((u for u in self.header_deps.get(path, []) if self._fresh(u, path)), None)
            if user is not None:
                self.objects  # noqa: B018  (reads the compile commands: fills self.compilers)
                block.tool = self.compilers.get(user, "")
                return block.ok(f"{shown} is included by a compiled object ({user.name})")
            return block.fail(f"{shown}: no compiled object includes it (or its object is stale)")
        if path.name == "CMakeLists.txt" or suffix == ".cmake":
            ninja = next((n for n in self.cmake_inputs.get(path, []) if self._fresh(n, path)), None)
            if ninja is not None:
                block.tool = "cmake"
                return block.ok(f"{shown} is read by a configured CMake build")
            return block.fail(f"{shown}: no configured CMake build reads it (or the build is stale)")
        if path.name == "pyproject.toml":
            cache = next((c for c in self.skbuild_sources.get(path.parent, []) if self._fresh(c, path)), None)
            if cache is not None:
                return block.ok(f"{shown} drives a scikit-build-core build ({cache.parent.name})")
            return block.fail(f"{shown}: no scikit-build-core build of its folder (or the build is stale)")
        if suffix == ".py" and path in self.test_modules:
            return block.ok(f"{shown} is a test module pytest runs")
        if suffix == ".py":
            user = self._importing_test(path)
            if user is not None:
                return block.ok(f"{shown} is imported by {user.name}, a test module pytest runs")
        return block.fail(f"{shown}: no build or test uses this file")


def _imports(module: str) -> re.Pattern:
    """`import m`, `from m import ...`, or loading it by file name ("m.py")."""
    return re.compile(rf"^\s*(?:from\s+{module}\s+import|import\s+{module}\b)|[\"']{module}\.py[\"']", re.M)


def _compiler(entry: dict) -> str:
    """The compiler of a compile command, past a launcher (``env VAR=... ccache``)."""
    args = entry.get("arguments") or entry.get("command", "").split()
    for arg in args:
        name = Path(arg).name
        if name == "env" or "=" in arg or name.startswith("ccache") or arg.startswith("env;"):
            continue
        return arg
    return ""


def _output_from_command(entry: dict) -> str | None:
    args = entry.get("arguments") or entry.get("command", "").split()
    return args[args.index("-o") + 1] if "-o" in args[:-1] else None
