"""Show, on each page whose notebook also ran on a GPU, what its GPU cells printed there.

The site is built on a machine without a GPU. ``make gpu-check`` (tools/gpu_check.py)
executes the notebooks on a GPU machine and keeps each one in
``docs/gpu-runs/data/<name>.ipynb``, outputs included, with a stamp in its metadata
(device, driver, CUDA, versions, commit, date). For every page with such a file this
extension, when the page is read (no edit of the page needed):

- puts a note under the page title, written from the stamp, that says where and when the
  notebook ran there and whether every cell ran; where a file the page's code is built or
  run from changed between the stamp's commit and HEAD (git: a source of the recipe
  folder or of the page's ``literalinclude`` folders, a helper header they include), the
  note names those files. Prose is not such a file: an edit of a ``.md`` page marks nothing,
  and a code cell whose source changed is not matched to the stored run (below);
- under each GPU cell of the page (its code mentions CUDA, a GPU or NVSHMEM) whose source
  differs from every cell of the stored run, says that it has not run on a GPU in this form;
- in each GPU cell whose source is the same as a cell of the stored run, adds a block after
  the cell's own output,
  "On <device>, <date>, commit <x>", with everything that cell printed there, whole, and
  its figures as images (inside the cell, so tools/snippets counts it as output, not as a
  code block to verify).

``ran_exports`` tells docs/_ext/snippet_labels.py which exported functions a stored run
called without an error, so that a CUDA block's label says where it ran.
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
# IPython 8 on Python 3.12 could not format some tracebacks (it tokenized a C++ source of a
# tvm_ffi frame as Python) and printed its own failure instead: not what the cell printed.
# tools/gpu_notebooks.py now runs kernels with plain tracebacks; older runs may hold this.
IPYTHON_FAILURE = re.compile(r"Unexpected exception formatting exception|IPython/core/ultratb\.py")
INCLUDE = re.compile(r"^```\{literalinclude\}\s+(\S+)", re.M)
HELPER_HEADER = re.compile(r"[<\"](ffi_cookbook/\w+\.h)[>\"]")
EXPORT = re.compile(r"TVM_FFI_DLL_EXPORT_TYPED_FUNC\(\s*(\w+)\s*,\s*([\w:]+)")


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


def page_file(docname: str, repo: Path) -> Path | None:
    """The source of a page: ``cookbook/<name>/notebook.md`` or ``docs/<docname>.md``."""
    for path in (repo / f"{docname}.md", repo / "docs" / f"{docname}.md"):
        if path.is_file():
            return path
    return None


def code_sources(docname: str, repo: Path = ROOT) -> list[str]:
    """The files a page's code is built or run from, relative to ``repo``: every file but the
    prose (``.md``) of its recipe folder, or of each folder a ``literalinclude`` of the page
    reads from, and the helper headers those files include."""
    page = page_file(docname, repo)
    if page is None:
        return []
    folders = {page.parent} if page.name == "notebook.md" else {
        (page.parent / target).resolve().parent for target in INCLUDE.findall(page.read_text())}
    files = sorted(f for folder in folders if folder.is_dir() for f in folder.rglob("*")
                   if f.is_file() and f.suffix != ".md" and "build" not in f.relative_to(folder).parts[:1])
    headers = set()
    for file in files:
        try:
            headers |= set(HELPER_HEADER.findall(file.read_text()))
        except (UnicodeDecodeError, OSError):
            continue
    found = [str(f.relative_to(repo)) for f in files if f.is_relative_to(repo)]
    return found + sorted(f"include/{h}" for h in headers if (repo / "include" / h).is_file())


def changed_since(commit: str, docname: str, repo: Path = ROOT) -> list[str] | None:
    """The files of ``code_sources`` changed between ``commit`` and HEAD, by file name only;
    None where git cannot tell (no repository, or the commit is not in it)."""
    paths = code_sources(docname, repo)
    if not paths:
        return []
    done = subprocess.run(["git", "diff", "--name-only", f"{commit}..HEAD", "--", *paths],
                          cwd=repo, capture_output=True, text=True)
    if done.returncode:
        return None
    return [line for line in done.stdout.splitlines() if line]


def source_of(cell: dict) -> str:
    source = cell.get("source", "")
    return ("".join(source) if isinstance(source, list) else source).strip()


def outputs_of(cell: dict) -> list[tuple[str, str]]:
    """What a stored cell printed, whole, in order: ("text", text) and ("png", base64) parts.
    IPython's own failure to format a traceback is left out (see IPYTHON_FAILURE)."""
    parts: list[tuple[str, str]] = []
    for output in cell.get("outputs", []):
        kind, data = output["output_type"], output.get("data", {})
        if kind == "stream":
            text = "".join(output["text"])
            if not IPYTHON_FAILURE.search(text):
                parts.append(("text", text))
        elif kind == "error":
            parts.append(("text", f"{output['ename']}: {output['evalue']}\n"))
        elif "image/png" in data:
            parts.append(("png", "".join(data["image/png"]).replace("\n", "")))
        elif "text/plain" in data:
            parts.append(("text", "".join(data["text/plain"]) + "\n"))
    merged: list[tuple[str, str]] = []
    for kind, value in parts:  # consecutive text parts are one block
        if kind == "text" and merged and merged[-1][0] == "text":
            merged[-1] = ("text", merged[-1][1] + value)
        else:
            merged.append((kind, value))
    return [(k, v.rstrip() if k == "text" else v) for k, v in merged if v.strip()]


