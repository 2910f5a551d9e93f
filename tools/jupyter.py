"""A MyST text notebook as a plain Jupyter notebook: directives, roles and anchors made Markdown.

A recipe's ``notebook.md`` uses MyST (``literalinclude``, ``{doc}`` links, admonitions,
tabs); Jupyter renders none of it. :func:`notebook_ipynb` writes the ``.ipynb`` a
self-contained recipe folder carries (:mod:`tools.takeaway`).
"""

from __future__ import annotations

import json
import posixpath
import re
from pathlib import Path

from ffi_cookbook.catalog import RecipeError

__all__ = ["notebook_ipynb", "markdown_for_jupyter", "literalinclude_text"]

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
                      "teach tools.jupyter to convert it")


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
    """A MyST text notebook as a plain ``.ipynb`` that runs in a self-contained folder: its
    code cells as they are, its Markdown made plain."""
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
            source = cell.source
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
