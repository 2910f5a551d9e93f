"""Your own kernel library: ``ffi-cookbook new`` makes one, ``ffi-cookbook add`` puts recipes in it.

The library is a package in the shape of recipe 13 (scikit-build-core, tvm_ffi's
CMake package, a Python loader, pytest tests, CPU and optional CUDA), made from
``templates/newlib``. ``pyproject.toml`` carries a ``[tool.ffi-cookbook]`` table
naming the package, and ``CMakeLists.txt`` two marker lines; ``add`` requires
both. All kernels go into one ``lib<package>.so``; each added recipe is one
block of CMake lines between the markers, its sources under ``kernels/<recipe>/``
and its tests under ``tests/``, rewritten to load the package's library.

``add`` plans every file first and writes nothing when any check fails.
"""

from __future__ import annotations

import ast
import keyword
import re
from pathlib import Path

from ffi_cookbook.catalog import VARIANT_SUFFIXES, Recipe, RecipeError, recipe
from ffi_cookbook.catalog import helper_headers, write_files

TEMPLATE = Path(__file__).resolve().parent / "templates" / "newlib"
BEGIN, END = "# [cookbook_kernels.begin]", "# [cookbook_kernels.end]"
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_RESERVED = {"ffi_cookbook", "tvm_ffi", "torch", "numpy", "jax", "pytest", "tests", "test"}
_EXPORT = re.compile(r"TVM_FFI_DLL_EXPORT_TYPED_FUNC\(\s*(\w+)")
_LOCAL_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([\w./-]+)"', re.M)
_LIBRARY_FILE = re.compile(r"^lib\w+\.so$")
#: Kernel variants `add` takes; NVSHMEM kernels need their own build setup (recipe 07).
ADDED_VARIANTS = ("_cpu.cc", "_cuda.cu")


# -- new -----------------------------------------------------------------------

def check_name(name: str) -> None:
    """A package name: lower case, a Python identifier, not one the library imports."""
    if not _NAME.match(name) or keyword.iskeyword(name) or name in _RESERVED:
        raise RecipeError(f"{name!r} cannot name the library: use lower-case letters, digits and "
                          f"'_', start with a letter, and avoid {', '.join(sorted(_RESERVED))}")


def library_files(name: str) -> dict[str, bytes]:
    """The files of a new library called ``name``: relative path -> bytes."""
    check_name(name)
    files = {}
    for path in sorted(TEMPLATE.rglob("*")):
        if not path.is_file() or "__pycache__" in path.parts:
            continue
        rel = path.relative_to(TEMPLATE).as_posix().replace("PACKAGE", name)
        rel = ".gitignore" if rel == "gitignore" else rel
        text = path.read_text().replace("@name@", name).replace("@NAME@", name.upper())
        files[rel] = text.encode()
    files.update(helper_headers(files))
    return dict(sorted(files.items()))


def new_library(name: str, dest: str | Path) -> list[str]:
    """Write a new library package to ``dest`` (missing or empty); return the files written."""
    files = library_files(name)
    write_files(files, dest)
    return list(files)


# -- what add reads ------------------------------------------------------------------

def _package_in(pyproject: str) -> str | None:
    """``[tool.ffi-cookbook] package`` of a pyproject.toml (tomllib from Python 3.11, else a regex)."""
    try:
        import tomllib
    except ImportError:  # Python < 3.11: the table as `new` writes it
        table = re.search(r'^\[tool\.ffi-cookbook\]\s*\npackage\s*=\s*"(\w+)"', pyproject, re.M)
        return table[1] if table else None
    try:
        package = tomllib.loads(pyproject).get("tool", {}).get("ffi-cookbook", {}).get("package")
    except tomllib.TOMLDecodeError:
        return None
    return package if isinstance(package, str) and _NAME.match(package) else None


