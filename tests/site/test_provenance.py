"""Every page that prints timings first prints where they were taken (issue: honest provenance).

A page "times" when its notebook, or a Python file of its folder that the notebook imports, calls
``time.perf_counter``, ``timeit``, ``torch.utils.benchmark``'s timer, ``triton.testing.do_bench``
or ``best_seconds``. Such a page must have a cell that prints a line starting with ``measured on:``
(the CPU, cores, GPU when there is one, the versions and the date, written out in the page itself)
before its first timing cell or at the top of it, and the built page must show that line.
"""

from __future__ import annotations

import html
import os
import re
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SITE = Path(os.environ.get("FFI_COOKBOOK_BUILD_DIR") or ROOT / "_build") / "html"
TIMES = re.compile(r"\bperf_counter\(|\btimeit\b|\bns_per_call\(|\bbest_seconds\("
                   r"|\bbenchmark\.Timer\(|\b(?:blocked|adaptive)_autorange\(|\bdo_bench\(")
CELL = re.compile(r"```\{code-cell\}[^\n]*\n(.*?)```", re.S)
#: a print whose text starts with "measured on:" (an f-string or a plain string, on its next line too)
PRINTS_MEASURED_ON = re.compile(r"""\bprint\(\s*[rfbuRFBU]{0,2}(?:\"{3}|'{3}|"|')measured on:""")


def notebooks() -> list[Path]:
    found = sorted((ROOT / "cookbook").glob("*/notebook.md"))
    return found + sorted(p for section in ("guides", "concepts") for p in (ROOT / "docs" / section).glob("*.md"))


def timing_functions(source: Path) -> set[str]:
    """Names of the top-level functions of a Python file whose body times something."""
    import ast

    text = source.read_text()
    return {node.name for node in ast.parse(text).body
            if isinstance(node, ast.FunctionDef) and TIMES.search(ast.get_source_segment(text, node) or "")}


def times(cell: str, aliases: dict[str, set[str]]) -> bool:
    """The cell times something itself or calls a timing function of a module beside the notebook."""
    return bool(TIMES.search(cell)) or any(
        re.search(rf"\b{alias}\.{name}\(", cell) for alias, names in aliases.items() for name in names)


def timing_pages() -> dict[Path, int]:
    """Notebook -> index of its first code cell that times something (only pages that time)."""
    pages = {}
    for path in notebooks():
        cells = CELL.findall(path.read_text())
        aliases = {}  # module alias in the notebook -> its timing functions
        for cell in cells:
            for module, alias in re.findall(r"^\s*import (\w+)(?: as (\w+))?", cell, re.M):
                if (path.parent / f"{module}.py").is_file():
                    aliases[alias or module] = timing_functions(path.parent / f"{module}.py")
        first = next((i for i, cell in enumerate(cells) if times(cell, aliases)), None)
        if first is not None:
            pages[path] = first
    return pages


def test_measured_on_print_is_recognised():
    assert PRINTS_MEASURED_ON.search('print(f"measured on: {cpu}, {os.cpu_count()} cores")')
    assert PRINTS_MEASURED_ON.search("print(\n    'measured on: ' + cpu)")
    assert not PRINTS_MEASURED_ON.search('print(f"{cpu}: measured on: ...")')
    assert not PRINTS_MEASURED_ON.search('print(measured_on)')


def test_pages_that_time_are_found():
    names = {p.parent.name if p.name == "notebook.md" else p.stem for p in timing_pages()}
    assert {"09-call-overhead", "10-rmsnorm", "packed-calling-convention"} <= names


@pytest.mark.parametrize("page", sorted(timing_pages()), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_page_prints_the_machine_before_its_first_timing(page):
    cells = CELL.findall(page.read_text())
    first = timing_pages()[page]
    # that cell itself counts too: its print comes before what it times
    assert any(PRINTS_MEASURED_ON.search(cell) for cell in cells[:first + 1]), (
        f"{page}: print a line starting with 'measured on:' before cell {first}, the first that times something")


@pytest.mark.parametrize("page", sorted(timing_pages()), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_built_page_shows_the_machine(page):
    rel = page.relative_to(ROOT)
    if rel.parts[0] == "docs":
        rel = rel.relative_to("docs")
    built = SITE / rel.with_suffix(".html")
    if not built.is_file():
        pytest.skip(f"no built site page {built.name} (run make docs)")
    text = html.unescape(re.sub(r"<[^>]+>", "", built.read_text()))
    shown = [line for line in text.splitlines() if line.lstrip().startswith("measured on:")]
    assert shown, f"{built.name} shows no line starting with 'measured on:'"
    assert any(f"apache-tvm-ffi {metadata.version('apache-tvm-ffi')}" in line for line in shown)