def lost_output(cell: dict) -> bool:
    """True where IPython failed to format the cell's error there (its message is not stored)."""
    return any(o["output_type"] == "stream" and IPYTHON_FAILURE.search("".join(o["text"]))
               for o in cell.get("outputs", []))


def ran_exports(nb: dict) -> set[str]:
    """Names of exported functions that a code cell of the stored run called and that raised no
    error there: identifiers of each such cell's source (the caller of ``EXPORT`` names)."""
    names: set[str] = set()
    for cell in nb["cells"]:
        if cell.get("cell_type") != "code" or cell.get("execution_count") is None:
            continue
        if any(o["output_type"] == "error" for o in cell.get("outputs", [])) or lost_output(cell):
            continue
        names |= set(re.findall(r"\b\w+\b", source_of(cell)))
    return names


def exports_in(text: str) -> set[str]:
    """The names a C++/CUDA text exports with ``TVM_FFI_DLL_EXPORT_TYPED_FUNC``."""
    return {name for name, _ in EXPORT.findall(text)}


def exports_shown(block: str, file_text: str) -> set[str]:
    """The exports a shown block stands for: its own export lines; else the exports, in the file it
    is shown from, of the functions it defines; else every export of that file (a kernel or a
    helper of them)."""
    own = exports_in(block)
    if own:
        return own
    pairs = EXPORT.findall(file_text)
    defined = {name for name, func in pairs if re.search(rf"\b{func.split('::')[-1]}\s*\(", block)}
    return defined or {name for name, _ in pairs}


def stamp_words(stamp: dict) -> str:
    return f"On {stamp['device']}, {stamp['date']}, commit {stamp['commit']}"


def doc_ref(docname: str, text: str) -> addnodes.pending_xref:
    ref = addnodes.pending_xref("", refdomain="std", reftype="doc", reftarget="/" + PAGE, refexplicit=True,
                                refdoc=docname)
    ref += nodes.inline("", text)
    return ref


def file_list(files: list[str]) -> str:
    return ", ".join(files[:6]) + (f" and {len(files) - 6} more" if len(files) > 6 else "")