def library_package(folder: Path) -> str:
    """The package name of a library made by ``new``; RecipeError when ``folder`` is not one."""
    pyproject = folder / "pyproject.toml"
    package = _package_in(pyproject.read_text()) if pyproject.is_file() else None
    if not package:
        raise RecipeError(f"{folder} is not a kernel library made by `ffi-cookbook new`: "
                          "it has no pyproject.toml with a [tool.ffi-cookbook] table naming the package")
    cmake = folder / "CMakeLists.txt"
    lines = cmake.read_text().splitlines() if cmake.is_file() else []
    if lines.count(BEGIN) != 1 or lines.count(END) != 1 or lines.index(BEGIN) > lines.index(END):
        raise RecipeError(f"{cmake} does not have the two lines `add` writes between, "
                          f"{BEGIN!r} and then {END!r}")
    if not (folder / "python" / package / "__init__.py").is_file():
        raise RecipeError(f"{folder}: the package python/{package}/ is missing")
    return package


def kernel_sources(r: Recipe) -> dict[str, bytes]:
    """The CPU and CUDA kernel files of a recipe and the recipe's own headers they include."""
    files = {p.name: p.read_bytes() for p in sorted(r.folder.iterdir())
             if p.is_file() and p.name.endswith(ADDED_VARIANTS)}
    todo = list(files.values())
    while todo:
        for name in _LOCAL_INCLUDE.findall(todo.pop().decode()):
            path = r.folder / name
            if name not in files and path.is_file():
                files[name] = path.read_bytes()
                todo.append(files[name])
    return dict(sorted(files.items()))


def _exports(texts) -> set[str]:
    return {name for text in texts for name in _EXPORT.findall(text.decode(errors="replace"))}


def _lib_references(tree: ast.AST) -> list[ast.Constant]:
    return [n for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and _LIBRARY_FILE.match(n.value)]


def cannot_add(r: Recipe) -> str | None:
    """Why recipe ``r`` cannot be added to a library, or None when it can."""
    kernels = kernel_sources(r)
    if "NVSHMEM" in r.variants:
        return "NVSHMEM kernels need a build of their own (relocatable device code, the NVSHMEM libraries)"
    if not any(name.endswith("_cpu.cc") for name in kernels):
        return "it has no <stem>_cpu.cc kernel"
    others = sorted(p.name for p in r.folder.iterdir() if p.is_file() and p.suffix in
                    {".c", ".cc", ".cpp", ".cu", ".py"} and p.name not in kernels
                    and not p.name.startswith("test_")
                    # registers the timing mark, which the library's pyproject.toml registers too
                    and p.name != "conftest.py")
    if others:
        return f"it is more than kernels and their tests ({', '.join(others)})"
    tests = sorted(r.folder.glob("test_*.py"))
    if not tests:
        return "it has no test_*.py"
    for test in tests:
        libraries = {n.value for n in _lib_references(ast.parse(test.read_text()))}
        if len(libraries) != 1:
            return f"{test.name} loads {len(libraries)} libraries, not exactly one"
    return None


def library_test(text: str, package: str, where: str) -> str:
    """A recipe test rewritten for the library: it loads ``<package>.library_path()``.

    Every ``<path> / "libX.so"`` becomes ``<package>.library_path()``; nothing else changes.
    """
    tree = ast.parse(text)
    references = _lib_references(tree)
    paths = [n for n in ast.walk(tree) if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div)
             and n.right in references]
    if not paths or len(paths) != len(references):
        raise RecipeError(f"{where}: the library is not named as `<folder> / \"libX.so\"`; cannot rewrite it")
    data = text.encode()
    starts = [0]
    for line in data.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))

    def offset(line: int, col: int) -> int:  # ast columns count UTF-8 bytes
        return starts[line - 1] + col

    for node in sorted(paths, key=lambda n: (n.lineno, n.col_offset), reverse=True):
        begin, end = offset(node.lineno, node.col_offset), offset(node.end_lineno, node.end_col_offset)
        data = data[:begin] + f"{package}.library_path()".encode() + data[end:]
    last_import = max(n.end_lineno for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom)))
    at = starts[last_import]
    return (data[:at] + f"import {package}\n".encode() + data[at:]).decode()


