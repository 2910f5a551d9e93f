"""The stored GPU runs (docs/gpu-runs/data) are complete, clean, and shown on the site.

The notebooks in docs/gpu-runs/data were executed on a GPU box (make gpu-check, through
tools/gpu_notebooks.py); the site's CPU-only build reads them (the GPU runs page, and
docs/_ext/gpu_runs.py's note and GPU output blocks on each page whose notebook ran there).
"""

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from docutils import nodes

SITE = Path(os.environ.get("FFI_COOKBOOK_BUILD_DIR") or Path(__file__).resolve().parents[2] / "_build") / "html"
STAMP_KEYS = {"device", "driver", "cuda", "torch", "apache_tvm_ffi", "commit", "date", "seconds", "error"}
# the stored runs are of commit 587c9e5; the stale-mark test stamps a copy with an older commit
DEVICE_STAMP = "On NVIDIA H200, 2026-11-27, commit c96b285"


@pytest.fixture(scope="module")
def data(root):
    return root / "docs" / "gpu-runs" / "data"


@pytest.fixture(scope="module")
def runs(data):
    found = {p.stem: json.loads(p.read_text()) for p in sorted(data.glob("*.ipynb"))}
    assert "06-cuda-streams" in found
    assert found, "no stored GPU runs"
    return found


def known_notebooks(root):
    names = {p.parent.name for p in (root / "cookbook").glob("*/notebook.md")}
    names |= {p.stem for p in (root / "docs").glob("*/*.md") if p.stem != "index"}
    names |= {p.stem for p in (root / "docs").glob("*.md") if p.stem != "index"}  # get-started
    return names


def test_every_run_is_stamped_by_one_machine(runs):
    stamps = [nb["metadata"]["ffi_cookbook_gpu_run"] for nb in runs.values()]
    for stamp in stamps:
        assert set(stamp) == STAMP_KEYS
        assert re.fullmatch(r"\d{4}-\d\d-\d\d", stamp["date"])
    machines = {tuple(s[k] for k in sorted(STAMP_KEYS - {"seconds", "error"})) for s in stamps}
    assert len(machines) == 1, machines


def test_every_run_belongs_to_a_notebook_of_the_site(root, runs):
    assert set(runs) <= known_notebooks(root)


def test_every_notebook_that_stopped_on_the_gpu_is_explained_on_the_page(root, runs):
    page = (root / "docs" / "gpu-runs" / "index.md").read_text()
    explained = page[page.index("EXPLAINED = {"):page.index("stopped = ")]
    for name, nb in runs.items():
        stopped = nb["metadata"]["ffi_cookbook_gpu_run"]["error"] is not None
        assert stopped == (f'"{name}":' in explained), f"{name}: stopped={stopped}, explained on the page?"


def test_stored_outputs_carry_no_machine_paths(runs):
    for name, nb in runs.items():
        text = json.dumps(nb["cells"])
        for path in ("/root/", "/home/", "/work/", "/opt/", "/tmp/"):
            assert path not in text, f"{name}: a machine path ({path}...) in the stored outputs"


def test_the_page_offers_every_run_for_download(root, runs, data):
    page = (root / "docs" / "gpu-runs" / "index.md").read_text()
    for name in runs:
        assert f"<data/{name}.ipynb>" in page, f"{name}.ipynb is not offered on the GPU runs page"
    assert (data / "bench.txt").is_file()


def test_pages_that_ran_on_a_gpu_say_so(root, runs):
    html = SITE
    if not (html / "index.html").is_file():
        pytest.fail("the site is not built: run `make docs` (its last step runs these tests)")
    device = next(iter(runs.values()))["metadata"]["ffi_cookbook_gpu_run"]["device"]
    for name in runs:
        pages = [*html.glob(f"cookbook/{name}/notebook.html"), *html.glob(f"*/{name}.html"), *html.glob(f"{name}.html")]
        assert len(pages) == 1, name
        text = pages[0].read_text()
        assert f"This notebook also ran on a GPU: {device}" in text, f"{name}: no GPU run note"
        assert "gpu-runs/index.html" in text
        assert "Unexpected exception formatting exception" not in text, name
        # whole: no cut output, no figure reduced to words, no placeholder for a lost traceback
        for placeholder in ("more lines in the stored notebook", "(a figure)", "could not format this error"):
            assert placeholder not in text, (name, placeholder)
    # recipe 01's GPU cell printed its check there: shown below the cell, stamped
    page = (html / "cookbook" / "01-add-one" / "notebook.html").read_text()
    assert 'class="gpu-run-output' in page
    assert "add_one_cuda matches torch on NVIDIA H200" in page


