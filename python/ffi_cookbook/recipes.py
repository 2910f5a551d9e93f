"""Recipes as folders a reader can take away: list them, write one self-contained, zip it.

A self-contained recipe folder needs nothing from this package: it holds the
recipe's sources, CMakeLists.txt, tests, README.md and requirements.txt, exactly
the helper headers its sources include (under ``include/ffi_cookbook/``), the
Python helpers its tests and notebook import, if any (vendored as ``cookbook_build.py``
and ``cookbook_testing.py``) and ``notebook.ipynb``, converted from the MyST notebook
so that Jupyter shows plain Markdown. The comment lines that mark the regions the
site's pages show (``// [name.begin]``) are left out: a reader copies the files
as they are.

The recipes are read from the checkout's ``cookbook/`` folder, or from the copy
an installed wheel carries (``ffi_cookbook/data/cookbook``). Output is
deterministic: the same sources give byte-identical folders and zips.
"""

from __future__ import annotations

import io
import json
import os
import posixpath
import re
import stat
import subprocess
import zipfile
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "Recipe", "RecipeError", "recipes", "recipe", "recipe_files", "folder_files", "code_folder_files",
    "code_folder_name",
    "notebook_ipynb", "strip_markers", "write_files", "write_recipe", "zip_bytes", "write_zip",
]

_PACKAGE_DIR = Path(__file__).resolve().parent

#: Kernel variants by file-name suffix (the runtime library collects the same names).
VARIANT_SUFFIXES = {"_cpu.cc": "CPU", "_cuda.cu": "CUDA", "_nvshmem.cu": "NVSHMEM"}
C_SUFFIXES = {".c", ".cc", ".cpp", ".cu", ".cuh", ".h", ".hpp"}
#: Never part of a folder: build outputs and caches (hidden folders are skipped too).
SKIP_DIRS = {"build", "_build", "dist", "__pycache__"}
SKIP_SUFFIXES = {".pyc", ".so", ".o", ".a", ".whl"}
HELPER_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"](ffi_cookbook/[\w./-]+)[>"]', re.M)
#: The only imports of this package a recipe may use, and what they become.
IMPORT_REWRITES = {
    "from ffi_cookbook.build import": "from cookbook_build import",
    "from ffi_cookbook.testing import": "from cookbook_testing import",
}
VENDORED = {"cookbook_build.py": "build.py", "cookbook_testing.py": "testing.py"}
#: A comment line that only marks a region a page shows: ``# [name.begin]``, ``// [name.end]``.
DOC_MARKER = re.compile(r"^[ \t]*(?:#|//|/\*|<!--)[ \t]*\[[\w.-]+\.(?:begin|end)\][ \t]*(?:\*/|-->)?[ \t]*(?:\n|$)",
                        re.M)
