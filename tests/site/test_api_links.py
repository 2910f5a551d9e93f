"""Prose that names one of our C++ helpers links it to the API page.

A helper written as inline code in a page's prose (`` `CheckLaunch` ``) must be a C++ role
instead ({cpp:func}`CheckLaunch <CheckLaunch>`), which Sphinx resolves against the API page that
breathe builds from include/ffi_cookbook (a target that does not resolve fails the build, -n -W).
Code blocks are not prose and keep plain names.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SITE = Path(os.environ.get("FFI_COOKBOOK_BUILD_DIR") or ROOT / "_build") / "html"
FENCE = re.compile(r"^\s*(`{3,}|~{3,}|:{3,})")


def helpers() -> set[str]:
    """Functions and structs declared at namespace level in include/ffi_cookbook."""
    names = set()
    for header in (ROOT / "include" / "ffi_cookbook").glob("*.h"):
        text = header.read_text()
        names |= set(re.findall(r"^inline\b[^(;=]*?\b([A-Z]\w*)\(", text, re.M))
        names |= set(re.findall(r"^(?:template <[^>]*>\s*)?(?:struct|class) ([A-Z]\w*)\b", text, re.M))
    return names


def prose_lines(path: Path):
    fence = None
    for number, line in enumerate(path.read_text().splitlines(), 1):
        opened = FENCE.match(line)
        if fence is None and opened:
            fence = opened.group(1)
        elif fence is not None:
            if line.strip() and set(line.strip()) == {fence[0]} and len(line.strip()) >= len(fence):
                fence = None
        else:
            yield number, line


def pages() -> list[Path]:
    return (sorted((ROOT / "cookbook").glob("*/notebook.md")) + [ROOT / "cookbook" / "index.md"]
            + sorted(p for section in ("concepts", "guides") for p in (ROOT / "docs" / section).glob("*.md"))
            + [ROOT / "docs" / "get-started.md", ROOT / "docs" / "index.md"])


def test_helpers_are_found():
    assert {"CheckLaunch", "DispatchFloat", "EmptyLike", "CPUAllocator", "CheckElementwise"} <= helpers()


@pytest.mark.parametrize("page", pages(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_prose_links_helpers(page):
    plain = re.compile(r"(?<![`>\w])`(?:ffi_cookbook::)?(" + "|".join(sorted(helpers())) + r")(?:\(\))?`(?!`)")
    unlinked = [f"{page.name}:{n}: {m.group(0)}" for n, line in prose_lines(page) for m in plain.finditer(line)]
    assert not unlinked, "write these as {cpp:func}`Name <Name>` or {cpp:struct}`Name <ffi_cookbook::Name>`: " + \
        "; ".join(unlinked)


def test_built_pages_link_into_the_api_page():
    page = SITE / "cookbook" / "21-cuda-graphs" / "notebook.html"
    if not page.is_file():
        pytest.skip("no built site (run make docs)")
    assert re.search(r'href="[./]*api/index\.html#_CPPv4\d+CurrentStream', page.read_text())
