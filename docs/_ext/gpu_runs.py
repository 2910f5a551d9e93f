"""Show, on each page whose notebook also ran on a GPU, what its GPU cells printed there.

The site is built on a machine without a GPU. ``make gpu-check`` (tools/gpu_check.py)
executes the notebooks on a GPU machine and keeps each one in
``docs/gpu-runs/data/<name>.ipynb``, outputs included, with a stamp in its metadata
(device, driver, CUDA, versions, commit, date). For every page with such a file this
extension, when the page is read (no edit of the page needed):

- puts a note under the page title, written from the stamp, that says where and when the
  notebook ran there, whether every cell ran, and, where files of the page's recipe folder
  changed between the stamp's commit and HEAD (git), that they did and which;
- in each GPU cell of the page (its code mentions CUDA, a GPU or NVSHMEM) whose source
  is the same as a cell of the stored run, adds a block after the cell's own output,
  "On <device>, <date>, commit <x>", with what that cell printed there (inside the cell, so
  tools/snippets counts it as output, not as a code block to verify).
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
from pathlib import Path

from docutils import nodes
from sphinx import addnodes

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "docs" / "gpu-runs" / "data"
PAGE = "gpu-runs/index"
GPU_WORDS = re.compile(r"cuda|gpu|nvshmem", re.IGNORECASE)
MAX_LINES = 30
# IPython's own failure to format a traceback (the stored run of commit c96b285, Python 3.12:
# IPython read a C++ source named by its absolute path as Python); not what the cell printed.
IPYTHON_CRASH = "Unexpected exception formatting exception"


def stored_runs(data: Path = DATA) -> dict[str, dict]:
    """notebook name -> the stored notebook (its ``ffi_cookbook_gpu_run`` stamp in the metadata)."""
    return {path.stem: json.loads(path.read_text()) for path in sorted(data.glob("*.ipynb"))
            if path.stem != "index"}


def notebook_name(docname: str) -> str | None:
    """``cookbook/01-add-one/notebook`` -> ``01-add-one``; a guide or concept page keeps its
    last part; index pages have no notebook of their own."""
    parts = docname.split("/")
    if parts[-1] == "index":
        return None
    return parts[-2] if parts[-1] == "notebook" else parts[-1]


def changed_since(commit: str, name: str, repo: Path = ROOT) -> list[str] | None:
    """Files of ``cookbook/<name>`` (a page: its own source) changed between ``commit`` and HEAD;
    None where git cannot tell (no repository, or the commit is not in it)."""
    folder = repo / "cookbook" / name
    paths = [f"cookbook/{name}"] if folder.is_dir() else [
        str(p.relative_to(repo)) for p in [*repo.glob(f"docs/*/{name}.md"), *repo.glob(f"docs/{name}.md")]]
    if not paths:
        return None
    done = subprocess.run(["git", "diff", "--name-only", f"{commit}..HEAD", "--", *paths],
                          cwd=repo, capture_output=True, text=True)
    if done.returncode:
        return None
    return [line for line in done.stdout.splitlines() if line]


def source_of(cell: dict) -> str:
    source = cell.get("source", "")
    return ("".join(source) if isinstance(source, list) else source).strip()


def printed(cell: dict) -> list[str]:
    """The lines a stored cell printed: streams, plain-text results, errors, figures named."""
    parts: list[str] = []
    for output in cell.get("outputs", []):
        kind = output["output_type"]
        if kind == "stream":
            text = "".join(output["text"])
            if IPYTHON_CRASH in text:
                text = ""
            elif output.get("name") == "stderr" and "tokenize.TokenError" in text:
                text = "(IPython could not format this error's traceback there)\n"
            parts.append(text)
        elif kind == "error":
            parts.append(f"{output['ename']}: {output['evalue']}\n")
        elif "text/plain" in output.get("data", {}):
            if "image/png" in output["data"]:
                parts.append("(a figure)\n")
            else:
                parts.append("".join(output["data"]["text/plain"]) + "\n")
    lines = "".join(parts).rstrip().splitlines()
    if len(lines) > MAX_LINES:
        lines = lines[:MAX_LINES] + [f"... ({len(lines) - MAX_LINES} more lines in the stored notebook)"]
    return lines


def stamp_words(stamp: dict) -> str:
    return f"On {stamp['device']}, {stamp['date']}, commit {stamp['commit']}"


def doc_ref(docname: str, text: str) -> addnodes.pending_xref:
    ref = addnodes.pending_xref("", refdomain="std", reftype="doc", reftarget="/" + PAGE, refexplicit=True,
                                refdoc=docname)
    ref += nodes.inline("", text)
    return ref


def note_for(stamp: dict, changed: list[str] | None, docname: str, blocks: int = 0) -> nodes.note:
    outcome = "every cell ran" if stamp["error"] is None else f"a cell stopped it there ({stamp['error']})"
    shown = ("Below each GPU cell that printed there, a block shows what it printed; every run is on the "
             if blocks else "Every run is on the ")
    text = (f"This notebook also ran on a GPU: {stamp['device']} (driver {stamp['driver']}, CUDA {stamp['cuda']}), "
            f"torch {stamp['torch']}, apache-tvm-ffi {stamp['apache_tvm_ffi']}, commit {stamp['commit']}, "
            f"on {stamp['date']}; {outcome}. {shown}")
    paragraphs = [nodes.paragraph("", "", nodes.Text(text), doc_ref(docname, "GPU runs page"), nodes.Text("."))]
    if changed:
        shown = ", ".join(changed[:6]) + (f" and {len(changed) - 6} more" if len(changed) > 6 else "")
        paragraphs.append(nodes.paragraph("", f"The sources of this page changed since that run ({shown}): "
                                              "what they print on a GPU may differ from that run.",
                                          classes=["gpu-run-stale"]))
    elif changed is None:
        paragraphs.append(nodes.paragraph("", f"Whether this page's sources changed since commit {stamp['commit']} "
                                              "could not be read from git.", classes=["gpu-run-stale"]))
    return nodes.note("", *paragraphs, classes=["gpu-run"])


def output_block(stamp: dict, lines: list[str], changed: list[str] | None) -> nodes.container:
    words = stamp_words(stamp) + (" (its sources changed since)" if changed or changed is None else "") + ":"
    block = nodes.container("", classes=["gpu-run-output"])
    block += nodes.paragraph("", words, classes=["gpu-run-stamp"])
    block += nodes.literal_block("\n".join(lines), "\n".join(lines), language="none")
    return block


def page_cells(doctree) -> list[tuple[nodes.Element, str]]:
    """(cell node, its source) for every code cell of a myst-nb page."""
    cells = []
    for cell in doctree.findall(lambda n: isinstance(n, nodes.container) and n.get("nb_element") == "cell_code"):
        source = next((b.astext() for b in cell.findall(nodes.literal_block)), "")
        cells.append((cell, source.strip()))
    return cells


def add_gpu_output(doctree, docname: str, nb: dict, changed: list[str] | None) -> int:
    """The note under the title and a block after each GPU cell with stored output; returns the blocks."""
    stamp = nb["metadata"]["ffi_cookbook_gpu_run"]
    section = next(iter(doctree.findall(nodes.section)), None)
    if section is None:
        return 0
    stored = {source_of(c): c for c in nb["cells"] if c.get("cell_type") == "code"}
    added = 0
    for cell, source in page_cells(doctree):
        if not GPU_WORDS.search(source) or source not in stored:
            continue
        lines = printed(stored[source])
        if lines:
            cell += output_block(stamp, lines, changed)  # inside the cell: an output, as the checkers read it
            added += 1
    title = section.next_node(nodes.title)
    section.insert(section.index(title) + 1, note_for(stamp, changed, docname, added))
    return added


def on_doctree_read(app, doctree) -> None:
    docname = app.env.docname
    if docname == PAGE or docname.startswith("gpu-runs/"):
        return
    name = notebook_name(docname)
    nb = app.env.ffi_cookbook_gpu_runs.get(name)
    if nb is None:
        return
    stamp = nb["metadata"]["ffi_cookbook_gpu_run"]
    changed = changed_since(stamp["commit"], name, Path(app.config.gpu_runs_repo))
    app.env.ffi_cookbook_gpu_changed[docname] = changed
    add_gpu_output(doctree, docname, nb, changed)


def load_runs(app, env, docnames) -> None:
    env.ffi_cookbook_gpu_runs = stored_runs(Path(app.config.gpu_runs_data))
    if not hasattr(env, "ffi_cookbook_gpu_changed"):
        env.ffi_cookbook_gpu_changed = {}


def outdated(app, env, added, changed, removed) -> list[str]:
    """Pages whose stale mark would change (a source of their recipe changed) are read again."""
    again = []
    runs = getattr(env, "ffi_cookbook_gpu_runs", None) or stored_runs(Path(app.config.gpu_runs_data))
    repo = Path(app.config.gpu_runs_repo)
    for docname, before in getattr(env, "ffi_cookbook_gpu_changed", {}).items():
        name = notebook_name(docname)
        nb = runs.get(name)
        if nb and docname in env.found_docs and before != changed_since(
                nb["metadata"]["ffi_cookbook_gpu_run"]["commit"], name, repo):
            again.append(docname)
    return again


def data_digest(data: Path = DATA) -> str:
    """Changes whenever a stored run does, so that every page is read again (notes change)."""
    digest = hashlib.sha256()
    for path in sorted(data.glob("*")):
        digest.update(path.name.encode() + path.read_bytes())
    return digest.hexdigest()[:16]


def setup(app):
    app.add_config_value("gpu_runs_data", str(DATA), "env")
    app.add_config_value("gpu_runs_repo", str(ROOT), "env")
    app.add_config_value("gpu_runs_digest", data_digest(), "env")
    app.connect("env-before-read-docs", load_runs)
    app.connect("env-get-outdated", outdated)
    app.connect("doctree-read", on_doctree_read)
    return {"parallel_read_safe": False, "parallel_write_safe": True}
