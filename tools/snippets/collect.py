"""Collect every literal block of a built site from its pickled doctrees."""

from __future__ import annotations

import pickle
from dataclasses import dataclass
from pathlib import Path

from docutils import nodes


@dataclass
class Block:
    """One code block a reader sees, and what the checker concluded about it."""

    page: str  # docname
    source: Path  # the page's source file
    line: int | None
    language: str
    kind: str  # cell | include | inline | doxygen
    text: str
    include: Path | None = None  # literalinclude: the file shown
    harness: str | None = None
    run: bool = False
    pseudo: str | None = None
    expected_output: str | None = None  # the `text` block right after a `:run:` block
    status: str = "unverified"  # verified | unverified | exempt | text
    detail: str = ""
    where: str = ""  # "page:line" for messages
    index: int = 0  # position in page_blocks(): how the site's labels find the block again
    verifier: str = ""  # conf/snippets.toml [languages]
    tool: str = ""  # the compiler (or cmake) as called; the report names its version

    def fail(self, why: str) -> None:
        self.status, self.detail = "unverified", why

    def ok(self, how: str) -> None:
        self.status, self.detail = "verified", how


def _ancestors(node: nodes.Node):
    while (node := node.parent) is not None:
        yield node


def in_cell(node: nodes.Node) -> str | None:
    """'input' or 'output' when the node belongs to a notebook cell, else None."""
    for parent in _ancestors(node):
        classes = parent.get("classes", []) if isinstance(parent, nodes.Element) else []
        if "cell_input" in classes:
            return "input"
        if "cell_output" in classes or "cell" in classes:
            return "output"
    return None


def page_blocks(tree: nodes.Node) -> list[nodes.literal_block]:
    """A page's literal blocks, cell outputs left out: a block's position here is its report ``index``."""
    return [node for node in tree.findall(nodes.literal_block) if in_cell(node) != "output"]


def _doxygen_origin(root: Path, text: str) -> str | None:
    """'include/x.h:N': the header comment a Doxygen example was rendered from."""
    first = text.strip().splitlines()[0].strip() if text.strip() else ""
    for header in sorted((root / "include").rglob("*.h")) if first else []:
        for number, line in enumerate(header.read_text().splitlines(), 1):
            if line.lstrip(" */").strip() == first:
                return f"{header.relative_to(root)}:{number}"
    return None


def collect(doctrees: Path, root: Path) -> tuple[list[Block], dict]:
    """All literal blocks of every page, and myst-nb's execution record per page."""
    env = pickle.loads((doctrees / "environment.pickle").read_bytes())
    executed = {doc: meta.get("exec_data") for doc, meta in getattr(env, "nb_metadata", {}).items()}
    blocks: list[Block] = []
    for path in sorted(doctrees.rglob("*.doctree")):
        docname = path.relative_to(doctrees).with_suffix("").as_posix()
        source = Path(env.doc2path(docname)).resolve()
        shown = source.relative_to(root) if source.is_relative_to(root) else source
        previous = None
        for index, node in enumerate(page_blocks(pickle.loads(path.read_bytes()))):
            text, included = node.astext(), node.get("source")
            block = Block(page=docname, source=source, line=node.line, language=node.get("language") or "",
                          kind="inline", text=text, index=index, harness=node.get("snippet_harness"),
                          run=bool(node.get("snippet_run")), pseudo=node.get("snippet_pseudo"),
                          where=f"{shown}:{node.line or '?'}")
            if in_cell(node) == "input":
                block.kind = "cell"
            elif any(type(parent).__name__ == "desc_content" for parent in _ancestors(node)):
                block.kind = "doxygen"
                if origin := _doxygen_origin(root, text):
                    block.where = f"{shown} (from {origin})"
            elif included and Path(included).resolve() != source:
                block.kind, block.include = "include", Path(included).resolve()
            if previous is not None and previous.run and block.language == "text":
                previous.expected_output = text
            blocks.append(block)
            previous = block
    return blocks, executed
