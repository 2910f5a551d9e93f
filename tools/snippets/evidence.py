"""Evidence that a file shown with literalinclude is compiled, configured or tested, read from what
the builds left behind (CONTRIBUTING.md, "How each kind of code block is verified"). A recipe's
notebook builds in an unzipped copy (<build root>/recipe-runs/<name>, tools/recipe_runs.py): a
file there counts as the checkout's while it holds the same bytes.
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
from tools.recipe_runs import RUNS
from tools.takeaway import strip_markers

from .collect import Block

SOURCES = {".c", ".cc", ".cpp", ".cxx", ".cu"}
HEADERS = {".h", ".hh", ".hpp", ".cuh"}
PRUNE = {".git", ".venv", "node_modules", "__pycache__", "_build", "scratch", "CMakeFiles"}


def file_kind(path: Path) -> str:
    """What a build does with a shown file: compiled, configured, built or tested."""
    suffix = path.suffix.lower()
    if suffix in SOURCES or suffix in HEADERS:
        return "compiled"
    if path.name == "CMakeLists.txt" or suffix == ".cmake":
        return "configured"
    return "built" if path.name == "pyproject.toml" else "tested"


def _newer(product: Path, source: Path) -> bool:
    return product.is_file() and product.stat().st_mtime >= source.stat().st_mtime


def _args(entry: dict) -> list[str]:
    return entry.get("arguments") or entry.get("command", "").split()


def _compiler(entry: dict) -> str:
    """The compiler of a compile command, past a launcher (``env VAR=... ccache``)."""
    for arg in _args(entry):
        name = Path(arg).name
        if not (name == "env" or name.startswith("ccache") or "=" in arg or arg.startswith("env;")):
            return arg
    return ""


class Evidence:
    def __init__(self, root: Path):
        self.root = root
        self.build_root = build_root(root)
        self.compilers: dict[Path, str] = {}  # object file -> its compiler (filled by `objects`)
        self.copies: dict[Path, Path] = {}  # checkout file -> its copy in a recipe run (filled by `_twin`)

    def _twin(self, path: Path) -> Path:
        """The checkout file a recipe run's file is a byte-identical copy of; else ``path``."""
        runs = self.build_root / RUNS
        if not path.is_relative_to(runs) or not path.is_file():
            return path
        name, *rest = path.relative_to(runs).parts
        rel = Path(*rest)
        twin = self.root / rel if rel.parts[:1] == ("include",) else self.root / "cookbook" / name / rel
        # the zip leaves out the lines that only mark a page's region
        if not twin.is_file() or strip_markers(twin.name, twin.read_bytes()) != path.read_bytes():
            return path
        self.copies[twin] = path
        return twin

    def _fresh(self, products: list[Path], path: Path) -> Path | None:
        """The first product newer than the checkout file ``path`` or than its copy in a recipe run."""
        copy = self.copies.get(path)
        return next((p for p in products if _newer(p, path) or (copy and _newer(p, copy))), None)

    @cached_property
    def build_dirs(self) -> list[Path]:
        """Folders holding build.ninja, CMakeCache.txt or compile_commands.json under the root,
        under <build root>/cmake (tools.cmake_build.build_dir_for) and <build root>/recipe-runs."""
        found = []
        for top in [self.root, self.build_root / "cmake", self.build_root / RUNS]:
            for folder, dirs, files in os.walk(top):
                dirs[:] = [d for d in dirs if d not in PRUNE and not d.startswith("_build")]
                if {"build.ninja", "CMakeCache.txt", "compile_commands.json"} & set(files):
                    found.append(Path(folder))
        return found

    def _ninja(self, build: Path, tool: str) -> str:
        if not (build / "build.ninja").is_file():
            return ""
        done = subprocess.run(["ninja", "-C", str(build), "-t", tool], capture_output=True, text=True)
        return done.stdout if done.returncode == 0 else ""

    @cached_property
    def objects(self) -> dict[Path, list[Path]]:
        """Compiled source -> the object files built from it."""
        table: dict[Path, list[Path]] = {}
        for build in self.build_dirs:
            entries = json.loads(self._ninja(build, "compdb").strip() or "[]")
            if (build / "compile_commands.json").is_file():
                entries += json.loads((build / "compile_commands.json").read_text())
            for entry in entries:
                directory, args = Path(entry["directory"]), _args(entry)
                output = entry.get("output") or (args[args.index("-o") + 1] if "-o" in args[:-1] else None)
                if output:
                    obj = (directory / output).resolve()
                    table.setdefault(self._twin((directory / entry["file"]).resolve()), []).append(obj)
                    self.compilers[obj] = _compiler(entry)
        return table

    @cached_property
    def header_deps(self) -> dict[Path, list[Path]]:
        """Header -> the object files that include it (ninja's dependency log)."""
        deps: dict[Path, list[Path]] = {}
        seen: dict[str, Path] = {}  # each header once: most are in every object's list
        for build in self.build_dirs:
            target = None
            for line in self._ninja(build, "deps").splitlines():
                if line and not line.startswith(" "):
                    target = (build / line.split(":")[0]).resolve()
                elif line.strip() and target is not None:
                    path = os.path.join(build, line.strip())
                    if path not in seen:
                        seen[path] = self._twin(Path(path).resolve())
                    deps.setdefault(seen[path], []).append(target)
        return deps

    @cached_property
    def cmake_inputs(self) -> dict[Path, list[Path]]:
        """CMake file -> the build.ninja files of the configured builds that read it."""
        inputs: dict[Path, list[Path]] = {}
        for ninja in (build / "build.ninja" for build in self.build_dirs):
            text = ninja.read_text().replace("$\n", " ") if ninja.is_file() else ""
            match = re.search(r"^build build\.ninja[^\n]*?: RERUN_CMAKE[^|\n]*\|([^\n]*)", text, re.M)
            for item in re.split(r"(?<!\$) ", match.group(1)) if match else []:
                if item := item.replace("$ ", " ").strip():
                    inputs.setdefault(self._twin((ninja.parent / item).resolve()), []).append(ninja)
        return inputs

    @cached_property
    def skbuild_sources(self) -> dict[Path, list[Path]]:
        """Source folder -> CMakeCache.txt files of scikit-build-core builds of it."""
        found: dict[Path, list[Path]] = {}
        for cache in (build / "CMakeCache.txt" for build in self.build_dirs):
            text = cache.read_text(errors="replace") if cache.is_file() else ""
            home = re.search(r"^CMAKE_HOME_DIRECTORY:INTERNAL=(.*)$", text, re.M)
            if home and re.search(r"^SKBUILD:", text, re.M):
                found.setdefault(self._twin(Path(home.group(1)).resolve() / "pyproject.toml").parent, []).append(cache)
        return found

    @cached_property
    def test_modules(self) -> set[Path]:
        pyproject = self.root / "pyproject.toml"
        config = tomllib.loads(pyproject.read_text()) if pyproject.is_file() else {}
        options = config.get("tool", {}).get("pytest", {}).get("ini_options", {})
        patterns = options.get("python_files", ["test_*.py"])
        return {path.resolve() for folder in options.get("testpaths", []) for path in (self.root / folder).rglob("*.py")
                if any(fnmatch.fnmatch(path.name, p) for p in patterns)}

    def verify(self, block: Block) -> None:
        path = block.include
        shown = path.relative_to(self.root) if path.is_relative_to(self.root) else path
        kind = file_kind(path)
        if path.suffix.lower() in SOURCES:
            objects = self.objects.get(path, [])
            if obj := self._fresh(objects, path):
                block.tool = self.compilers.get(obj, "")
                return block.ok(f"{shown} is compiled by a build (compile_commands.json, object up to date)")
            why = "its object is older than the source: rebuild" if objects else "no build compiles it"
            return block.fail(f"{shown}: {why}")
        if kind == "compiled":  # a header
            if user := self._fresh(self.header_deps.get(path, []), path):
                self.objects  # noqa: B018 (fills self.compilers)
                block.tool = self.compilers.get(user, "")
                return block.ok(f"{shown} is included by a compiled object ({user.name})")
            return block.fail(f"{shown}: no compiled object includes it (or its object is stale)")
        if kind == "configured":
            if self._fresh(self.cmake_inputs.get(path, []), path):
                block.tool = "cmake"
                return block.ok(f"{shown} is read by a configured CMake build")
            return block.fail(f"{shown}: no configured CMake build reads it (or the build is stale)")
        if kind == "built":
            if cache := self._fresh(self.skbuild_sources.get(path.parent, []), path):
                return block.ok(f"{shown} drives a scikit-build-core build ({cache.parent.name})")
            return block.fail(f"{shown}: no scikit-build-core build of its folder (or the build is stale)")
        if path.suffix.lower() == ".py":
            if path in self.test_modules:
                return block.ok(f"{shown} is a test module pytest runs")
            # `import m`, `from m import ...`, or loading it by file name ("m.py")
            imports = re.compile(rf"^\s*(?:from\s+{path.stem}\s+import|import\s+{path.stem}\b)|[\"']{path.stem}\.py[\"']",
                                 re.M)
            for test in sorted(self.test_modules):
                if test.parent == path.parent and imports.search(test.read_text()):
                    return block.ok(f"{shown} is imported by {test.name}, a test module pytest runs")
        return block.fail(f"{shown}: no build or test uses this file")
