"""Every page says what is, in at most 1,500 words, and says what it measured.

Read from the MyST sources, so no built site is needed:

- prose is the text a reader reads outside code: front matter, code cells, included
  files, code blocks and their outputs are not prose; the body of a container
  directive (a tab, a card, a note) is;
- no page tells its own history ("an earlier version", "no longer", "used to");
- no cell prints a line about a tool it skipped ("clang++: not on PATH");
- a page that times something states its result in a sentence whose numbers come
  from the executed cell (printed by it, or glued into the prose with myst-nb's
  ``glue`` on pages that run only in the site build), so the sentence cannot drift
  from the measurement.

    python tests/site/test_page_prose.py      # words of prose per page, one line each
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from tools.execute_notebook import MEASURES_TIME

ROOT = Path(__file__).resolve().parents[2]
MAX_WORDS = 1500
PAGES = sorted([*ROOT.glob("docs/*.md"), *ROOT.glob("docs/guides/*.md"), *ROOT.glob("docs/concepts/*.md"),
                *ROOT.glob("cookbook/*.md"), *ROOT.glob("cookbook/*/notebook.md"),
                *ROOT.glob("cookbook/*/cpu-tuning.md")])
EXEMPT: set[str] = set()

FENCE = re.compile(r"^\s*(`{3,}|~{3,}|:{3,})\s*(\{([\w:-]+)\})?(.*)$")
# Directives whose body is read as text; every other directive (code-cell,
# literalinclude, code-block, toctree, ...) holds code or machinery.
CONTAINERS = {"tab-set", "tab-item", "grid", "grid-item", "grid-item-card", "card", "note", "tip",
              "hint", "important", "warning", "caution", "attention", "seealso", "admonition",
              "dropdown", "margin", "sidebar", "topic"}
OPTION = re.compile(r"^\s*:[\w-]+:")
COMMENT = re.compile(r"<!--.*?-->", re.S)

HISTORY = [
    r"\ban? (earlier|previous|older|former) (version|draft|revision|edition)",
    r"\bno longer\b(?! than)",
    r"\bused to\b",
    r"\bnot any ?more\b",
    r"\banymore\b",
    r"\b(was|were) (changed|replaced|removed|renamed|rewritten)\b",
    r"\bnow\b[^.]{0,60}\binstead\b",
    r"\bthis page (once|previously|used)\b",
    r"\b(previously|formerly)\b",
    r"\bwe (changed|replaced|removed|dropped)\b",
]

# A page times something when a code cell calls a clock.
TIMING = re.compile(r"\btime\.perf_counter\(|\btimeit\b|\bbench_loop\b")
GLUE_ROLE = re.compile(r"\{glue(?::(?:text|md))?\}`([\w-]+)")
GLUE_CALL = re.compile(r"""\bglue\(\s*["']([\w-]+)["']""")


def blocks(text: str) -> tuple[list[str], list[str]]:
    """Split a MyST page into its prose lines and its code (cells, blocks, includes)."""
    if text.startswith("---\n"):
        text = text.split("\n---\n", 1)[1]
    text = COMMENT.sub("", text)
    prose, code = [], []
    stack: list[tuple[str, bool]] = []  # open fences: (marker, is it a container?)
    for line in text.splitlines():
        match = FENCE.match(line)
        inside_code = any(not container for _, container in stack)
        if stack and match and not match.group(2) and not match.group(4).strip():
            marker = stack[-1][0]
            if match.group(1)[0] == marker[0] and len(match.group(1)) >= len(marker):
                stack.pop()
                continue
        if match and not inside_code and (match.group(2) or match.group(1)[0] != ":"):
            stack.append((match.group(1), match.group(3) in CONTAINERS))
            continue
        if inside_code:
            code.append(line)
        elif not stack or not OPTION.match(line):
            prose.append(line)
    prose = [line for line in prose if not re.match(r"^\s*(\+\+\+|\([\w-]+\)=)\s*$", line)]
    return prose, code


def prose(text: str) -> str:
    return "\n".join(blocks(text)[0])


def word_count(text: str) -> int:
    return len(prose(text).split())


def name(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


def test_prose_counts_text_and_skips_code():
    page = ("---\njupytext: {}\n---\n\n# Title\n\nOne two three.\n\n(a-label)=\n+++\n"
            "```{code-cell} ipython3\nx = 1\nprint(x)\n```\n\n"
            ":::{note}\n:class: x\nfour five\n:::\n\n````text\n```\nnested\n```\n````\n"
            "<!-- hidden -->six\n"
            "::::{tab-set}\n:::{tab-item} A\n```{literalinclude} a.cc\n:language: cpp\n```\nseven\n:::\n::::\n")
    assert prose(page).split() == ["#", "Title", "One", "two", "three.", "four", "five", "six", "seven"]
    assert blocks(page)[1] == ["x = 1", "print(x)", "```", "nested", "```", ":language: cpp"]


def test_history_phrases_are_found():
    said = ["An earlier version asserted it.", "The page no longer claims it.",
            "It used to raise.", "Tensors now come back as views instead."]
    assert all(any(re.search(p, s, re.I) for p in HISTORY) for s in said)
    assert not any(re.search(p, "Now call it with a tensor; a view is returned.", re.I) for p in HISTORY)


@pytest.mark.parametrize("page", PAGES, ids=name)
def test_page_has_at_most_1500_words_of_prose(page):
    if name(page) in EXEMPT:
        pytest.skip("rewritten on its own")
    count = word_count(page.read_text())
    assert count <= MAX_WORDS, f"{name(page)}: {count} words of prose (at most {MAX_WORDS})"


@pytest.mark.parametrize("page", PAGES, ids=name)
def test_prose_tells_no_history(page):
    if name(page) in EXEMPT:
        pytest.skip("rewritten on its own")
    text = " ".join(prose(page.read_text()).split())
    found = [m.group(0) for p in HISTORY for m in re.finditer(p, text, re.I)]
    assert not found, f"{name(page)} tells its history: {found}"


@pytest.mark.parametrize("page", PAGES, ids=name)
def test_no_cell_prints_a_skipped_tool(page):
    """A tool that is absent is left out of the output, not announced as skipped."""
    code = "\n".join(blocks(page.read_text())[1])
    printed = re.findall(r"print\(.*(?:not on PATH|skipped).*", code)
    assert not printed, f"{name(page)} prints a line about a tool it skipped: {printed}"


#: pages that time something: their code calls a timer, or a cell is tagged as measuring time
#: (tools/execute_notebook.py: the site build runs those cells alone)
MEASURING = [p for p in PAGES if TIMING.search("\n".join(blocks(p.read_text())[1]))
             or re.search(rf"^:tags: \[.*\b{MEASURES_TIME}\b", p.read_text(), re.M)]


def test_measuring_pages_are_found():
    assert {"cookbook/09-call-overhead/notebook.md",
            "docs/concepts/packed-calling-convention.md"} <= {name(p) for p in MEASURING}


#: a cell that prints a sentence built from its measured values: print(f"... {value} ...")
PRINTED_SENTENCE = re.compile(r"""print\(\s*((?:f["'][^\n]*["']\s*)+)\)""")


def printed_sentences(code: str) -> list[str]:
    """The sentences cells print from f-strings, with their values as {...}."""
    found = []
    for match in PRINTED_SENTENCE.finditer(code):
        text = " ".join(part for _, part in re.findall(r"""f(["'])(.*?)\1""", match.group(1)))
        if "{" in text:
            found.append(text)
    return found


@pytest.mark.parametrize("page", MEASURING, ids=name)
def test_measuring_page_states_its_result_from_the_executed_cell(page):
    """Its result in a sentence whose numbers come from the run: glued into the prose
    (myst-nb's glue, on pages that run only in the site build), or printed by a cell (a
    recipe's notebook also runs from its zip, where myst-nb is not installed)."""
    if name(page) in EXEMPT:
        pytest.skip("rewritten on its own")
    text, (prose_lines, code) = page.read_text(), blocks(page.read_text())
    code_text = "\n".join(code)
    if name(page).startswith("cookbook/"):
        assert "myst_nb" not in code_text, f"{name(page)}: a recipe's notebook runs without myst-nb"
    sentences = []
    glued = set(GLUE_CALL.findall(code_text))
    used = GLUE_ROLE.findall("\n".join(prose_lines))
    if used:
        assert set(used) <= glued, f"{name(page)}: glued names never set by a cell: {set(used) - glued}"
        flat = " ".join(" ".join(prose_lines).split())
        sentences += [GLUE_ROLE.sub(" ", s) for s in re.split(r"(?<=[.;!?])\s+(?=[A-Z`{])", flat)
                      if GLUE_ROLE.search(s)]
    sentences += [re.sub(r"\{[^}]*\}", " ", s) for s in printed_sentences(code_text)]
    # The values sit in a sentence of words, not in a bare list or a table.
    assert any(len([w for w in s.split() if w.isalpha()]) >= 8 and "|" not in s for s in sentences), \
        f"{name(page)} measures but states no result in a sentence from its cells"


if __name__ == "__main__":
    for page in PAGES:
        print(f"{word_count(page.read_text()):5d}  {name(page)}")
    sys.exit(0)
