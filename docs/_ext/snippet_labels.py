"""Under each code block, how the snippet checker verified it (its report.json), only where the
page's closing note does not say it; CUDA "ran on <GPU>" only where the page's stored GPU run called
what it shows (gpu_runs.py). A block whose report row does not match it gets no label: never a guess.
`make docs` runs Sphinx again after the checker: ``env-updated`` names the pages whose rows changed.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from pathlib import Path

import gpu_runs
from docutils import nodes

from tools.snippets.collect import in_cell, page_blocks

ROOT = Path(__file__).resolve().parents[2]

CSS = """\
/* Verification labels under code blocks (docs/_ext/snippet_labels.py). */
p.snippet-label { margin: -0.6rem 0 1rem; font-size: 0.75rem; line-height: 1.3;
  color: var(--pst-color-text-muted); text-align: right; overflow-wrap: anywhere; }
div.cell_input p.snippet-label { margin: 0.15rem 0.5rem 0.25rem; }
p.snippet-label-unverified { color: var(--pst-color-danger); }
p.snippet-page-note { margin-top: 2rem; font-size: 0.8rem; color: var(--pst-color-text-muted); }
"""


def read_report(path: str) -> dict | None:
    """The checker's report, or None when there is none (a page's labels are a few lookups in it)."""
    try:
        return json.loads(Path(path).read_text()) if path else None
    except (OSError, ValueError):
        return None


def is_cuda(row: dict) -> bool:
    return row.get("verifier") == "cuda" or row.get("file", "").endswith(".cu") or \
        (row.get("tool") or "").startswith("nvcc")


def label(row: dict, ran_on: str | None = None) -> str | None:
    """The words under a block, from its report row and, for CUDA, where a stored GPU run ran it
    (``ran_on``, from :func:`gpu_run_of`); None where the page note says it all (the block ran)."""
    how, tool, kind = row.get("how"), row.get("tool") or "", row.get("kind")
    with_tool = f" with {tool}" if tool else ""
    cuda = is_cuda(row)
    not_run = (f"; ran on {ran_on}" if ran_on else ", not run") if cuda else ""
    if how == "compiled":
        if kind == "include":  # a file of the page's build: it runs on the page, unless it is CUDA
            return f"compiled{with_tool}{not_run}" if cuda else None
        if kind == "doxygen":
            return f"compiled{with_tool} in a small program{not_run or ', not run'}"
        return f"compiled{with_tool} against the tvm_ffi headers{not_run}"
    if how == "configured":
        return None if kind == "include" else f"configured{with_tool}, not built"
    if how == "tested":
        user = re.search(r"imported by (\S+), a test module", row.get("detail", ""))
        return f"runs in the recipe's tests ({user.group(1)})" if user else "a test: it passes under pytest"
    if how == "pseudo":
        return row.get("detail") or None
    if how == "unverified":
        return "not verified: " + row.get("detail", "")
    return None  # executed, compiled-and-ran, ran, linked, built


_NOTE = {  # the page note's words per kind of check, in this order
    "executed": "{n} code cell{s} ran when the site was built",
    "shown-compiled": "{n} file{s} shown compiled by that build",
    "compiled-and-ran": "{n} C/C++ block{s} compiled and ran",
    "ran": "{n} command block{s} ran in an empty folder",
    "linked": "{n} command block{s} run as shown by CI or a test",
    "compiled": "{n} block{s} compiled",
    "configured": "{n} CMake file{s} configured",
    "built": "{n} pyproject.toml built",
    "tested": "{n} test file{s} passed under pytest",
    "pseudo": "{n} block{s} of pseudo-code, marked",
    "unverified": "{n} block{s} NOT verified",
}


def page_note(rows: list[dict]) -> str | None:
    """One sentence on how a page's code was checked, from its report rows."""
    counts = Counter("shown-compiled" if r.get("how") == "compiled" and r.get("kind") == "include"
                     else r.get("how") for r in rows)
    parts = [words.format(n=counts[how], s="" if counts[how] == 1 else "s")
             for how, words in _NOTE.items() if counts[how]]
    return ("How this page's code was checked: " + "; ".join(parts) + ".") if parts else None


