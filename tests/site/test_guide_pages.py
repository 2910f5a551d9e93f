"""The guides stay readable in one sitting: every page under docs/guides/ has at most
2,500 words of prose, the guides index lists each page in its toctree with a line
saying what it is for, and the kernel library guide's pages link forward in order.

Prose is the text outside code: front matter, fenced code, code cells and directive
blocks (```` ``` ````, ``~~~``, ``:::`` with a directive name) are not counted.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

GUIDES = Path(__file__).resolve().parents[2] / "docs" / "guides"
MAX_WORDS = 2500
FENCE = re.compile(r"^\s*(`{3,}|~{3,}|:{3,})(.*)$")
GUIDE_ORDER = ["kernel-library", "kernel-library-tensors", "kernel-library-memory"]


def prose(text: str) -> str:
    """The text of a MyST page without its front matter and its fenced blocks."""
    if text.startswith("---\n"):
        text = text.split("\n---\n", 1)[1]
    kept, fence = [], None
    for line in text.splitlines():
        match = FENCE.match(line)
        if fence:
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence) \
                    and not match.group(2).strip():
                fence = None
            continue
        # A bare ``` opens a block; a bare ::: only closes one (colon fences need a name).
        if match and (match.group(2).strip() or match.group(1)[0] != ":"):
            fence = match.group(1)
            continue
        kept.append(line)
    return "\n".join(kept)


def word_count(text: str) -> int:
    return len(prose(text).split())


def test_prose_skips_code_and_front_matter():
    page = ("---\njupytext: {}\n---\n\n# Title\n\nOne two three.\n\n"
            "```{code-cell} ipython3\nx = 1\nprint(x)\n```\n\n"
            ":::{note}\nnot counted\n:::\n\n````text\n```\nnested\n```\n````\nfour\n")
    assert word_count(page) == 6  # "# Title One two three. four"


PAGES = sorted(GUIDES.glob("*.md"))


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_page_has_at_most_2500_words_of_prose(page):
    count = word_count(page.read_text())
    assert count <= MAX_WORDS, f"{page.name}: {count} words of prose (at most {MAX_WORDS}): split the page"


def test_index_lists_every_page_in_reading_order_with_what_it_is_for():
    index = (GUIDES / "index.md").read_text()
    toctree = index.split("```{toctree}", 1)[1].split("```", 1)[0]
    listed = [line.strip() for line in toctree.splitlines()[1:] if line.strip() and not line.startswith(":")]
    assert sorted(listed) == sorted(p.stem for p in PAGES if p.stem != "index")
    assert [name for name in listed if name in GUIDE_ORDER] == GUIDE_ORDER
    for name in listed:
        described = re.search(rf"^- \{{doc\}}`{re.escape(name)}`: (.+)$", index, re.M)
        assert described and len(described.group(1).split()) >= 5, f"{name}: no line saying what it is for"


def test_guide_pages_link_to_the_next_one():
    for page, following in zip(GUIDE_ORDER, GUIDE_ORDER[1:]):
        text = prose((GUIDES / f"{page}.md").read_text())
        assert f"{{doc}}`{following}`" in text.split("## Next", 1)[-1], f"{page} does not end by linking {following}"