#: Files whose marker lines are left out of a self-contained folder.
TEXT_SUFFIXES = C_SUFFIXES | {".py", ".txt", ".toml", ".cmake", ".cfg", ".in", ".sh"}
_VENDORED_IMPORT = re.compile(r"^[ \t]*(?:from|import)[ \t]+(cookbook_build|cookbook_testing)\b", re.M)
_OTHER_IMPORT = re.compile(r"^[ \t]*(?:from|import)[ \t]+ffi_cookbook\b.*$", re.M)
#: Zip entries carry this time stamp, so that a zip depends only on its contents.
ZIP_DATE = (1980, 1, 1, 0, 0, 0)


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

        CUDA code is a CUDA variant or any other ``.cu`` file (a fatbin's kernel, a demo).
        """
        if "NVSHMEM" in self.variants:
            return "required"
        return "optional" if "CUDA" in self.variants or any(self.folder.glob("*.cu")) else "no"

    @property
    def number(self) -> str:
        return self.name.split("-", 1)[0]


def _title(notebook: Path) -> str:
    for line in notebook.read_text().splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    raise RecipeError(f"{notebook}: no '# title' line")


def _variants(folder: Path) -> tuple:
    """Device variants by file name; any other C/C++ source (not CUDA) counts as CPU."""
    found = {label for path in _walk(folder) for suffix, label in VARIANT_SUFFIXES.items()
             if path.name.endswith(suffix)}
    if any(p.suffix in {".c", ".cc", ".cpp"} for p in _walk(folder)):
        found.add("CPU")
    return tuple(label for label in VARIANT_SUFFIXES.values() if label in found)


def recipes() -> list[Recipe]:
    """Every recipe, in reading order."""
    return [Recipe(p.name, p, _title(p / "notebook.md"), _variants(p))
            for p in sorted(cookbook_dir().iterdir())
            if p.is_dir() and re.match(r"\d\d-", p.name) and (p / "notebook.md").is_file()]


def recipe(name: str) -> Recipe:
    """A recipe by folder name ("10-rmsnorm"), slug ("rmsnorm") or number ("10")."""
    every = recipes()
    for r in every:
        if name in (r.name, r.number, r.name.split("-", 1)[1]):
            return r
    known = ", ".join(r.name for r in every)
    raise RecipeError(f"unknown recipe {name!r}; the recipes are: {known}")


# -- the files of a self-contained folder ----------------------------------------

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


def _walk(folder: Path):
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


def rewrite_imports(text: str, where: str) -> str:
    """Point ``ffi_cookbook.build``/``.testing`` imports at the vendored copies.

    Raises RecipeError for any other import of ffi_cookbook: a self-contained
    folder does not have the package.
    """
    for old, new in IMPORT_REWRITES.items():
        text = text.replace(old, new)
    other = _OTHER_IMPORT.search(text)
    if other:
        raise RecipeError(f"{where}: '{other.group(0).strip()}' needs the ffi_cookbook package; "
                          "recipes may import only ffi_cookbook.build and ffi_cookbook.testing")
    return text


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


def vendored_helpers(needed: set[str] | None = None) -> dict[str, bytes]:
    """``cookbook_build.py`` and ``cookbook_testing.py``: this package's two stdlib-only helpers.

    With ``needed`` (module names, e.g. ``{"cookbook_build"}``), only those; the
    testing helper imports the build helper, so it brings it along.
    """
    if needed is not None and "cookbook_testing" in needed:
        needed = needed | {"cookbook_build"}
    return {name: rewrite_imports((_PACKAGE_DIR / source).read_text(), name).encode()
            for name, source in VENDORED.items()
            if needed is None or name.removesuffix(".py") in needed}


def strip_markers(name: str, data: bytes) -> bytes:
    """``data`` without the comment lines that mark regions for the site's pages."""
    if Path(name).suffix not in TEXT_SUFFIXES and Path(name).name != "CMakeLists.txt":
        return data
    try:
        text = data.decode()
    except UnicodeDecodeError:
        return data
    return DOC_MARKER.sub("", text).encode()


def vendored_imports(files: dict[str, bytes], notebook: str = "") -> set[str]:
    """The vendored helper modules (``cookbook_build``, ``cookbook_testing``) that
    ``files``' Python sources or ``notebook``'s cells import."""
    texts = [data.decode() for name, data in files.items() if name.endswith(".py")] + [notebook]
    return {m for text in texts for m in _VENDORED_IMPORT.findall(text)}


def folder_files(folder: Path, skip: tuple = (), notebook: str | None = None) -> dict[str, bytes]:
    """A folder's sources made self-contained: relative path -> bytes, sorted.

    Python files get their ffi_cookbook imports rewritten and region markers are
    left out; the helper headers the C/C++ sources include are added, and the
    vendored Python helpers that its Python files (or ``notebook``'s code, when
    given) import. Without ``notebook`` both helpers are added.
    """
    files: dict[str, bytes] = {}
    for path in _walk(folder):
        rel = path.relative_to(folder).as_posix()
        if rel in skip:
            continue
        data = path.read_bytes()
        if path.suffix == ".py":
            data = rewrite_imports(data.decode(), rel).encode()
        files[rel] = strip_markers(rel, data)
    clash = set(files) & (set(VENDORED) | {"include"})
    if clash:
        raise RecipeError(f"{folder}: {sorted(clash)} would be overwritten by the vendored helpers")
    # A project folder inside the recipe (a wheel's template/) gets the headers its own
    # sources include in its own include/; the recipe's sources, in the top one.
    projects = sorted({rel.split("/", 1)[0] for rel in files if "/" in rel and rel.endswith("/CMakeLists.txt")
                       and rel.count("/") == 1})
    for top in [""] + [p + "/" for p in projects]:
        inside = {rel: data for rel, data in files.items() if rel.startswith(top)
                  and not any(rel.startswith(p + "/") for p in projects if top == "")}
        files.update({top + rel: data for rel, data in helper_headers(inside).items()})
    files.update(vendored_helpers(None if notebook is None else vendored_imports(files, notebook)))
    return dict(sorted(files.items()))


def code_folder_files(folder: Path) -> dict[str, bytes]:
    """The ``code/`` folder of a guide or concept page, self-contained, with a README.

    Its zip's top folder is ``code_folder_name(folder)``, e.g. ``guides-code``.
    """
    files = folder_files(folder)
    section = folder.parent.name
    files["README.md"] = (
        f"# Code of the {section} pages of the TVM FFI Kernel Cookbook\n\n"
        "The C, C++ and CUDA files those pages show, with the helper headers they include\n"
        "(`include/ffi_cookbook/`). Build them with a Python that has\n"
        "`apache-tvm-ffi==0.1.15.post2` (with `nvcc` on `PATH` the CUDA sources too):\n\n"
        "```bash\n"
        'cmake -S . -B build -DPython_EXECUTABLE="$(command -v python)"\n'
        "cmake --build build\n"
        "```\n").encode()
    return dict(sorted(files.items()))


def code_folder_name(folder: Path) -> str:
    return f"{folder.parent.name}-code"


def recipe_files(name: str) -> dict[str, bytes]:
    """Every file of the self-contained folder of recipe ``name``: relative path -> bytes."""
    r = recipe(name)
    for needed in ("README.md", "requirements.txt", "notebook.md"):
        if not (r.folder / needed).is_file():
            raise RecipeError(f"recipe {r.name} has no {needed}")
    # A recipe may have more pages (a deep dive beside notebook.md): each becomes an .ipynb too.
    pages = [p.name for p in sorted(r.folder.glob("*.md")) if "kernelspec:" in p.read_text()[:600]]
    notebooks = {page: notebook_ipynb(r.folder / page) for page in pages}
    code = "\n".join("".join(c["source"]) for nb in notebooks.values()
                     for c in json.loads(nb)["cells"] if c["cell_type"] == "code")
    files = folder_files(r.folder, skip=tuple(pages), notebook=code)
    for page, notebook in notebooks.items():
        files[page.removesuffix(".md") + ".ipynb"] = notebook
    return dict(sorted(files.items()))


# -- notebook.md -> notebook.ipynb -------------------------------------------------

_FENCE_DIRECTIVE = re.compile(
    r"^(?P<fence>`{3,})\{(?P<name>[\w-]+)\}[ \t]*(?P<arg>[^\n]*)\n"
    r"(?P<options>(?:[ \t]*:[\w-]+:[^\n]*\n)*)"
    r"(?P<body>.*?)^(?P=fence)[ \t]*$\n?", re.M | re.S)
_COLON_OPEN = re.compile(r"^(:{3,})\{([\w-]+)\}[ \t]*(.*)$")
_OPTION = re.compile(r"^[ \t]*:([\w-]+):[ \t]*(.*?)[ \t]*$", re.M)
_ROLE = re.compile(r"\{(?P<role>[\w:-]+)\}`(?P<text>[^`]+)`")
_EXPLICIT_TITLE = re.compile(r"^(?P<title>.+?)\s*<(?P<target>[^<>]+)>$", re.S)
_ADMONITIONS = {"note", "tip", "hint", "important", "warning", "caution", "attention", "seealso"}


def literalinclude_text(path: Path, options: dict[str, str]) -> str:
    """What ``literalinclude`` shows: the whole file, or the lines between two markers."""
    lines = path.read_text().splitlines()
    start, end = (options.get(k, "").strip("\"'") for k in ("start-after", "end-before"))
    if start:
        hits = [i for i, line in enumerate(lines) if start in line]
        if not hits:
            raise RecipeError(f"{path.name}: no line contains {start!r}")
        lines = lines[hits[0] + 1:]
    if end:
        hits = [i for i, line in enumerate(lines) if end in line]
        if not hits:
            raise RecipeError(f"{path.name}: no line contains {end!r}")
        lines = lines[:hits[0]]
    return "\n".join(lines).strip("\n")


def _fenced(language: str, text: str) -> str:
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}{language}\n{text}\n{fence}\n"


