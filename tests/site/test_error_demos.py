"""An error demonstration on a page fails when nothing is raised.

A page shows an error in one of two ways:

- a cell tagged ``raises-exception`` that ends in the failing call, so the reader sees
  the real traceback; myst-nb and nbclient allow such a cell to raise but do not
  require it, so :func:`test_tagged_cells_raised` reads the executed notebooks of a
  built site and checks that each of these cells did raise;
- a ``try`` with ``except`` clauses (to print the message, or to show several errors
  in one cell). Such a ``try`` has an ``else`` clause that raises, so a call that
  stops failing stops the page::

      try:
          mod.add_one_cpu(bad_x, y)
      except ValueError as err:
          print(f"ValueError: {err}")
      else:
          raise AssertionError("add_one_cpu accepted bad_x")

A ``try`` that handles a condition instead of showing an error (an optional import,
a port in use, an outcome the cell asserts afterwards) says so on its ``except``
line with ``# handled: <why>``.

The ``try`` rule reads the MyST sources (every code cell of a notebook page, every
``python`` and ``pycon`` block of a plain page) and needs no built site; the check of
tagged cells reads the executed notebooks of a built site and skips without one.
"""

from __future__ import annotations

import ast
import json
import os
import re
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("FFI_COOKBOOK_BUILD_DIR") or ROOT / "_build")
#: every page of the site: the docs/ pages (docs/cookbook is a link to cookbook/) and the recipes'
PAGES = sorted([*ROOT.glob("docs/*.md"), *(p for p in ROOT.glob("docs/*/*.md") if p.parts[-2] != "cookbook"),
                *ROOT.glob("cookbook/*.md"), *(p for p in ROOT.glob("cookbook/*/*.md") if p.name != "README.md")])
HANDLED = re.compile(r"#\s*handled:\s*\S")
OPEN = re.compile(r"^(`{3,}|~{3,})\s*(\{code-cell\}\s*\S*|python|pycon)\s*$")
TAGS = re.compile(r"^:tags:\s*\[(.*)\]\s*$")
RAISES = "raises-exception"


class Cell:
    def __init__(self, page: Path, line: int, kind: str, source: str, tags: list[str]):
        self.page, self.line, self.kind, self.source, self.tags = page, line, kind, source, tags

    def where(self) -> str:
        return self.page.relative_to(ROOT).as_posix() if self.page.is_relative_to(ROOT) else str(self.page)


def cells(page: Path, text: str | None = None) -> list[Cell]:
    """The code cells of a page (``{code-cell}``), and its ``python``/``pycon`` blocks."""
    lines = (page.read_text() if text is None else text).splitlines()
    found, i = [], 0
    while i < len(lines):
        match = OPEN.match(lines[i])
        if not match:
            i += 1
            continue
        fence, kind, start = match.group(1), match.group(2).split()[0], i + 2  # 1-based, first body line
        body, i = [], i + 1
        while i < len(lines) and not (lines[i].strip() and set(lines[i].strip()) == {fence[0]}
                                      and len(lines[i].strip()) >= len(fence)):
            body.append(lines[i])
            i += 1
        i += 1
        tags: list[str] = []
        if kind == "{code-cell}":
            while body and (TAGS.match(body[0]) or re.match(r"^:[\w-]+:", body[0])):
                start += 1
                if tags_match := TAGS.match(body.pop(0)):
                    tags = [t.strip().strip("'\"") for t in tags_match.group(1).split(",")]
            if body and body[0].strip() == "---":  # YAML options block
                end = body.index("---", 1)
                tags = re.findall(r"[\w-]+", " ".join(l for l in body[1:end] if "tags" in l))[1:]
                body, start = body[end + 1:], start + end + 1
        if kind == "pycon":
            body = [l[4:] for l in body if l.startswith((">>> ", "... "))]
        found.append(Cell(page, start, kind, "\n".join(body), tags))
    return found


def python(source: str) -> ast.Module:
    """A cell's source as Python: IPython magics and shell escapes become ``pass``."""
    plain = re.sub(r"^(\s*)[%!].*$", r"\1pass", source, flags=re.M)
    return ast.parse(textwrap.dedent(plain))


def silent_tries(cell: Cell) -> list[str]:
    """``try`` statements of a cell that can pass when nothing is raised: they catch, and
    neither their ``else`` raises nor their ``except`` lines say ``# handled: <why>``."""
    lines = cell.source.splitlines()
    bad = []
    for node in ast.walk(python(cell.source)):
        if not isinstance(node, (ast.Try, getattr(ast, "TryStar", ast.Try))) or not node.handlers:
            continue
        if any(isinstance(n, ast.Raise) for stmt in node.orelse for n in ast.walk(stmt)):
            continue
        if all(HANDLED.search(lines[h.lineno - 1]) for h in node.handlers):
            continue
        caught = ", ".join(ast.unparse(h.type) if h.type else "everything" for h in node.handlers)
        line = cell.line + node.lineno - 1 if cell.kind != "pycon" else cell.line
        bad.append(f"{cell.where()}:{line}: try ... except {caught} without 'else: raise AssertionError(...)'")
    return bad


