"""Sphinx side of the snippet checker: the ``snippet`` and ``snippet-report`` directives.

``snippet`` is a ``code-block`` with three more options, stored on the
literal block so the checker can read them back from the doctree:

- ``:harness: NAME`` wraps the block in ``<page folder>/harness/NAME.<ext>``;
- ``:run:`` links and runs the block (shell: runs it in a scratch folder);
- ``:pseudo: REASON`` exempts it; the page labels it as pseudo-code.

``snippet-report`` renders the checker's last report (``report.json``): a summary per kind
of block and per page, with every block's row folded away.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from docutils.parsers.rst import directives
from sphinx.directives.code import CodeBlock
from sphinx.util.docutils import SphinxDirective


class Snippet(CodeBlock):
    option_spec = dict(CodeBlock.option_spec, harness=directives.unchanged_required,
                       run=directives.flag, pseudo=directives.unchanged_required)

    def run(self) -> list[nodes.Node]:
        if "pseudo" in self.options:
            self.options["caption"] = f"Pseudo-code, not compiled: {self.options['pseudo']}"
        result = super().run()
        block = next(iter(result[0].findall(nodes.literal_block)))
        if "harness" in self.options:
            block["snippet_harness"] = self.options["harness"]
        block["snippet_run"] = "run" in self.options
        if "pseudo" in self.options:
            block["snippet_pseudo"] = self.options["pseudo"]
        return result


KINDS = {"cell": "notebook cells", "include": "files shown (literalinclude)", "inline": "inline blocks",
         "doxygen": "API examples (Doxygen)"}
HOW = {"executed": "ran", "compiled": "compiled", "compiled-and-ran": "compiled and ran",
       "configured": "configured (CMake)", "built": "built (scikit-build-core)", "tested": "test modules",
       "linked": "commands CI or a test runs", "ran": "ran in a scratch folder", "pseudo": "pseudo-code",
       "unverified": "unverified"}


class SnippetReport(SphinxDirective):
    """Render ``<snippets_report>``: the summary line, counts per kind of block and per page,
    and the full table (one per page) folded away in a ``<details>`` element."""

    def run(self) -> list[nodes.Node]:
        path = Path(self.config.snippets_report)
        self.env.note_dependency(str(path))
        if not path.is_file():
            return [nodes.paragraph(text="The snippet checker has not run yet for this build.")]
        report = json.loads(path.read_text())
        rows = [r for page_rows in report["pages"].values() for r in page_rows]
        tools = sorted({r["tool"] for r in rows if r.get("tool")})
        out: list[nodes.Node] = [nodes.paragraph(text=report["summary"])]
        if "gpu_visible" in report:
            out.append(nodes.paragraph(text=(
                f"Checked in {report['seconds']} s on a machine {'with' if report['gpu_visible'] else 'without'} "
                f"a GPU" + (f", with {', '.join(tools)}" if tools else "") + "."
                + (" Each code block on the site carries a label saying how it was checked; CUDA that was "
                   "only compiled says so." if "snippet_labels" in self.config.extensions else ""))))
        out += [nodes.rubric(text="By kind of block"), self._by_kind(rows),
                nodes.rubric(text="By page"), self._by_page(report["pages"])]
        out.append(nodes.raw("", f"<details class=\"snippet-report-details\"><summary>Every block, page by page "
                                 f"({len(rows)} blocks)</summary>", format="html"))
        for page, page_rows in report["pages"].items():
            out += [nodes.rubric(text=page), self._table(["line", "language", "kind", "status", "how"],
                                                         [[str(r.get(h, "")) for h in ["line", "language", "kind", "status", "detail"]]
                                                          for r in page_rows], (1, 2, 3, 2, 8))]
        out.append(nodes.raw("", "</details>", format="html"))
        if report["exempt"]:
            out.append(nodes.rubric(text="Exemptions"))
            items = nodes.bullet_list()
            for row in report["exempt"]:
                items += nodes.list_item("", nodes.paragraph(
                    text=f"{row['page']}:{row['line']} — {row['detail']}"))
            out.append(items)
        return out

    def _by_kind(self, rows: list[dict]) -> nodes.table:
        table = []
        for kind, name in KINDS.items():
            mine = [r for r in rows if r.get("kind") == kind]
            if not mine:
                continue
            counts = Counter(r.get("how") or r["status"] for r in mine)
            how = ", ".join(f"{HOW.get(h, h)} {n}" for h, n in counts.most_common())
            table.append([name, str(len(mine)), how])
        return self._table(["kind of block", "blocks", "how they were checked"], table, (3, 1, 6))

    def _by_page(self, pages: dict[str, list[dict]]) -> nodes.table:
        table = []
        for page, rows in pages.items():
            counts = Counter(r["status"] for r in rows)
            table.append([self._page_link(page), str(len(rows)), str(counts["verified"]), str(counts["exempt"]),
                          str(counts["unverified"])])
        return self._table(["page", "blocks", "verified", "exempt", "unverified"], table, (6, 1, 1, 1, 1))

    def _page_link(self, page: str) -> nodes.Node:
        """A link to the page when it is part of this site (a report may name a page since removed)."""
        if page not in self.env.found_docs:
            return nodes.Text(page)
        ref = addnodes.pending_xref("", refdomain="std", reftype="doc", reftarget="/" + page,
                                    refexplicit=True, refdoc=self.env.docname)
        ref += nodes.inline("", page)
        return ref

    @staticmethod
    def _table(headers: list[str], rows: list[list], widths: tuple[int, ...]) -> nodes.table:
        table = nodes.table()
        group = nodes.tgroup(cols=len(headers))
        table += group
        group += [nodes.colspec(colwidth=w) for w in widths]
        head, body = nodes.thead(), nodes.tbody()
        group += [head, body]
        for cells, parent in [(headers, head)] + [(r, body) for r in rows]:
            row = nodes.row()
            for cell in cells:
                row += nodes.entry("", nodes.paragraph("", "", cell if isinstance(cell, nodes.Node)
                                                       else nodes.Text(cell)))
            parent += row
        return table


def setup(app):
    app.add_config_value("snippets_report", "", "env")
    app.add_directive("snippet", Snippet)
    app.add_directive("snippet-report", SnippetReport)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
