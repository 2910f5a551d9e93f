"""A goal stated on a page is asserted by a cell of that page.

A goal sentence is prose that says "goal", "target of" or "aim", or sets a bound,
"at least <number> of" (or "times"). The rule for writing one:

- the page defines the goal's number once, in a code cell, as a constant whose
  name starts with ``GOAL`` (``GOAL = 0.9``, or ``GOAL, ROUNDS = 0.9, 3``), and
  every number the sentence gives as a goal ("at least 0.9", "the goal of 0.9")
  is one of those constants;
- an ``assert`` of the page uses the constant, directly or through a name computed
  from it (``missed = [p for p in points if p < GOAL]`` then ``assert not missed``),
  so a run that misses the goal fails on the page that states it;
- a goal sentence without a number needs an asserted ``GOAL`` constant on the page;
- a sentence that links another page (``{doc}``) may give that page's goal: its
  numbers are looked up there.

Read from the MyST sources; no built site is needed.
"""

from __future__ import annotations

import ast
import re
import textwrap
from pathlib import Path

import pytest

from tests.site.test_error_demos import PAGES, ROOT, cells, python
from tests.site.test_page_prose import prose

GOAL_WORDS = re.compile(r"\bgoals?\b|\btargets? (?:of|is) (?:about |at least )?\d|\baims? (?:at|for|to)\b", re.I)
NUMBER = r"(\d+(?:\.\d+)?)"
#: where a sentence gives a goal's number
GOAL_NUMBER = re.compile(rf"\b(?:at least|goal (?:of|is)|target (?:of|is))\s+(?:about\s+)?{NUMBER}\b", re.I)
BOUND = re.compile(rf"\bat least\s+{NUMBER}\s*(?:of|times|x)\b", re.I)
DOC_LINK = re.compile(r"\{doc\}`(?:[^`<]*<)?([^`>]+)>?`")


def sentences(page_text: str) -> list[str]:
    flat = " ".join(prose(page_text).split())
    return re.split(r"(?<=[.;!?])\s+(?=[A-Z*`{(])", flat)


def goal_sentences(page_text: str) -> list[str]:
    return [s for s in sentences(page_text) if GOAL_WORDS.search(s) or BOUND.search(s)]


def asserted_goals(page: Path, text: str | None = None) -> dict[str, float]:
    """GOAL constants of a page's code cells that an assert uses: name -> value."""
    constants: dict[str, float] = {}
    derived: set[str] = set()
    asserts: list[ast.Assert] = []
    assignments: list[tuple[set[str], set[str]]] = []  # (targets, names used in the value)
    for cell in cells(page, text):
        if cell.kind == "pycon":
            continue
        tree = python(cell.source)
        for node in ast.walk(tree):
            if isinstance(node, ast.Assert):
                asserts.append(node)
            if not isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) or node.value is None:
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                pairs = (zip(target.elts, node.value.elts) if isinstance(target, ast.Tuple)
                         and isinstance(node.value, ast.Tuple) else [(target, node.value)])
                for name, value in pairs:
                    if isinstance(name, ast.Name) and name.id.startswith("GOAL") and \
                            isinstance(value, ast.Constant) and isinstance(value.value, (int, float)):
                        constants[name.id] = float(value.value)
            names = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
            assignments.append((names, {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)}))
    for goal in constants:
        reach, grew = {goal}, True
        while grew:  # names computed from the goal, and names computed from those
            grew = False
            for targets, used in assignments:
                if used & reach and not targets <= reach:
                    reach |= targets
                    grew = True
        if any({n.id for n in ast.walk(a) if isinstance(n, ast.Name)} & reach for a in asserts):
            derived.add(goal)
    return {name: value for name, value in constants.items() if name in derived}


def linked_pages(page: Path, sentence: str) -> list[Path]:
    found = []
    for target in DOC_LINK.findall(sentence):
        target = target.strip()
        base = ROOT / "docs" if target.startswith("/") else page.parent
        path = (base / target.lstrip("/")).with_suffix(".md")
        if path.is_file():
            found.append(path)
    return found


def unasserted(page: Path, text: str | None = None) -> list[str]:
    """The goal sentences of a page that no assert of it (or of the page it links) backs."""
    text = page.read_text() if text is None else text
    goals = asserted_goals(page, text)
    bad = []
    for sentence in goal_sentences(text):
        numbers = {float(n) for n in GOAL_NUMBER.findall(sentence)}
        if not numbers:
            if not goals:
                bad.append(f"{sentence!r}: no GOAL constant of the page is asserted")
            continue
        missing = numbers - set(goals.values())
        for other in linked_pages(page, sentence):
            missing -= set(asserted_goals(other).values())
        if missing:
            bad.append(f"{sentence!r}: no asserted GOAL constant equals {sorted(missing)}")
    return bad


PLANTED = textwrap.dedent("""\
    ---
    jupytext: {{}}
    ---

    # A page

    The goal is at least 0.9 of the copy at every size. {extra}

    ```{{code-cell}} ipython3
    GOAL, ROUNDS = {value}, 3
    missed = [p for p in points if p["of_copy"] < GOAL]
    {check}
    ```
    """)


@pytest.mark.parametrize("value, check, extra, expected", [
    ("0.9", "assert not missed", "", 0),  # asserted through a derived name
    ("0.9", "print(missed)", "", 1),  # never asserted
    ("0.8", "assert not missed", "", 1),  # the sentence and the constant disagree
    ("0.9", "assert not missed", "It is at least 2 times torch's speed.", 1),  # a second, unasserted bound
    ("0.9", "assert not missed", "The plain one is 3 times as fast.", 0),  # not a goal
])
def test_planted_goals(tmp_path, value, check, extra, expected):
    page = tmp_path / "page.md"
    page.write_text(PLANTED.format(value=value, check=check, extra=extra))
    found = unasserted(page)
    assert len(found) == expected, found


def test_goal_sentences_are_found():
    text = (ROOT / "cookbook/10-rmsnorm/cpu-tuning.md").read_text()
    assert any("at least 0.8 of the copy" in s for s in goal_sentences(text))
    assert asserted_goals(ROOT / "cookbook/10-rmsnorm/cpu-tuning.md") == {"GOAL": 0.8}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_goal_is_asserted(page):
    bad = unasserted(page)
    assert not bad, f"{page.relative_to(ROOT)} states goals that no cell asserts:\n" + "\n".join(bad)