def _directive(match: re.Match, folder: Path, where: str) -> str:
    name, arg, body = match["name"], match["arg"].strip(), match["body"]
    options = dict(_OPTION.findall(match["options"]))
    if name == "literalinclude":
        path = folder / arg
        if not path.is_file():
            raise RecipeError(f"{where}: literalinclude of a missing file {arg}")
        return _fenced(options.get("language", ""), literalinclude_text(path, options))
    if name == "toctree":  # a recipe's second page, a file beside the notebook in the zip
        return ""
    if name == "snippet":
        note = f"*Not run by this notebook: {options['pseudo']}.*\n\n" if "pseudo" in options else ""
        return note + _fenced(arg, body.rstrip("\n"))
    if name in _ADMONITIONS:
        title = arg or name.capitalize()
        quoted = "\n".join(f"> {line}".rstrip() for line in body.rstrip("\n").splitlines())
        return f"> **{title}**\n>\n{quoted}\n"
    raise RecipeError(f"{where}: the {{{name}}} directive has no plain-Markdown form; "
                      "teach ffi_cookbook.recipes to convert it")


def _role(match: re.Match, folder: Path) -> str:
    role, text = match["role"], " ".join(match["text"].split())
    if role == "math":
        return f"${text}$"
    explicit = _EXPLICIT_TITLE.match(text)
    if role.startswith(("cpp:", "py:")):  # a C++ name linked to the API page, or a Python name
        # linked to its project's docs (intersphinx): stays code, without the link
        return f"`{explicit['title'] if explicit else text}`"
    if role == "doc":  # another page of the same recipe: its .ipynb in the zip
        parts = posixpath.normpath(posixpath.join(folder.name, explicit["target"] if explicit else text)).split("/")
        if len(parts) == 2 and parts[0] == folder.name and (folder / f"{parts[1]}.md").is_file():
            name = f"`{parts[1]}.ipynb`"
            return f"{explicit['title']} ({name})" if explicit else name
    if explicit:
        return explicit["title"]
    if role == "doc":  # a page named by its path: name the recipe folder instead
        target = posixpath.normpath(posixpath.join(folder.name, text))
        parts = target.split("/")
        if len(parts) == 2 and parts[1] == "notebook" and re.match(r"\d\d-", parts[0]):
            return f"`{parts[0]}`"
        return f"`{text}`"
    return f"`{text}`"