def test_silent_try_is_found(tmp_path):
    """The rule fails on a planted page, and passes each sound form."""
    page = tmp_path / "planted.md"
    page.write_text(textwrap.dedent("""\
        ---
        jupytext: {}
        ---

        ```{code-cell} ipython3
        try:
            mod.add_one_cpu(x, y)
        except ValueError as err:
            print(err)
        ```

        ```{code-cell} ipython3
        :tags: [hide-output]

        for bad in cases:
            try:
                mod.add_one_cpu(*bad)
            except ValueError as err:
                print(err)
            else:
                raise AssertionError(f"accepted {bad}")
        try:
            import cupy
        except ImportError:  # handled: CuPy is optional
            cupy = None
        %time mod.add_one_cpu(x, y)
        ```

        ```pycon
        >>> try:
        ...     f()
        ... except TypeError:
        ...     pass
        ```
        """))
    found = [bad for cell in cells(page) for bad in silent_tries(cell)]
    assert [line.split(": try")[0].rsplit(":", 1)[1] for line in found] == ["6", "30"], found
    assert [c.tags for c in cells(page)] == [[], ["hide-output"], []]


def test_pages_are_read():
    names = {p.relative_to(ROOT).as_posix() for p in PAGES}
    assert {"docs/guides/kernel-library.md", "cookbook/10-rmsnorm/notebook.md",
            "cookbook/10-rmsnorm/cpu-tuning.md", "docs/get-started.md"} <= names
    assert sum(len(cells(p)) for p in PAGES) > 200


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_try_fails_when_nothing_is_raised(page):
    bad = [b for cell in cells(page) for b in silent_tries(cell)]
    assert not bad, "an error demonstration that passes when nothing is raised:\n" + "\n".join(bad)


def executed_notebook(page: Path) -> dict | None:
    """The executed notebook (nbformat JSON) of a page in a built site: a recipe's run from
    its zip (``<build>/recipe-runs/<name>.executed.ipynb``), else the outputs that myst-nb's
    cache (``<build>/.jupyter_cache``) holds for the page as it is now; None without them."""
    recipe = BUILD / "recipe-runs" / f"{page.parent.name}.executed.ipynb"
    if page.name == "notebook.md" and recipe.is_file():
        return json.loads(recipe.read_text())
    if not (BUILD / ".jupyter_cache").is_dir():
        return None
    jupytext = pytest.importorskip("jupytext")
    cache = pytest.importorskip("jupyter_cache").get_cache(BUILD / ".jupyter_cache")
    try:
        _, notebook = cache.merge_match_into_notebook(jupytext.read(page))
    except KeyError:  # handled: the page changed since the site was built
        return None
    return json.loads(json.dumps(notebook))


def docname(page: Path) -> str:
    rel = page.relative_to(ROOT)
    return (rel.relative_to("docs") if rel.parts[0] == "docs" else rel).with_suffix("").as_posix()


TAGGED = [p for p in PAGES if any(RAISES in c.tags for c in cells(p))]


def test_tagged_cells_are_found():
    assert {"cookbook/01-add-one/notebook.md", "docs/guides/kernel-library-memory.md"} <= \
        {p.relative_to(ROOT).as_posix() for p in TAGGED}


def silent_tagged(page: Path, notebook: dict) -> tuple[int, list[str]]:
    """(how many ``raises-exception`` cells of the page the executed notebook holds, the ones
    among them with no error output). A cell whose source changed since the run is not held."""
    ran = {"".join(c["source"]).strip(): c for c in notebook["cells"] if c["cell_type"] == "code"}
    held = [(cell, ran[cell.source.strip()]) for cell in cells(page)
            if RAISES in cell.tags and cell.source.strip() in ran]
    return len(held), [f"{cell.where()}:{cell.line}: tagged {RAISES} but raised nothing" for cell, run in held
                       if not any(o["output_type"] == "error" for o in run.get("outputs", []))]


def test_silent_tagged_cell_is_found(tmp_path):
    page = tmp_path / "planted.md"
    page.write_text("```{code-cell} ipython3\n:tags: [raises-exception]\n\nmod.f(1)\n```\n\n"
                    "```{code-cell} ipython3\n:tags: [raises-exception]\n\nmod.f(2)\n```\n")
    error = {"output_type": "error", "ename": "ValueError", "evalue": "bad", "traceback": []}
    executed = {"cells": [{"cell_type": "code", "source": ["mod.f(1)"], "outputs": [error]},
                          {"cell_type": "code", "source": ["mod.f(2)"], "outputs": []}]}
    held, silent = silent_tagged(page, executed)
    assert held == 2 and len(silent) == 1 and "planted.md:9:" in silent[0], silent


@pytest.mark.parametrize("page", TAGGED, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_tagged_cells_raised(page):
    """Each ``raises-exception`` cell of an executed page has an error output."""
    executed = executed_notebook(page)
    if executed is None:
        pytest.skip(f"no executed notebook of {docname(page)} under {BUILD} (build the site)")
    held, silent = silent_tagged(page, executed)
    if not held:
        pytest.skip(f"the executed notebook of {docname(page)} is older than its tagged cells")
    assert not silent, "\n".join(silent)
