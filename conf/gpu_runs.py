"""Say on each page whose notebook also ran on a GPU where and when it ran.

The site is built on a machine without a GPU. Notebooks executed on a GPU box
with ``tools/gpu_notebooks.py`` are kept in ``docs/gpu-runs/data/<name>.ipynb``
with a stamp in their metadata. For every page with such a file this extension
puts a note under the page title, written from the stamp (device, driver, CUDA,
versions, commit, date), linking to the GPU runs page that shows the outputs.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from docutils import nodes
from sphinx import addnodes

DATA = Path(__file__).resolve().parents[1] / "docs" / "gpu-runs" / "data"
PAGE = "gpu-runs/index"


def stored_runs() -> dict[str, dict]:
    """notebook name -> its ``ffi_cookbook_gpu_run`` stamp."""
    runs = {}
    for path in sorted(DATA.glob("*.ipynb")):
        if path.stem != "index":
            runs[path.stem] = json.loads(path.read_text())["metadata"]["ffi_cookbook_gpu_run"]
    return runs


def notebook_name(docname: str) -> str | None:
    """``cookbook/01-add-one/notebook`` -> ``01-add-one``; a guide or concept page keeps its
    last part; index pages have no notebook of their own."""
    parts = docname.split("/")
    if parts[-1] == "index":
        return None
    return parts[-2] if parts[-1] == "notebook" else parts[-1]


def note_for(stamp: dict) -> nodes.note:
    outcome = "every cell ran" if stamp["error"] is None else f"a cell failed there ({stamp['error']})"
    text = (f"This notebook also ran on a GPU: {stamp['device']} (driver {stamp['driver']}, CUDA {stamp['cuda']}), "
            f"torch {stamp['torch']}, apache-tvm-ffi {stamp['apache_tvm_ffi']}, commit {stamp['commit']}, "
            f"on {stamp['date']}; {outcome}. The outputs below come from this site's CPU-only build; "
            "the GPU outputs are on the ")
    ref = addnodes.pending_xref("", refdomain="std", reftype="doc", reftarget="/" + PAGE, refexplicit=True,
                                refdoc="")
    ref += nodes.inline("", "GPU runs page")
    return nodes.note("", nodes.paragraph("", "", nodes.Text(text), ref, nodes.Text(".")), classes=["gpu-run"])


def add_note(app, doctree) -> None:
    docname = app.env.docname
    if docname == PAGE or docname.startswith("gpu-runs/"):
        return
    stamp = app.env.ffi_cookbook_gpu_runs.get(notebook_name(docname))
    section = next(iter(doctree.findall(nodes.section)), None)
    if stamp is None or section is None:
        return
    ref_note = note_for(stamp)
    for node in ref_note.findall(addnodes.pending_xref):
        node["refdoc"] = docname
    title = section.next_node(nodes.title)
    section.insert(section.index(title) + 1, ref_note)


def load_runs(app, env, docnames) -> None:
    env.ffi_cookbook_gpu_runs = stored_runs()


def data_digest() -> str:
    """Changes whenever a stored run does, so that every page is read again (notes change)."""
    digest = hashlib.sha256()
    for path in sorted(DATA.glob("*")):
        digest.update(path.name.encode() + path.read_bytes())
    return digest.hexdigest()[:16]


def setup(app):
    app.add_config_value("gpu_runs_digest", data_digest(), "env")
    app.connect("env-before-read-docs", load_runs)
    app.connect("doctree-read", add_note)
    return {"parallel_read_safe": False, "parallel_write_safe": True}
