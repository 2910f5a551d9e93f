"""A recipe as a folder a reader can take away: made self-contained, written out or zipped.

A self-contained recipe folder is the recipe folder as tracked (its sources,
CMakeLists.txt, tests, README.md and requirements.txt; no recipe imports this package),
plus exactly the helper headers its sources include (under ``include/ffi_cookbook/``,
where the checkout has a link to the shared folder) and ``notebook.ipynb``, converted
from the MyST notebook (:mod:`tools.jupyter`) so that Jupyter shows plain
Markdown. Nothing is rewritten; only the comment lines that mark the regions the
site's pages show (``// [name.begin]``) are left out.

Output is deterministic: the same sources give byte-identical folders and zips. The site
offers the zips (docs/_ext/recipe_downloads.py); the wheel build writes every recipe's folder
into the package (``python tools/takeaway.py --write-all DIR``, runtime/CMakeLists.txt), from
which an installed ``ffi-cookbook get`` copies it: the package converts nothing itself.
"""

from __future__ import annotations

import io
import os
import re
import stat
import sys
import zipfile
from pathlib import Path

if __package__ in (None, ""):  # run as a script by the wheel build (runtime/CMakeLists.txt)
    ROOT = Path(__file__).resolve().parents[1]
    sys.path[:0] = [str(ROOT), str(ROOT / "python")]

from ffi_cookbook.catalog import (C_SUFFIXES, HELPER_INCLUDE, RecipeError, _check_relative,  # noqa: E402
                                  helper_headers, recipe, recipes, source_files, write_files)
from tools.jupyter import notebook_ipynb  # noqa: E402

__all__ = ["recipe_files", "folder_files", "helper_headers", "strip_markers", "write_files", "write_recipe",
           "zip_bytes", "write_zip"]

#: A comment line that only marks a region a page shows: ``# [name.begin]``, ``// [name.end]``.
DOC_MARKER = re.compile(r"^[ \t]*(?:#|//|/\*|<!--)[ \t]*\[[\w.-]+\.(?:begin|end)\][ \t]*(?:\*/|-->)?[ \t]*(?:\n|$)",
                        re.M)
#: Files whose marker lines are left out of a self-contained folder.
TEXT_SUFFIXES = C_SUFFIXES | {".py", ".txt", ".toml", ".cmake", ".cfg", ".in", ".sh"}
#: Zip entries carry this time stamp, so that a zip depends only on its contents.
ZIP_DATE = (1980, 1, 1, 0, 0, 0)


# -- the files of a self-contained folder ----------------------------------------

def strip_markers(name: str, data: bytes) -> bytes:
    """``data`` without the comment lines that mark regions for the site's pages."""
    if Path(name).suffix not in TEXT_SUFFIXES and Path(name).name != "CMakeLists.txt":
        return data
    try:
        text = data.decode()
    except UnicodeDecodeError:
        return data
    return DOC_MARKER.sub("", text).encode()


def folder_files(folder: Path, skip: tuple = ()) -> dict[str, bytes]:
    """A folder's files as tracked, region markers left out, plus the helper headers its C/C++
    sources include: relative path -> bytes, sorted."""
    files: dict[str, bytes] = {}
    for path in source_files(folder):
        rel = path.relative_to(folder).as_posix()
        # An include/ (at the top or a project's: the link, followed where a copy made it a
        # folder, say an sdist) is left out: exactly the headers the sources include are added.
        if rel not in skip and "include" not in rel.split("/")[:2]:
            files[rel] = strip_markers(rel, path.read_bytes())
    # A project folder inside the recipe (a wheel's template/) gets the headers its own
    # sources include in its own include/; the recipe's sources, in the top one.
    projects = sorted({rel.split("/", 1)[0] for rel in files if "/" in rel and rel.endswith("/CMakeLists.txt")
                       and rel.count("/") == 1})
    for top in [""] + [p + "/" for p in projects]:
        inside = {rel: data for rel, data in files.items() if rel.startswith(top)
                  and not any(rel.startswith(p + "/") for p in projects if top == "")}
        files.update({top + rel: data for rel, data in helper_headers(inside).items()})
    return dict(sorted(files.items()))


def recipe_files(name: str) -> dict[str, bytes]:
    """Every file of the self-contained folder of recipe ``name``: relative path -> bytes."""
    r = recipe(name)
    for needed in ("README.md", "requirements.txt", "notebook.md"):
        if not (r.folder / needed).is_file():
            raise RecipeError(f"recipe {r.name} has no {needed}")
    # A recipe may have more pages (a deep dive beside notebook.md): each becomes an .ipynb too.
    pages = [p.name for p in sorted(r.folder.glob("*.md")) if "kernelspec:" in p.read_text()[:600]]
    notebooks = {page: notebook_ipynb(r.folder / page) for page in pages}
    files = folder_files(r.folder, skip=tuple(pages))
    for page, notebook in notebooks.items():
        files[page.removesuffix(".md") + ".ipynb"] = notebook
    return dict(sorted(files.items()))


# -- writing folders and zips ------------------------------------------------------

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


# -- the whole cookbook as one archive ---------------------------------------------------

#: Never part of the source archive when git cannot say what is tracked: builds, venvs, caches.
NOT_SOURCE = {".git", ".venv", "_build", "build", "__pycache__", ".ipynb_checkpoints", ".pytest_cache"}


def source_names(root: Path) -> list[str]:
    """The repository's files under ``root``: what git lists (tracked, and new files it does not
    ignore), or, outside a git checkout (an unpacked archive), every file but builds and caches."""
    import subprocess

    done = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                          cwd=root, capture_output=True, text=True)
    if done.returncode == 0 and (root / ".git").exists():
        return sorted(n for n in done.stdout.split("\0") if n and os.path.lexists(root / n))
    names = []
    for top, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in NOT_SOURCE)
        names += [str((Path(top) / f).relative_to(root)) for f in files]
        names += [str((Path(top) / d).relative_to(root)) for d in dirs if (Path(top) / d).is_symlink()]
    return sorted(names)


def source_archive(root: Path, top: str = "ffi-cookbook") -> bytes:
    """The repository's files as a ``.tar.gz`` under ``top/``: links kept as links, the executable
    bit kept, fixed owners and times, so the same files give the same bytes."""
    import gzip
    import tarfile

    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0) as packed, \
            tarfile.open(fileobj=packed, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for name in source_names(root):
            path = root / name
            info = tarfile.TarInfo(f"{top}/{name}")
            info.mtime, info.uid, info.gid, info.uname, info.gname = 315532800, 0, 0, "", ""
            if path.is_symlink():
                info.type, info.linkname, info.mode = tarfile.SYMTYPE, os.readlink(path), 0o777
                archive.addfile(info)
                continue
            data = path.read_bytes()
            info.size, info.mode = len(data), 0o755 if os.access(path, os.X_OK) else 0o644
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description="write every recipe's self-contained folder")
    parser.add_argument("--write-all", type=Path, required=True, metavar="DIR",
                        help="folder to hold one sub-folder per recipe (emptied first)")
    opts = parser.parse_args(argv)
    import shutil

    shutil.rmtree(opts.write_all, ignore_errors=True)
    for r in recipes():
        write_recipe(r.name, opts.write_all / r.name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
