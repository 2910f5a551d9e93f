"""Collect every literal block of a built site from its pickled doctrees."""

from __future__ import annotations

import pickle
from dataclasses import dataclass, field
from pathlib import Path

from docutils import nodes


@dataclass
class Block:
    """One code block a reader sees, and what the checker concluded about it."""

    page: str  # docname, e.g. "cookbook/01-add-one/notebook"
    source: Path  # the page's source file
    line: int | None
    language: str
    kind: str  # cell | include | inline | doxygen
    text: str
    include: Path | None = None  # literalinclude: the file shown
    harness: str | None = None
    run: bool = False
    pseudo: str | None = None
    expected_output: str | None = None
    status: str = "unverified"  # verified | unverified | exempt | text
    detail: str = ""
    where: str = field(default="")  # "page:line" used in messages
    index: int = 0  # position among the page's literal blocks (cell outputs skipped), for labels
    verifier: str = ""  # the verifier its language maps to (conf/snippets.toml [languages])
    tool: str = ""  # the compiler (or cmake) that verified it, as called; the report names its version

    def fail(self, why: str) -> None:
        self.status, self.detail = "unverified", why

    def ok(self, how: str) -> None:
        self.status, self.detail = "verified", how


def in_cell(node: nodes.Node) -> str | None:
    """'input' or 'output' when the node belongs to a notebook cell, else None."""
    parent = node.parent
    while parent is not None:
        classes = parent.get("classes", []) if isinstance(parent, nodes.Element) else []
        if "cell_input" in classes:
            return "input"
        if "cell_output" in classes or "cell" in classes:
            return "output"
        parent = parent.parent
    return None


def _in_doxygen(node: nodes.Node) -> bool:
    parent = node.parent
    while parent is not None:
        if type(parent).__name__ == "desc_content":
            return True
        parent = parent.parent
    return False


def _doxygen_origin(root: Path, text: str) -> str | None:
    """'include/x.h:N' for the header comment a Doxygen example was rendered from."""
    first = text.strip().splitlines()[0].strip() if text.strip() else ""
    for header in sorted((root / "include").rglob("*.h")) if first else []:
        for number, line in enumerate(header.read_text().splitlines(), 1):
            if line.lstrip(" */").strip() == first:
                return f"{header.relative_to(root)}:{number}"
    return None


def page_blocks(tree: nodes.Node) -> list[nodes.literal_block]:
    """The literal blocks of a page that the checker verifies, in order: cell outputs are
    skipped. A block's position in this list is its ``index`` in the report, which is how
    the site's verification labels (docs/_ext/snippet_labels.py) find it again."""
    return [node for node in tree.findall(nodes.literal_block) if in_cell(node) != "output"]


def collect(doctrees: Path, root: Path) -> tuple[list[Block], dict]:
    """All literal blocks of every page, plus myst-nb's execution record per page."""
    env = pickle.loads((doctrees / "environment.pickle").read_bytes())
    executed = {doc: meta.get("exec_data") for doc, meta in getattr(env, "nb_metadata", {}).items()}
    blocks: list[Block] = []
    for path in sorted(doctrees.rglob("*.doctree")):
        docname = path.relative_to(doctrees).with_suffix("").as_posix()
        tree = pickle.loads(path.read_bytes())
        source = Path(env.doc2path(docname))
        previous: Block | None = None
        for index, node in enumerate(page_blocks(tree)):
            language = node.get("language") or ""
            cell = in_cell(node)
            text = node.astext()
            included = node.get("source")
            block = Block(page=docname, source=source, line=node.line, language=language,
                          kind="inline", text=text, index=index)
            if cell == "input":
                block.kind = "cell"
            elif _in_doxygen(node):
                block.kind = "doxygen"
                origin = _doxygen_origin(root, text)
            elif included and Path(included).resolve() != source.resolve():
                block.kind, block.include = "include", Path(included).resolve()
            block.harness = node.get("snippet_harness")
            block.run = bool(node.get("snippet_run"))
            block.pseudo = node.get("snippet_pseudo")
            shown = source.resolve()
            shown = shown.relative_to(root) if shown.is_relative_to(root) else shown
            block.where = f"{shown}:{node.line or '?'}"
            if block.kind == "doxygen" and origin:
                block.where = f"{shown} (from {origin})"
            # A `text` block right after a `:run:` block is the output the page shows for it.
            if previous is not None and previous.run and language == "text":
                previous.expected_output = text
            blocks.append(block)
            previous = block
    return blocks, executed