# ---------------------------------------------------------------- docs/_ext/gpu_runs.py on a tiny site

PAGE = """\
---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

# A recipe

```{{code-cell}} ipython3
{gpu_cell}
```

```{{code-cell}} ipython3
{error_cell}
```

```{{code-cell}} ipython3
print("a CPU cell")
```
"""


def stored_cell(nb, needle):
    return next("".join(c["source"]) for c in nb["cells"]
                if c["cell_type"] == "code" and needle in "".join(c["source"]))


def build_tiny_site(root, tmp_path, name, nb):
    """A site of one page, cookbook/<name>/notebook.md, with two GPU cells of the stored run
    (one printed text there, one raised) and a CPU cell; the stored run in its own data folder."""
    src = tmp_path / "src"
    page = src / "cookbook" / name / "notebook.md"
    page.parent.mkdir(parents=True)
    page.write_text(PAGE.format(gpu_cell=stored_cell(nb, "use_raw_stream(") if "use_raw_stream(" in json.dumps(nb)
                                else stored_cell(nb, "cuda"),
                                error_cell=stored_cell(nb, "scale_on_stream_cuda(torch.zeros(3)")))
    (src / "index.md").write_text("# Home\n\n```{toctree}\ncookbook/%s/notebook\ngpu-runs/index\n```\n" % name)
    (src / "gpu-runs").mkdir()
    (src / "gpu-runs" / "index.md").write_text("# GPU runs\n")
    data = tmp_path / "data"
    data.mkdir()
    (data / f"{name}.ipynb").write_text(json.dumps(nb))
    (src / "conf.py").write_text(textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(root / "docs" / "_ext")!r})
        extensions = ["myst_nb", "gpu_runs"]
        nb_execution_mode = "off"
        gpu_runs_data = {str(data)!r}
        gpu_runs_repo = {str(root)!r}
        """))
    done = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-q", "-E", str(src), str(tmp_path / "html")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return (tmp_path / "html" / "cookbook" / name / "notebook.html").read_text()


def gpu_runs_module(root):
    sys.path.insert(0, str(root / "docs" / "_ext"))
    try:
        import gpu_runs
    finally:
        sys.path.remove(str(root / "docs" / "_ext"))
    return gpu_runs


def test_a_page_shows_its_gpu_output_beside_each_gpu_cell_with_stamp_and_stale_mark(root, runs, tmp_path):
    from html import unescape

    nb = json.loads(json.dumps(runs["06-cuda-streams"]))
    nb["metadata"]["ffi_cookbook_gpu_run"]["commit"] = "c96b285"
    html = build_tiny_site(root, tmp_path, "06-cuda-streams", nb)
    text = unescape(re.sub(r"<[^>]+>", "", html))
    # the note under the title, from the stamp, naming the code files changed since commit c96b285
    assert "This notebook also ran on a GPU: NVIDIA H200" in text
    changed = gpu_runs_module(root).changed_since("c96b285", "cookbook/06-cuda-streams/notebook", root)
    assert changed, "recipe 06's code changed since c96b285 (its CMakeLists.txt maps source paths)"
    assert not any(name.endswith(".md") for name in changed)
    assert "Code this page builds or runs changed since that run (" + changed[0] in text
    # one block per GPU cell that printed there, after the cell, in page order, stamped stale
    assert html.count('class="gpu-run-output') == 1, html
    assert text.count(DEVICE_STAMP + " (code changed since: " + changed[0]) == 1
    gpu_cell = stored_cell(nb, "use_raw_stream(")
    first_line = next(line for c in nb["cells"] if "".join(c["source"]) == gpu_cell
                      for o in c["outputs"] if o["output_type"] == "stream" for line in "".join(o["text"]).splitlines())
    assert text.index(first_line) > text.index(gpu_cell.splitlines()[0])
    assert text.index(first_line) < text.index('print("a CPU cell")')
    # inside its cell: the site's code-block checker (tools/snippets) reads it as cell output
    import pickle

    from tools.snippets.collect import in_cell

    doctree = pickle.loads((tmp_path / "html" / ".doctrees" / "cookbook" / "06-cuda-streams" / "notebook.doctree")
                           .read_bytes())
    blocks = [n for n in doctree.findall(nodes.container) if "gpu-run-output" in n["classes"]]
    assert len(blocks) == 1
    assert all(in_cell(b.next_node(nodes.literal_block)) == "output" for b in blocks)
    # the error cell: the stored run has only IPython's failure to format it, which is not shown
    # as if the cell printed it; the note says that the error was not recorded
    assert "Unexpected exception formatting exception" not in text and "TokenError" not in text
    assert "That run did not record the error of 1 GPU cell" in text


def test_a_gpu_output_is_shown_whole_and_its_figures_as_images(root, runs):
    gpu_runs = gpu_runs_module(root)
    long_text = "".join(f"line {i}\n" for i in range(200))
    png = "iVBORw0KGgo="
    cell = {"cell_type": "code", "source": "plot_cuda()", "execution_count": 1, "outputs": [
        {"output_type": "stream", "name": "stdout", "text": long_text},
        {"output_type": "display_data", "data": {"image/png": png, "text/plain": "<Figure>"}, "metadata": {}}]}
    parts = gpu_runs.outputs_of(cell)
    assert parts == [("text", long_text.rstrip()), ("png", png)]
    stamp = {"device": "NVIDIA H200", "date": "2026-11-27", "commit": "587c9e5"}
    block = gpu_runs.output_block(stamp, parts, [])
    html = block.astext() + "".join(n.astext() for n in block.findall(nodes.raw))
    assert "line 199" in html and "more lines" not in html
    assert f"data:image/png;base64,{png}" in html
    assert "Figure printed on NVIDIA H200, commit 587c9e5" in html
    # every stored run is shown whole: no figure is reduced to words, no output cut
    for name, nb in runs.items():
        for c in nb["cells"]:
            shown = gpu_runs.outputs_of(c)
            images = sum("image/png" in o.get("data", {}) for o in c.get("outputs", []))
            assert sum(kind == "png" for kind, _ in shown) == images, name


def test_a_gpu_cell_whose_code_changed_says_it_has_not_run_on_a_gpu(root):
    gpu_runs = gpu_runs_module(root)
    section = nodes.section("", nodes.title("", "A recipe"))
    changed = nodes.container("", nodes.literal_block("", "mod.twice_cuda(x, y)  # new"), nb_element="cell_code")
    kept = nodes.container("", nodes.literal_block("", "mod.once_cuda(x)"), nb_element="cell_code")
    section += [changed, kept]
    doctree = nodes.document(None, None)
    doctree += section
    stamp = {"device": "NVIDIA H200", "driver": "1", "cuda": "13.0", "torch": "2", "apache_tvm_ffi": "0.1",
             "commit": "587c9e5", "date": "2026-11-27", "error": None}
    nb = {"metadata": {"ffi_cookbook_gpu_run": stamp}, "cells": [
        {"cell_type": "code", "source": "mod.once_cuda(x)", "execution_count": 1,
         "outputs": [{"output_type": "stream", "name": "stdout", "text": "once on the GPU\n"}]}]}
    assert gpu_runs.add_gpu_output(doctree, "cookbook/x/notebook", nb, []) == 1
    assert "has not run on a GPU in this form" in changed.astext() and "commit 587c9e5" in changed.astext()
    assert "has not run on a GPU" not in kept.astext() and "once on the GPU" in kept.astext()


@pytest.fixture()
def recipe_history(root, tmp_path):
    """A git repository holding a copy of recipe 06, committed once; returns (repo, commit)."""
    repo = tmp_path / "repo"
    shutil.copytree(root / "cookbook" / "06-cuda-streams", repo / "cookbook" / "06-cuda-streams",
                    ignore=shutil.ignore_patterns("build"))
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(repo)]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "run"], check=True)
    head = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True)
    return repo, git, head.stdout.strip()


def test_a_prose_edit_leaves_no_stale_mark_and_a_code_edit_names_its_file(root, recipe_history):
    gpu_runs = gpu_runs_module(root)
    repo, git, run_commit = recipe_history
    docname = "cookbook/06-cuda-streams/notebook"
    page = repo / "cookbook" / "06-cuda-streams" / "notebook.md"
    page.write_text(page.read_text().replace("\n\n", "\n\nA new sentence of prose.\n\n", 1))
    readme = repo / "cookbook" / "06-cuda-streams" / "README.md"
    readme.write_text(readme.read_text() + "\nMore prose.\n")
    subprocess.run([*git, "commit", "-q", "-am", "prose"], check=True)
    assert gpu_runs.changed_since(run_commit, docname, repo) == []
    kernel = next((repo / "cookbook" / "06-cuda-streams").glob("*.cu"))
    kernel.write_text(kernel.read_text() + "\n// a comment is a change of the code\n")
    subprocess.run([*git, "commit", "-q", "-am", "code"], check=True)
    assert gpu_runs.changed_since(run_commit, docname, repo) == [f"cookbook/06-cuda-streams/{kernel.name}"]
    note = gpu_runs.note_for({"device": "D", "driver": "1", "cuda": "13.0", "torch": "2", "apache_tvm_ffi": "0.1",
                              "commit": run_commit, "date": "2026-11-28", "error": None},
                             [f"cookbook/06-cuda-streams/{kernel.name}"], docname)
    assert kernel.name in note.astext()


# ------------------------------------------------------ a GPU claim is a GPU cell's assertion

# A sentence of a page's prose that names a GPU (a GPU, an H100 or H200, a GPU box) as the place
# where something happened, and says what happened there in the past tense (ran, raised,
# printed, ...), is a claim about a GPU run. It is true only where the page has a GPU cell that
# checks it: a cell whose code mentions CUDA, a GPU or NVSHMEM and asserts. On a GPU machine
# that cell fails loudly when the claim breaks, and the GPU runs page lists the failure.
# Sentences that say what code does or what a cell checks, in the present tense, need no cell.
# (CONTRIBUTING.md, under "Recipes", says the same to a contributor: "GPU cells".)
CLAIM = re.compile(r"\b[Oo]n (a|an|the) (GPU|H100|H200)\b|\bGPU box\b|\bH[12]00\b")
RESULT = re.compile(r"\b(was|were|reported|raised|worked|crashed|ran|printed|showed|measured|took|failed|passed)\b")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
# What a code cell and a GPU cell are: make gpu-check's own definitions (its plan marks a notebook
# with GPU cells by them), so the rule and the GPU run agree on which cells run on a GPU.
from tools.gpu_check import CODE_CELL, GPU_WORDS  # noqa: E402


def page_sources(root):
    pages = {p.parent.name: p for p in sorted(root.glob("cookbook/*/notebook.md"))}
    for pattern in ("docs/guides/*.md", "docs/concepts/*.md", "docs/get-started.md"):
        pages.update({p.stem: p for p in sorted(root.glob(pattern)) if p.stem != "index"})
    return pages


def claim_sentences(text):
    """The prose sentences of a page (code blocks, headings and front matter left out) that
    name a GPU as the place where something happens."""
    text = re.sub(r"^---\n.*?\n---\n", "", FENCE.sub("\n\n", text), flags=re.S)
    found = []
    for para in re.split(r"\n\s*\n", text):
        if para.lstrip().startswith("#"):
            continue
        para = " ".join(para.split())
        found += [s for s in re.split(r"(?<=[.:;!?])\s+(?=[A-Z(`{-])", para) if CLAIM.search(s)]
    return found


def gpu_result_claims(text):
    return [s for s in claim_sentences(text) if RESULT.search(s)]


def checks_on_a_gpu(text):
    """Whether a code cell of the page mentions CUDA, a GPU or NVSHMEM and asserts (an ``assert``
    statement, ``torch.testing.assert_close``, ``np.testing.assert_...``)."""
    return any(GPU_WORDS.search(cell) and re.search(r"\bassert", cell) for cell in CODE_CELL.findall(text))


def test_every_gpu_result_claimed_in_prose_is_checked_by_a_gpu_cell(root):
    unchecked = []
    for name, path in page_sources(root).items():
        text = path.read_text()
        if not checks_on_a_gpu(text):
            unchecked += [f"{name}: {sentence}" for sentence in gpu_result_claims(text)]
    assert not unchecked, ("GPU results stated in prose with no GPU cell that asserts them:\n"
                           + "\n".join(unchecked))


def test_the_gpu_claim_rule_can_fail():
    page = ("Some text.\n\nOn a GPU the kernel ran twice as fast.\n\n"
            "```{code-cell} ipython3\nprint(torch.cuda.is_available())\n```\n")
    assert gpu_result_claims(page) == ["On a GPU the kernel ran twice as fast."]
    assert not checks_on_a_gpu(page)
    assert checks_on_a_gpu(page.replace("print(torch.cuda.is_available())",
                                        "if torch.cuda.is_available():\n    assert fast_cuda()"))
    assert gpu_result_claims("On a GPU the cell below checks the stream.") == []  # code, not a result


RUN_STAMP = re.compile(r"On (NVIDIA [^,<]+), (\d{4}-\d\d-\d\d), commit (\w+)")
GPU_MODEL = re.compile(r"NVIDIA (?:[A-Z]\d{2,3}[A-Z]*|RTX \w+|GeForce \w+)")
CELL_OUTPUT = re.compile(r'<div class="cell_output docutils container">(.*?)</div>\s*</div>', re.S)


def second_runs(text: str, devices: set[str]) -> list[str]:
    """What a built page shows of a GPU run other than its own stored one: a second stamp, or a
    cell output of the CPU build that names another GPU (a stored table printed by a cell)."""
    found = []
    stamps = set(RUN_STAMP.findall(text))
    if len(stamps) > 1:
        found.append(f"two stamps: {sorted(stamps)}")
    for block in CELL_OUTPUT.findall(text):
        if "gpu-run-output" not in block:
            found += [f"a CPU cell prints a run on {m}" for m in set(GPU_MODEL.findall(block)) - devices]
    return found


def test_second_runs_finds_a_stale_table_and_a_second_stamp():
    own = "On NVIDIA H200, 2026-11-27, commit 587c9e5"
    cpu_cell = '<div class="cell_output docutils container"><pre>measured on NVIDIA H100 80GB HBM3</pre></div></div>'
    assert second_runs(own + cpu_cell, {"NVIDIA H200"}) == ["a CPU cell prints a run on NVIDIA H100"]
    assert second_runs(own + " On NVIDIA H200, 2026-11-20, commit c96b285", {"NVIDIA H200"})
    assert second_runs(own + own, {"NVIDIA H200"}) == []


def test_no_page_shows_two_gpu_runs(root, runs):
    """Each page shows the GPU output of one stored run, its own (recipe 10 showed an older H100
    table above its H200 run)."""
    html = SITE
    if not (html / "index.html").is_file():
        pytest.fail("the site is not built: run `make docs`")
    devices = {nb["metadata"]["ffi_cookbook_gpu_run"]["device"] for nb in runs.values()}
    found = {str(page.relative_to(html)): second_runs(page.read_text(), devices)
             for page in html.rglob("*.html") if "gpu-runs" not in page.parts and "_static" not in page.parts}
    assert not {page: what for page, what in found.items() if what}


def test_no_recipe_keeps_a_second_stored_gpu_measurement(root):
    """A GPU measurement is stored once, by make gpu-check, under docs/gpu-runs/data; a recipe
    folder holds no stamped copy of its own that could disagree with it."""
    for path in root.glob("cookbook/*/*.json"):
        text = path.read_text()
        assert not re.search(r'"(device|measured_by)"', text), f"{path.relative_to(root)} holds a stored GPU run"


def test_recipes_19_and_21_state_no_gpu_result_that_no_gpu_produced(root):
    for name, gone in [("19-debugging-crashes", "`compute-sanitizer --tool memcheck` reported it"),
                       ("21-cuda-graphs", "output worked under capture and `cudaMalloc` raised")]:
        text = " ".join((root / "cookbook" / name / "notebook.md").read_text().split())
        assert gone not in text, name