def note_for(stamp: dict, changed: list[str] | None, docname: str, blocks: int = 0, lost: int = 0) -> nodes.note:
    outcome = "every cell ran" if stamp["error"] is None else f"a cell stopped it there ({stamp['error']})"
    shown = ("Below each GPU cell that printed there, a block shows what it printed; every run is on the "
             if blocks else "Every run is on the ")
    text = (f"This notebook also ran on a GPU: {stamp['device']} (driver {stamp['driver']}, CUDA {stamp['cuda']}), "
            f"torch {stamp['torch']}, apache-tvm-ffi {stamp['apache_tvm_ffi']}, commit {stamp['commit']}, "
            f"on {stamp['date']}; {outcome}. {shown}")
    paragraphs = [nodes.paragraph("", "", nodes.Text(text), doc_ref(docname, "GPU runs page"), nodes.Text("."))]
    if changed:
        paragraphs.append(nodes.paragraph("", f"Code this page builds or runs changed since that run "
                                              f"({file_list(changed)}): what it prints on a GPU may differ.",
                                          classes=["gpu-run-stale"]))
    elif changed is None:
        paragraphs.append(nodes.paragraph("", f"Whether this page's code changed since commit {stamp['commit']} "
                                              "could not be read from git.", classes=["gpu-run-stale"]))
    if lost:
        paragraphs.append(nodes.paragraph("", f"That run did not record the error of {lost} GPU "
                                              f"cell{'' if lost == 1 else 's'} (IPython failed to format "
                                              "its traceback there); those cells show no block.",
                                          classes=["gpu-run-lost"]))
    return nodes.note("", *paragraphs, classes=["gpu-run"])


def output_block(stamp: dict, parts: list[tuple[str, str]], changed: list[str] | None) -> nodes.container:
    stale = f" (code changed since: {file_list(changed)})" if changed else (
        " (whether its code changed since is unknown)" if changed is None else "")
    block = nodes.container("", classes=["gpu-run-output"])
    block += nodes.paragraph("", stamp_words(stamp) + stale + ":", classes=["gpu-run-stamp"])
    title = f"{stamp['device']}, commit {stamp['commit']}, {stamp['date']}"
    for kind, value in parts:
        if kind == "text":
            block += nodes.literal_block(value, value, language="none")
        else:
            html = (f'<figure class="gpu-run-figure"><img src="data:image/png;base64,{value}" '
                    f'alt="figure printed on {title}" title="{title}"/>'
                    f'<figcaption>Figure printed on {title}</figcaption></figure>')
            block += nodes.raw("", html, format="html")
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
    added = lost = 0
    for cell, source in page_cells(doctree):
        if not GPU_WORDS.search(source):
            continue
        if source not in stored:  # the code changed since the run: nothing of it is shown as this cell's
            cell += nodes.paragraph("", f"This cell's code is not the code the stored GPU run ({stamp['device']}, "
                                        f"commit {stamp['commit']}) executed: it has not run on a GPU in this form.",
                                    classes=["gpu-run-not-run"])
            continue
        lost += lost_output(stored[source])
        parts = outputs_of(stored[source])
        if parts:
            cell += output_block(stamp, parts, changed)  # inside the cell: an output, as the checkers read it
            added += 1
    title = section.next_node(nodes.title)
    section.insert(section.index(title) + 1, note_for(stamp, changed, docname, added, lost))
    return added


def on_doctree_read(app, doctree) -> None:
    docname = app.env.docname
    if docname == PAGE or docname.startswith("gpu-runs/"):
        return
    nb = app.env.ffi_cookbook_gpu_runs.get(notebook_name(docname))
    if nb is None:
        return
    stamp = nb["metadata"]["ffi_cookbook_gpu_run"]
    changed = changed_since(stamp["commit"], docname, Path(app.config.gpu_runs_repo))
    app.env.ffi_cookbook_gpu_changed[docname] = changed
    add_gpu_output(doctree, docname, nb, changed)


def load_runs(app, env, docnames) -> None:
    env.ffi_cookbook_gpu_runs = stored_runs(Path(app.config.gpu_runs_data))
    if not hasattr(env, "ffi_cookbook_gpu_changed"):
        env.ffi_cookbook_gpu_changed = {}


def outdated(app, env, added, changed, removed) -> list[str]:
    """Pages whose stale mark would change (a file their code comes from changed) are read again."""
    again = []
    runs = getattr(env, "ffi_cookbook_gpu_runs", None) or stored_runs(Path(app.config.gpu_runs_data))
    repo = Path(app.config.gpu_runs_repo)
    for docname, before in getattr(env, "ffi_cookbook_gpu_changed", {}).items():
        nb = runs.get(notebook_name(docname))
        if nb and docname in env.found_docs and before != changed_since(
                nb["metadata"]["ffi_cookbook_gpu_run"]["commit"], docname, repo):
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
