"""Prose that says which command a cell ran is checked against what the cell printed.

Cells that run commands print them first as ``$ <command>`` lines (for example
``ffi_cookbook.build.cmake_build``). A page may then say, in its prose, that a
cell "ran exactly `<command>`" (or "runs exactly"), which must equal one of the
printed ``$`` lines of that page, or that a command "begins `<start>`", which
must start one of them (word by word). In both, ``<placeholder>`` stands for one
word that depends on the machine, such as ``<build folder>``.

The printed lines are read from the cell outputs of the built site's pages
(``<build>/html``); without a site built with execution on, the comparison
skips and says why.
"""

from __future__ import annotations

import html
import os
import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
BUILD = Path(os.environ.get("FFI_COOKBOOK_BUILD_DIR") or ROOT / "_build")
SITE = BUILD / "html"

EXACT = re.compile(r"\b(?:ran|runs) exactly `([^`]+)`")
BEGINS = re.compile(r"\bbegins `([^`]+)`")
PLACEHOLDER = re.compile(r"^<[^<>]+>$")


def pages() -> dict[str, Path]:
    """Every page's docname (path under docs/ without .md) and its source file."""
    found = {}
    for path in sorted(DOCS.rglob("*.md")):
        rel = path.relative_to(DOCS)
        if rel.parts[0] == "cookbook":  # the cookbook/ symlink; listed below from the checkout
            continue
        found[rel.with_suffix("").as_posix()] = path
    for path in sorted((ROOT / "cookbook").glob("*.md")) + sorted((ROOT / "cookbook").glob("*/notebook.md")):
        found["cookbook/" + path.relative_to(ROOT / "cookbook").with_suffix("").as_posix()] = path
    return found


def words(command: str) -> list[str]:
    """A command split as a shell would, placeholders such as ``<build folder>`` kept as one word."""
    return shlex.split(re.sub(r"<([^<>]+)>", lambda m: "<" + m.group(1).replace(" ", "_") + ">", command))


def claims(text: str) -> list[tuple[str, str]]:
    """(kind, command) for every claim in a page's text; kind is "exactly" or "begins"."""
    prose = re.sub(r"\s+", " ", text)
    return ([("exactly", m.group(1)) for m in EXACT.finditer(prose)]
            + [("begins", m.group(1)) for m in BEGINS.finditer(prose)])


def matches(claimed: list[str], printed: list[str], kind: str) -> bool:
    if len(printed) < len(claimed) or (kind == "exactly" and len(printed) != len(claimed)):
        return False
    return all(PLACEHOLDER.match(c) or c == p for c, p in zip(claimed, printed))


def printed_commands(page: Path) -> tuple[bool, list[list[str]]]:
    """(whether any cell has output, the words of every ``$`` line its cells printed) of a built page."""
    text = page.read_text()
    executed, commands = False, []
    # Each cell output is a <div class="cell_output ..."> holding <pre> blocks, up to the next cell.
    for chunk in text.split('class="cell_output')[1:]:
        chunk = chunk.split('class="cell docutils container"')[0]
        for block in re.findall(r"<pre>(.*?)</pre>", chunk, re.S):
            executed = True
            plain = html.unescape(re.sub(r"<[^>]+>", "", block))
            commands += [shlex.split(line[2:]) for line in plain.splitlines() if line.startswith("$ ")]
    return executed, commands


CLAIMS = {doc: found for doc, path in pages().items() if (found := claims(path.read_text()))}


def test_claims_are_found():
    # The guide says which commands its first cell ran; if the wording changes so
    # that this finds nothing, the check below would silently check nothing.
    kinds = {kind for kind, _ in CLAIMS.get("guides/kernel-library", [])}
    assert kinds == {"exactly", "begins"}, CLAIMS


def test_placeholders_match_one_word():
    printed = words("cmake -S code -B ../../_build/cmake/docs/guides/code -G Ninja")
    assert matches(words("cmake -S code -B <build folder>"), printed, "begins")
    assert not matches(words("cmake -S code -B <build folder>"), printed, "exactly")
    assert not matches(words("cmake -S other -B <build folder>"), printed, "begins")
    assert matches(words("cmake --build <build folder>"), words("cmake --build ../b"), "exactly")