def gpu_run_of(row: dict, block_text: str, record: tuple[dict, set[str]] | None,
               root: Path = ROOT) -> str | None:
    """"<device> at commit <x>" when the page's stored GPU run called, without an error, a function
    the CUDA block stands for (``gpu_runs.exports_shown``); else None."""
    if record is None or not is_cuda(row):
        return None
    stamp, called = record
    file = root / row["file"] if row.get("file") else None
    exports = gpu_runs.exports_shown(block_text, file.read_text() if file and file.is_file() else "")
    return f"{stamp['device']} at commit {stamp['commit']}" if exports & called else None


def gpu_record(env, docname: str) -> tuple[dict, set[str]] | None:
    """The page's stored GPU run: its stamp, and the names its cells called without an error."""
    nb = (getattr(env, "ffi_cookbook_gpu_runs", None) or {}).get(gpu_runs.notebook_name(docname))
    return (nb["metadata"]["ffi_cookbook_gpu_run"], gpu_runs.ran_exports(nb)) if nb else None


def pages_to_rewrite(app, env) -> list[str]:
    """Pages whose labels changed since they were last written (a new report, usually)."""
    report = read_report(app.config.snippets_report) or {"pages": {}}
    gpu = bool(report.get("gpu_visible"))
    before = getattr(env, "snippet_label_digests", {})
    env.snippet_label_digests = now = {
        page: hashlib.sha256(json.dumps([rows, gpu], sort_keys=True).encode()).hexdigest()
        for page, rows in report["pages"].items() if page in env.found_docs}
    return sorted(page for page in set(before) | set(now) if before.get(page) != now.get(page)
                  and page in env.found_docs)


def add_labels(app, doctree, docname: str) -> None:
    report = read_report(app.config.snippets_report)
    if not report or docname not in report.get("pages", {}):
        return
    rows = {row["index"]: row for row in report["pages"][docname] if "index" in row}
    record = gpu_record(getattr(app, "env", None), docname)
    matched = 0
    for index, node in enumerate(page_blocks(doctree)):
        row = rows.get(index)
        # The row must be this block (same line and language), or the report is older than the page.
        if row is None or row.get("page_line") != node.line or row.get("language") != (node.get("language") or "(none)"):
            continue
        matched += 1
        if not (text := label(row, gpu_run_of(row, node.astext(), record))):
            continue
        anchor = node
        if in_cell(node) is None and isinstance(node.parent, nodes.container) \
                and "literal-block-wrapper" in node.parent.get("classes", []):
            anchor = node.parent  # after the caption's wrapper, not inside it
        anchor.parent.insert(anchor.parent.index(anchor) + 1,
                             nodes.paragraph("", text, classes=["snippet-label", f"snippet-label-{row['how']}"]))
    # The note too only when the report is this page's: every row found its block.
    note = page_note(report["pages"][docname]) if matched == len(rows) else None
    sections = [n for n in doctree.children if isinstance(n, nodes.section)]
    if note and sections and hasattr(app, "builder") and app.builder.format == "html":
        link = nodes.reference("", "How this site is checked", refuri=app.builder.get_relative_uri(docname, "checks"))
        sections[-1] += nodes.paragraph("", "", nodes.Text(note + " "), link, classes=["snippet-page-note"])


def write_css(app, exception) -> None:
    if exception is None and app.builder.format == "html":
        (Path(app.outdir) / "_static").mkdir(parents=True, exist_ok=True)
        (Path(app.outdir) / "_static" / "snippet-labels.css").write_text(CSS)


def setup(app):
    app.setup_extension("snippet_blocks")  # the snippets_report setting
    app.add_css_file("snippet-labels.css")
    app.connect("env-updated", pages_to_rewrite)
    app.connect("doctree-resolved", add_labels)
    app.connect("build-finished", write_css)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
