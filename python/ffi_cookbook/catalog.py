"""The recipes of the cookbook: where they are, their names, titles and device variants.

The recipes are read from the checkout's ``cookbook/`` folder, or from the copy
an installed wheel carries (``ffi_cookbook/data/cookbook``).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Recipe", "RecipeError", "recipes", "recipe", "cookbook_dir", "helper_include_dir", "source_files",
           "helper_headers", "write_files", "write_recipe"]

_PACKAGE_DIR = Path(__file__).resolve().parent

#: Kernel variants by file-name suffix (the runtime library collects the same names).
VARIANT_SUFFIXES = {"_cpu.cc": "CPU", "_cuda.cu": "CUDA", "_nvshmem.cu": "NVSHMEM"}
#: Never part of a folder: build outputs and caches (hidden folders are skipped too).
SKIP_DIRS = {"build", "_build", "dist", "__pycache__"}
SKIP_SUFFIXES = {".pyc", ".so", ".o", ".a", ".whl"}


C_SUFFIXES = {".c", ".cc", ".cpp", ".cu", ".cuh", ".h", ".hpp"}
HELPER_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"](ffi_cookbook/[\w./-]+)[>"]', re.M)
_CUDA_RUNTIME = re.compile(r"#include\s*<cuda_runtime(_api)?\.h>")


class RecipeError(ValueError):
    """A recipe that does not exist, or a folder that cannot be made self-contained."""


# -- where things are --------------------------------------------------------

def _checkout() -> Path | None:
    """The source checkout this module runs from, if it does."""
    root = _PACKAGE_DIR.parents[1]
    if (root / "cookbook").is_dir() and (root / "include" / "ffi_cookbook").is_dir():
        return root
    return None


def cookbook_dir() -> Path:
    """The folder holding the recipes: the checkout's ``cookbook/`` or the wheel's copy."""
    root = _checkout()
    folder = root / "cookbook" if root else _PACKAGE_DIR / "data" / "cookbook"
    if not folder.is_dir():
        raise RecipeError(f"no recipes found at {folder}: reinstall the ffi-cookbook package")
    return folder


def helper_include_dir() -> Path:
    """The folder holding ``ffi_cookbook/*.h``: the checkout's ``include/`` or the wheel's copy."""
    root = _checkout()
    return root / "include" if root else _PACKAGE_DIR / "include"


# -- recipes and what they show ------------------------------------------------

@dataclass(frozen=True)
class Recipe:
    """One recipe folder and what ``ffi-cookbook list`` says about it."""

    name: str  #: folder name, e.g. "10-rmsnorm"
    folder: Path
    title: str  #: the notebook's title: what the recipe shows
    variants: tuple  #: ("CPU", "CUDA", "NVSHMEM") found from its source file names

    @property
    def gpu(self) -> str:
        """'no', 'optional' (CUDA code next to what runs on the CPU) or 'required' (NVSHMEM).

        CUDA code is a CUDA variant, any other ``.cu`` file (a fatbin's kernel, a demo), or C++
        that launches GPU code through the CUDA runtime (recipe 25's launcher of a Triton cubin).
        """
        if "NVSHMEM" in self.variants:
            return "required"
        cuda = ("CUDA" in self.variants or any(self.folder.glob("*.cu"))
                or any(_CUDA_RUNTIME.search(p.read_text(errors="replace")) for p in self.folder.glob("*.cc")))
        return "optional" if cuda else "no"

    @property
    def number(self) -> str:
        return self.name.split("-", 1)[0]


def _notebook(folder: Path) -> Path:
    """A recipe's notebook: ``notebook.md`` in the checkout, ``notebook.ipynb`` in a wheel's copy."""
    md = folder / "notebook.md"
    return md if md.is_file() else folder / "notebook.ipynb"


def _title(notebook: Path) -> str:
    text = notebook.read_text()
    if notebook.suffix == ".ipynb":
        text = "\n".join("".join(c["source"]) for c in json.loads(text)["cells"] if c["cell_type"] == "markdown")
    for line in text.splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    raise RecipeError(f"{notebook}: no '# title' line")


def _variants(folder: Path) -> tuple:
    """Device variants by file name; any other C/C++ source (not CUDA) counts as CPU."""
    files = list(source_files(folder))  # one git listing, not two
    found = {label for path in files for suffix, label in VARIANT_SUFFIXES.items() if path.name.endswith(suffix)}
    if any(p.suffix in {".c", ".cc", ".cpp"} for p in files):
        found.add("CPU")
    return tuple(label for label in VARIANT_SUFFIXES.values() if label in found)


def _folders() -> list[Path]:
    """Every recipe's folder, in reading order."""
    return [p for p in sorted(cookbook_dir().iterdir())
            if p.is_dir() and re.match(r"\d\d-", p.name) and _notebook(p).is_file()]


def _recipe(folder: Path) -> Recipe:
    return Recipe(folder.name, folder, _title(_notebook(folder)), _variants(folder))


def recipes() -> list[Recipe]:
    """Every recipe, in reading order."""
    return [_recipe(p) for p in _folders()]


def recipe(name: str) -> Recipe:
    """A recipe by folder name ("10-rmsnorm"), slug ("rmsnorm") or number ("10")."""
    folders = _folders()
    for p in folders:  # only the one found is read (its files listed), not every recipe
        if name in (p.name, p.name.split("-", 1)[0], p.name.split("-", 1)[1]):
            return _recipe(p)
    known = ", ".join(p.name for p in folders)
    raise RecipeError(f"unknown recipe {name!r}; the recipes are: {known}")



# -- the files of a folder ------------------------------------------------------------

def _git_listed(folder: Path) -> set[str] | None:
    """Files git shows under ``folder`` of this checkout (tracked, or new and not ignored).

    None outside a checkout (an installed wheel's copy holds only sources).
    """
    root = _checkout()
    if root is None or not folder.resolve().is_relative_to(root.resolve()):
        return None
    done = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "."],
                          cwd=folder, capture_output=True, text=True)
    return set(done.stdout.split("\0")) - {""} if done.returncode == 0 else None


def source_files(folder: Path):
    """The files of ``folder``, sorted: what git lists in a checkout, never builds or caches."""
    listed = _git_listed(folder)
    for top, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
        for name in sorted(names):
            path = Path(top) / name
            rel = path.relative_to(folder).as_posix()
            if (path.is_symlink() or path.suffix in SKIP_SUFFIXES
                    or (listed is not None and rel not in listed)):
                continue
            yield path


def helper_headers(sources: dict[str, bytes]) -> dict[str, bytes]:
    """The helper headers ``sources`` include, directly or through each other.

    Returns ``{"include/ffi_cookbook/X.h": content}``.
    """
    include_root = helper_include_dir()
    todo = [text for name, text in sources.items() if Path(name).suffix in C_SUFFIXES]
    found: dict[str, bytes] = {}
    while todo:
        for header in HELPER_INCLUDE.findall(todo.pop().decode()):
            if f"include/{header}" in found:
                continue
            path = include_root / header
            if not path.is_file():
                raise RecipeError(f"#include <{header}>: no such helper header in {include_root}")
            found[f"include/{header}"] = path.read_bytes()
            todo.append(found[f"include/{header}"])
    return dict(sorted(found.items()))


def _check_relative(name: str) -> None:
    parts = name.split("/")
    if name.startswith("/") or ".." in parts or "" in parts or "\\" in name:
        raise RecipeError(f"refusing to write {name!r}: not a plain relative path")


def write_files(files: dict[str, bytes], dest: str | Path) -> Path:
    """Write ``files`` under ``dest``, which must not exist or be an empty folder."""
    dest = Path(dest)
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise RecipeError(f"{dest} exists and is not an empty folder")
    for name, data in files.items():
        _check_relative(name)
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return dest




def write_recipe(r: Recipe, dest: str | Path) -> Path:
    """Write recipe ``r``'s self-contained folder to ``dest`` (missing or empty).

    An installed wheel holds each recipe's folder made at its build (tools/takeaway.py): it is
    copied as it is. In a checkout, the checkout's tools/takeaway.py makes it now."""
    if _checkout() is None:
        return write_files({p.relative_to(r.folder).as_posix(): p.read_bytes() for p in source_files(r.folder)}, dest)
    import sys

    sys.path.insert(0, str(_checkout()))
    from tools import takeaway

    return takeaway.write_recipe(r.name, dest)
