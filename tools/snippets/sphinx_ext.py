"""Sphinx side of the snippet checker: the ``snippet`` and ``snippet-report`` directives.

``snippet`` is a ``code-block`` with three more options, stored on the
literal block so the checker can read them back from the doctree:

- ``:harness: NAME`` wraps the block in ``<page folder>/harness/NAME.<ext>``;
- ``:run:`` links and runs the block (shell: runs it in a scratch folder);
- ``:pseudo: REASON`` exempts it; the page labels it as pseudo-code.

``snippet-report`` renders the checker's last report (``report.json``).
"""

from __future__ import annotations

import json
from pathlib import Path

from docutils import nodes
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


class SnippetReport(SphinxDirective):
    """Render ``<snippets_report>`` as a summary line and one table per page."""

    def run(self) -> list[nodes.Node]:
        path = Path(self.config.snippets_report)
        self.env.note_dependency(str(path))
        if not path.is_file():
            return [nodes.paragraph(text="The snippet checker has not run yet for this build.")]
        report = json.loads(path.read_text())
        out: list[nodes.Node] = [nodes.paragraph(text=report["summary"])]
        for page, rows in report["pages"].items():
            section = nodes.rubric(text=page)
            out += [section, self._table(rows)]
        if report["exempt"]:
            out.append(nodes.rubric(text="Exemptions"))
            items = nodes.bullet_list()
            for row in report["exempt"]:
                items += nodes.list_item("", nodes.paragraph(
                    text=f"{row['page']}:{row['line']} — {row['detail']}"))
            out.append(items)
        return out

    @staticmethod
    def _table(rows: list[dict]) -> nodes.table:
        headers = ["line", "language", "kind", "status", "how"]
        table = nodes.table()
        group = nodes.tgroup(cols=len(headers))
        table += group
        group += [nodes.colspec(colwidth=w) for w in (1, 2, 3, 2, 8)]
        head, body = nodes.thead(), nodes.tbody()
        group += [head, body]
        for cells, parent in [(headers, head)] + [([str(r.get(h, "")) for h in
                                                    ["line", "language", "kind", "status", "detail"]],
                                                   body) for r in rows]:
            row = nodes.row()
            for text in cells:
                row += nodes.entry("", nodes.paragraph(text=text))
            parent += row
        return table


def setup(app):
    app.add_config_value("snippets_report", "", "env")
    app.add_directive("snippet", Snippet)
    app.add_directive("snippet-report", SnippetReport)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
