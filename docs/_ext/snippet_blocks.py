"""The ``snippet`` directive, a code-block with options the checker reads back from the doctree,
and ``snippet-report``, which renders the checker's report.json (``snippets_report``)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx import addnodes
from sphinx.directives.code import CodeBlock
from sphinx.util.docutils import SphinxDirective


class Snippet(CodeBlock):
    """``:harness: NAME`` wraps the block in ``<page folder>/harness/NAME.<ext>``; ``:run:`` links and
    runs it (shell: in a scratch folder); ``:pseudo: REASON`` exempts it, labelled pseudo-code."""

    option_spec = dict(CodeBlock.option_spec, harness=directives.unchanged_required,
                       run=directives.flag, pseudo=directives.unchanged_required)

    def run(self) -> list[nodes.Node]:
        if "pseudo" in self.options:
            self.options["caption"] = f"Pseudo-code, not compiled: {self.options['pseudo']}"
        result = super().run()
        block = next(result[0].findall(nodes.literal_block))
        block["snippet_run"] = "run" in self.options
        for option in ("harness", "pseudo"):
            if option in self.options:
                block[f"snippet_{option}"] = self.options[option]
        return result


KINDS = {"cell": "notebook cells", "include": "files shown (literalinclude)", "inline": "inline blocks",
         "doxygen": "API examples (Doxygen)"}
HOW = {"executed": "ran", "compiled": "compiled", "compiled-and-ran": "compiled and ran",
       "configured": "configured (CMake)", "built": "built (scikit-build-core)", "tested": "test modules",
       "linked": "commands CI or a test runs", "ran": "ran in a scratch folder", "pseudo": "pseudo-code",
       "unverified": "unverified"}


def _table(headers: list[str], rows: list[list], widths: tuple[int, ...]) -> nodes.table:
    head, body = nodes.thead(), nodes.tbody()
    for cells, parent in [(headers, head)] + [(r, body) for r in rows]:
        parent += nodes.row("", *[nodes.entry("", nodes.paragraph("", "", c if isinstance(c, nodes.Node)
                                                                 else nodes.Text(c))) for c in cells])
    return nodes.table("", nodes.tgroup("", *[nodes.colspec(colwidth=w) for w in widths], head, body,
                                        cols=len(headers)))


class SnippetReport(SphinxDirective):
    """The summary line, counts per kind of block and per page, and every block's row folded away."""

    def run(self) -> list[nodes.Node]:
        path = Path(self.config.snippets_report)
        self.env.note_dependency(str(path))
        if not path.is_file():
            return [nodes.paragraph(text="The snippet checker has not run yet for this build.")]
        report = json.loads(path.read_text())
        pages = report["pages"]
        rows = [r for page_rows in pages.values() for r in page_rows]
        tools = sorted({r["tool"] for r in rows if r.get("tool")})
        out: list[nodes.Node] = [nodes.paragraph(text=report["summary"])]
        if "gpu_visible" in report:
            out.append(nodes.paragraph(text=(
                f"Checked in {report['seconds']} s on a machine {'with' if report['gpu_visible'] else 'without'} "
                f"a GPU" + (f", with {', '.join(tools)}" if tools else "") + "."
                + (" Each code block on the site carries a label saying how it was checked; CUDA that was "
                   "only compiled says so." if "snippet_labels" in self.config.extensions else ""))))
        by_kind = []
        for kind, name in KINDS.items():
            if mine := [r for r in rows if r.get("kind") == kind]:
                counts = Counter(r.get("how") or r["status"] for r in mine)
                by_kind.append([name, str(len(mine)), ", ".join(f"{HOW.get(h, h)} {n}" for h, n in counts.most_common())])
        by_page = []
        for page, page_rows in pages.items():
            counts = Counter(r["status"] for r in page_rows)
            by_page.append([self._page_link(page), str(len(page_rows)),
                            *(str(counts[s]) for s in ("verified", "exempt", "unverified"))])
        out += [nodes.rubric(text="By kind of block"),
                _table(["kind of block", "blocks", "how they were checked"], by_kind, (3, 1, 6)),
                nodes.rubric(text="By page"),
                _table(["page", "blocks", "verified", "exempt", "unverified"], by_page, (6, 1, 1, 1, 1)),
                nodes.raw("", f"<details class=\"snippet-report-details\"><summary>Every block, page by page "
                              f"({len(rows)} blocks)</summary>", format="html")]
        for page, page_rows in pages.items():
            out += [nodes.rubric(text=page),
                    _table(["line", "language", "kind", "status", "how"],
                           [[str(r.get(h, "")) for h in ("line", "language", "kind", "status", "detail")]
                            for r in page_rows], (1, 2, 3, 2, 8))]
        out.append(nodes.raw("", "</details>", format="html"))
        if report["exempt"]:
            out += [nodes.rubric(text="Exemptions"), nodes.bullet_list("", *[
                nodes.list_item("", nodes.paragraph(text=f"{row['page']}:{row['line']} — {row['detail']}"))
                for row in report["exempt"]])]
        return out

    def _page_link(self, page: str) -> nodes.Node:
        """A link to the page when it is on this site (a report may name a page since removed)."""
        if page not in self.env.found_docs:
            return nodes.Text(page)
        ref = addnodes.pending_xref("", refdomain="std", reftype="doc", reftarget="/" + page,
                                    refexplicit=True, refdoc=self.env.docname)
        ref += nodes.inline("", page)
        return ref


def setup(app):
    app.add_config_value("snippets_report", "", "env")
    app.add_directive("snippet", Snippet)
    app.add_directive("snippet-report", SnippetReport)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