@pytest.mark.parametrize("doc", sorted(CLAIMS))
def test_claimed_command_was_printed(doc):
    page = SITE / f"{doc}.html"
    if not page.is_file():
        pytest.skip(f"the site is not built (make docs): no {page.name}")
    executed, printed = printed_commands(page)
    if not executed:
        pytest.skip(f"{doc} in the built site shows no cell output (built with execution off)")
    for kind, command in CLAIMS[doc]:
        claimed = words(command)
        assert any(matches(claimed, p, kind) for p in printed), (
            f"{doc} claims a cell ran a command that {kind if kind == 'begins' else 'is exactly'} `{command}`, but its cells printed only: "
            + "; ".join(shlex.join(p) for p in printed))


# -- the cookbook index's gallery (docs/_ext/recipe_gallery.py) ---------------------------------------

def _gallery():
    import sys
    sys.path.insert(0, str(ROOT / "docs" / "_ext"))
    try:
        import recipe_gallery
    finally:
        sys.path.remove(str(ROOT / "docs" / "_ext"))
    return recipe_gallery


def test_gallery_has_a_card_for_every_recipe_folder():
    gallery = _gallery()
    assert gallery.MARKER in (ROOT / "cookbook" / "index.md").read_text()
    cards = gallery.cards()
    folders = sorted(p.name for p in (ROOT / "cookbook").glob("[0-9][0-9]-*") if p.is_dir())
    links = re.findall(r"^:link: (\S+)/notebook$", cards, re.M)
    assert sorted(links) == folders and len(links) == len(folders)  # grouped by level: each once
    for card in cards.split("::::{grid-item-card}")[1:]:
        body = card.split("\n\n", 1)[1]
        teaches, footer = body.split(":::{card-footer}\n")
        assert teaches.strip(), card
        # whole inline code and roles: an odd number of backquotes or a role cut after "{py" breaks the card
        assert teaches.count("`") % 2 == 0 and not re.search(r"\{[\w:-]*$", teaches.split("`")[-1]), card
        # the recipe's level, then what it needs
        assert re.fullmatch(r"\{bdg-\w+\}`[\w ]+` \{bdg-\w+\}`(CPU|CUDA GPU|NVSHMEM, several GPUs)`",
                            footer.split("\n")[0]), card


def test_gallery_badges_follow_the_sources():
    from ffi_cookbook import catalog
    gallery = _gallery()
    by_name = {r.name: gallery.needs(r) for r in catalog.recipes()}
    assert by_name["02-tensor-and-view"] == "cpu"  # CPU sources only
    assert by_name["01-add-one"] == "cuda"  # add_one_cuda.cu
    assert by_name["07-nvshmem"] == "multi"  # ring_nvshmem.cu
    for recipe in catalog.recipes():
        # recipe 22's .cu are in its template/src/; recipe 25 launches a Triton cubin from C++
        has_cuda = any(recipe.folder.rglob("*.cu")) or any(
            "#include <cuda_runtime" in p.read_text() for p in recipe.folder.rglob("*.cc"))
        assert (by_name[recipe.name] == "cpu") == (not has_cuda), recipe.name


def test_built_gallery_lists_every_recipe():
    page = BUILD / "html" / "cookbook" / "index.html"
    if not page.is_file():
        pytest.skip("the site is not built (make docs)")
    html = page.read_text()
    for folder in sorted(p.name for p in (ROOT / "cookbook").glob("[0-9][0-9]-*") if p.is_dir()):
        # the card's own link (the toctree links every page too)
        assert re.search(rf'<a class="[^"]*sd-stretched-link[^"]*"[^>]*href="{folder}/notebook.html"', html), folder


# -- the execution statistics page (docs/execution-statistics.md) -----------------------------

def test_execution_statistics_give_every_notebook_a_run_time():
    page = BUILD / "html" / "execution-statistics.html"
    if not page.is_file():
        pytest.skip("the site is not built (make docs)")
    table = page.read_text().split("<table", 1)[1].split("</table>", 1)[0]
    rows = [[re.sub(r"<[^>]+>", "", cell).strip() for cell in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
            for row in re.findall(r"<tr[^>]*>(.*?)</tr>", table.split("<tbody", 1)[-1], re.S)]
    rows = [row for row in rows if row]
    if not rows:
        pytest.skip("the site was built with execution off: the table is empty")
    seconds = {row[0]: row[3] for row in rows}
    notebooks = [doc for doc, path in pages().items() if "\nkernelspec:" in path.read_text().split("\n---", 1)[0]]
    assert notebooks
    for doc in notebooks:
        assert re.fullmatch(r"\d+(\.\d+)?", seconds.get(doc, "")), (doc, seconds.get(doc))