def _myst_slug(heading: str) -> str:
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def markdown_for_jupyter(text: str, folder: Path, where: str, anchors: dict[str, str]) -> str:
    """MyST Markdown -> Markdown Jupyter renders: directives, roles and anchors made plain."""
    text = _FENCE_DIRECTIVE.sub(lambda m: _directive(m, folder, where), text)
    kept = []
    for line in text.splitlines():
        opened = _COLON_OPEN.match(line)
        if opened and opened[2] == "tab-item":
            kept.append(f"\n**{opened[3].strip()}**\n")
        elif opened and opened[2] == "tab-set":
            continue
        elif opened:
            raise RecipeError(f"{where}: the {{{opened[2]}}} directive has no plain-Markdown form")
        elif re.fullmatch(r":{3,}[ \t]*", line):
            continue  # the end of a tab-set or tab-item
        else:
            kept.append(line)
    text = "\n".join(kept)
    text = _ROLE.sub(lambda m: _role(m, folder), text)
    return re.sub(r"\]\(#([\w-]+)\)", lambda m: f"](#{anchors.get(m[1], m[1])})", text)


def _jupyter_anchors(markdown_cells: list[str]) -> dict[str, str]:
    """MyST heading slug -> the anchor Jupyter gives the same heading."""
    anchors = {}
    for source in markdown_cells:
        for heading in re.findall(r"^#{1,6}[ \t]+(.+?)[ \t]*$", source, re.M):
            anchors[_myst_slug(heading)] = heading.replace(" ", "-")
    return anchors