def _cmake_block(r: Recipe, package: str, kernels: dict[str, bytes]) -> str:
    cpu = [f"kernels/{r.name}/{n}" for n in kernels if n.endswith("_cpu.cc")]
    cuda = [f"kernels/{r.name}/{n}" for n in kernels if n.endswith("_cuda.cu")]
    lines = [f"# {r.name}: {r.title} (ffi-cookbook add)",
             f"target_sources({package} PRIVATE {' '.join(cpu)})"]
    if cuda:
        lines += ["if(with_cuda)", f"  target_sources({package} PRIVATE {' '.join(cuda)})", "endif()"]
    return "\n".join(lines) + "\n"


def _merged_requirements(current: str, recipe_requirements: str) -> str:
    """``current`` plus the recipe's requirement lines it lacks (not apache-tvm-ffi: a dependency)."""
    have = {line.strip() for line in current.splitlines()}
    extra = [line.strip() for line in recipe_requirements.splitlines()
             if line.strip() and not line.startswith("#") and not line.startswith("apache-tvm-ffi")
             and line.strip() not in have]
    body = current if current.endswith("\n") or not current else current + "\n"
    return body + "".join(f"{line}\n" for line in extra)


# -- add -----------------------------------------------------------------------------

def plan_add(name: str, folder: str | Path) -> tuple[dict[str, bytes], dict[str, bytes]]:
    """(new files, changed files) that adding recipe ``name`` to ``folder`` writes.

    Raises RecipeError, having written nothing, for an unknown recipe, a folder
    that is not a library made by ``new``, or a file that would be overwritten.
    """
    r = recipe(name)
    folder = Path(folder)
    package = library_package(folder)
    reason = cannot_add(r)
    if reason:
        raise RecipeError(f"recipe {r.name} cannot be added to a library: {reason}; "
                          f"take the whole folder with `ffi-cookbook get {r.name} DIR`")
    kernels = kernel_sources(r)
    new: dict[str, bytes] = {f"kernels/{r.name}/{n}": data for n, data in kernels.items()}
    for test in sorted(r.folder.glob("test_*.py")):
        new[f"tests/{test.name}"] = library_test(test.read_text(), package, f"{r.name}/{test.name}").encode()
    shared = dict(helper_headers(kernels))

    problems = [f"{rel} exists" for rel in new if (folder / rel).exists()]
    if (folder / "kernels" / r.name).exists():
        problems.insert(0, f"kernels/{r.name}/ exists (was {r.name} added already?)")
    for rel, data in shared.items():  # needed by several recipes: written once, the same bytes
        path = folder / rel
        if path.exists() and path.read_bytes() != data:
            problems.append(f"{rel} exists with different content")
        elif not path.exists():
            new[rel] = data
    existing = [p.read_bytes() for sub in ("src", "kernels") for p in sorted((folder / sub).rglob("*"))
                if p.is_file() and p.suffix in {".cc", ".cu", ".cpp"}]
    clash = _exports(kernels.values()) & _exports(existing)
    if clash:
        problems.append(f"the library already exports {', '.join(sorted(clash))}")
    if problems:
        raise RecipeError(f"not adding {r.name} to {folder}, nothing written: " + "; ".join(problems))

    cmake = (folder / "CMakeLists.txt").read_text()
    cmake = cmake.replace(END, _cmake_block(r, package, kernels) + END, 1)
    requirements = folder / "requirements-test.txt"
    current = requirements.read_text() if requirements.is_file() else ""
    changed = {"CMakeLists.txt": cmake.encode(),
               "requirements-test.txt": _merged_requirements(
                   current, (r.folder / "requirements.txt").read_text()).encode()}
    return dict(sorted(new.items())), changed


def add_recipe(name: str, folder: str | Path) -> list[str]:
    """Add recipe ``name`` to the library in ``folder``; return the files written or changed."""
    new, changed = plan_add(name, folder)
    folder = Path(folder)
    for rel, data in {**new, **changed}.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return sorted(new) + sorted(changed)


def kernel_names(name: str) -> list[str]:
    """The functions recipe ``name`` adds to a library (its CPU and CUDA exports)."""
    return sorted(_exports(kernel_sources(recipe(name)).values()))


__all__ = ["ADDED_VARIANTS", "VARIANT_SUFFIXES", "add_recipe", "cannot_add", "kernel_names",
           "library_files", "library_package", "new_library", "plan_add"]
