"""The cookbook index's gallery (one card per recipe folder, each saying what it teaches and
needs) and the execution statistics page (a run time for every notebook)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("FFI_COOKBOOK_BUILD_DIR") or ROOT / "_build")
DOCS = ROOT / "docs"


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