def _with_where_to_run(first_cell: str, name: str) -> str:
    """Say, under the title, that the notebook runs in its recipe folder."""
    note = (f"> This notebook is recipe `{name}` of the TVM FFI Kernel Cookbook. It builds the\n"
            "> sources next to it: run it in the recipe's folder (the recipe zip from the site,\n"
            f"> or `ffi-cookbook get {name} DIR`) after `pip install -r requirements.txt`.\n")
    title, _, rest = first_cell.partition("\n")
    if not title.startswith("# "):
        return note + "\n" + first_cell
    return f"{title}\n\n{note}\n{rest.lstrip(chr(10))}"


def notebook_ipynb(notebook_md: Path) -> bytes:
    """A MyST text notebook as a plain ``.ipynb`` that runs in a self-contained folder."""
    import jupytext  # only the notebook conversion needs it

    nb = jupytext.read(notebook_md)
    where = notebook_md.name
    anchors = _jupyter_anchors([c.source for c in nb.cells if c.cell_type == "markdown"])
    cells = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            source = markdown_for_jupyter(cell.source, notebook_md.parent, where, anchors)
            if index == 0:
                source = _with_where_to_run(source, notebook_md.parent.name)
        elif cell.cell_type == "code":
            source = rewrite_imports(cell.source, f"{where}, code cell {index}")
        else:
            source = cell.source
        entry = {"cell_type": cell.cell_type, "id": f"cell-{index}",
                 "metadata": dict(cell.metadata), "source": source}
        if cell.cell_type == "code":
            entry.update(execution_count=None, outputs=[])
        cells.append(entry)
    metadata = {"kernelspec": nb.metadata.get("kernelspec", {
        "display_name": "Python 3", "language": "python", "name": "python3"}),
        "language_info": {"name": "python"}}
    document = {"cells": cells, "metadata": metadata, "nbformat": 4, "nbformat_minor": 5}
    return (json.dumps(document, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode()


# -- writing folders and zips ------------------------------------------------------

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


def write_recipe(name: str, dest: str | Path) -> Path:
    """Write the self-contained folder of recipe ``name`` to ``dest``; return ``dest``."""
    return write_files(recipe_files(name), dest)


def zip_bytes(files: dict[str, bytes], top: str) -> bytes:
    """``files`` zipped under the folder ``top/``: sorted entries, fixed time stamps."""
    _check_relative(top)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(files):
            _check_relative(name)
            info = zipfile.ZipInfo(f"{top}/{name}", date_time=ZIP_DATE)
            info.external_attr = (stat.S_IFREG | 0o644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, files[name])
    return buffer.getvalue()


def write_zip(files: dict[str, bytes], top: str, path: str | Path) -> Path:
    """Write ``zip_bytes(files, top)`` to ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(zip_bytes(files, top))
    return path
