"""The stored GPU runs (docs/gpu-runs/data) are complete, clean, and shown on the site.

The notebooks in docs/gpu-runs/data were executed on a GPU box (make gpu-check, through
tools/gpu_notebooks.py); the site's CPU-only build reads them (the GPU runs page, and
docs/_ext/gpu_runs.py's note and GPU output blocks on each page whose notebook ran there).
"""

import json
import re
import shutil
import subprocess
import sys
import textwrap

import pytest
from docutils import nodes

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
    html = root / "_build" / "html"
    if not (html / "index.html").is_file():
        pytest.fail("the site is not built: run `make docs` (make test does it first)")
    device = next(iter(runs.values()))["metadata"]["ffi_cookbook_gpu_run"]["device"]
    for name in runs:
        pages = [*html.glob(f"cookbook/{name}/notebook.html"), *html.glob(f"*/{name}.html"), *html.glob(f"{name}.html")]
        assert len(pages) == 1, name
        text = pages[0].read_text()
        assert f"This notebook also ran on a GPU: {device}" in text, f"{name}: no GPU run note"
        assert "gpu-runs/index.html" in text
        assert "Unexpected exception formatting exception" not in text, name
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


def test_a_page_shows_its_gpu_output_beside_each_gpu_cell_with_stamp_and_stale_mark(root, runs, tmp_path):
    from html import unescape

    nb = json.loads(json.dumps(runs["06-cuda-streams"]))
    nb["metadata"]["ffi_cookbook_gpu_run"]["commit"] = "c96b285"
    html = build_tiny_site(root, tmp_path, "06-cuda-streams", nb)
    text = unescape(re.sub(r"<[^>]+>", "", html))
    # the note under the title, from the stamp, with the files changed since commit c96b285
    assert "This notebook also ran on a GPU: NVIDIA H200" in text
    changed = subprocess.run(["git", "diff", "--name-only", "c96b285..HEAD", "--", "cookbook/06-cuda-streams"],
                             cwd=root, capture_output=True, text=True, check=True).stdout.split()
    assert changed, "recipe 06 changed since c96b285 (its CMakeLists.txt maps source paths)"
    assert "The sources of this page changed since that run (" + changed[0] in text
    # one block per GPU cell that printed there, after the cell, in page order
    assert html.count('class="gpu-run-output') == 2, html
    assert text.count(DEVICE_STAMP + " (its sources changed since):") == 2
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
    assert len(blocks) == 2
    assert all(in_cell(b.next_node(nodes.literal_block)) == "output" for b in blocks)
    # the stored run's IPython formatting failure is not shown as if the cell printed it
    assert "Unexpected exception formatting exception" not in text
    assert "IPython could not format this error's traceback there" in text


def test_a_page_whose_sources_did_not_change_has_no_stale_mark(root, runs, tmp_path):
    nb = json.loads(json.dumps(runs["06-cuda-streams"]))
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True,
                          check=True).stdout.strip()
    nb["metadata"]["ffi_cookbook_gpu_run"]["commit"] = head
    dirty = subprocess.run(["git", "status", "--porcelain", "--", "cookbook/06-cuda-streams"], cwd=root,
                           capture_output=True, text=True).stdout
    html = build_tiny_site(root, tmp_path, "06-cuda-streams", nb)
    assert f"commit {head}:" in html or f"commit {head} (its" in html
    assert "changed since that run" not in html or dirty
    assert "(its sources changed since)" not in html or dirty


# ------------------------------------------------------------- no GPU claim without GPU output

# A sentence of a page's prose about what happens on a GPU (it names a GPU, an H100 or a GPU
# box as the place). Each must be listed below with what it rests on:
#   ("output", run, text): a stored GPU run's output holds the text (docs/_ext/gpu_runs.py shows
#                          it on the page, below the cell, or the page's note links it);
#   ("bench", file, text): a stored GPU measurement (the GPU runs page prints it);
#   ("checks",):           the sentence says what a GPU cell checks, not what it found;
#   ("code",):             it says what code does or where it runs, not a GPU result;
#   ("upstream", url):     it states a library's documented behaviour (the page that says so).
CLAIM = re.compile(r"\b[Oo]n (a|an|the) (GPU|H100|H200)\b|\bGPU box\b|\bH[12]00\b")
GPU_CLAIMS = {
    "07-nvshmem": [("The cell below runs the same line with one PE per GPU of the machine", ("code",))],
    "08-many-frameworks": [
        ("lets the jitted `f` run on a GPU array",
         ("output", "08-many-frameworks", "scale_cuda under jax.jit on cuda:0")),
    ],
    "10-rmsnorm": [("on a GPU the CUDA kernel runs the same checks, with shapes that take each of its launches",
                    ("checks",)),
                   ("and the caller's stream on a GPU; its GPU tests skip where torch sees none", ("code",))],
    "11-from-torch-extension": [("(see [On a GPU](#on-a-gpu))", ("code",))],
    "14-c-and-cpp-callers": [("then described as living on a GPU", ("code",))],
    "16-objects-and-callbacks": [
        ("(on the GPU machine that ran this notebook for the site, it did)",
         ("output", "16-objects-and-callbacks", "libobjects.so             keep_module_alive=False: killed by SIGSEGV")),
    ],
    "19-debugging-crashes": [
        ("On a GPU the child launches 2048 threads per block, twice the limit.", ("code",)),
        ("On a GPU the child also checks for the unchecked error still pending", ("checks",)),
        ("on a GPU the cell below checks that the next call that waits for it", ("checks",)),
        ("on a GPU, the launch error of the 2048-thread block", ("code",)),
        ("on a GPU the cell checks that it goes unnoticed without a tool", ("checks",)),
    ],
    "20-precompiled-gpu-code": [("A100 and H100):", ("code",)),
                                ("the launches wait for a GPU box", ("code",))],
    "21-cuda-graphs": [("The cell below checks both on a GPU:", ("checks",)),
                       ("and the cell checks that each call, with new inputs, matches eager mode", ("checks",)),
                       ("On a GPU the cells above check that the kernel sees the capturing stream", ("checks",))],
    "22-cuda-wheel": [("on the CPU (`src/scale_cpu.cc`, as in recipe 13) and on a GPU.", ("code",))],
    "24-torch-stable-abi": [("On a machine with a GPU, JAX puts a new array on the GPU",
                             ("upstream", "https://docs.jax.dev/en/latest/201/placement.html"))],
    "25-triton-kernel": [("on a GPU, what that launch costs next to Triton's own launcher in Python", ("code",)),
                         ("The launch needs a GPU of the architecture compiled for, sm_90 (H100, H200) here",
                          ("code",))],
    "kernel-library-memory": [("from PyTorch's caching allocator on a GPU, so they show up in torch's memory",
                               ("code",)),
                              ("This cell checks all of that on a GPU:", ("checks",))],
    "kernel-library": [("an array on a GPU would make XLA look for a CUDA handler",
                        ("upstream", "https://docs.jax.dev/en/latest/ffi.html")),
                       ("On a GPU two steps come in between: the entry makes the input's GPU current",
                        ("code",))],
}
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


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


def stored_outputs(data, name):
    nb = json.loads((data / f"{name}.ipynb").read_text())
    return json.dumps([c.get("outputs", []) for c in nb["cells"]])


def test_every_gpu_claim_of_a_page_is_listed_with_what_it_rests_on(root):
    unlisted = []
    for name, path in page_sources(root).items():
        for sentence in claim_sentences(path.read_text()):
            if not any(fragment in sentence for fragment, _ in GPU_CLAIMS.get(name, [])):
                unlisted.append(f"{name}: {sentence}")
    assert not unlisted, "GPU claims with no stored output or cell check behind them:\n" + "\n".join(unlisted)


@pytest.mark.parametrize("name", sorted(GPU_CLAIMS))
def test_each_listed_gpu_claim_is_on_its_page_and_rests_on_stored_output_or_a_check(root, data, name):
    text = " ".join(page_sources(root)[name].read_text().split())
    for fragment, backing in GPU_CLAIMS[name]:
        assert fragment in text, f"{name}: the claim is no longer on the page: {fragment}"
        if backing[0] == "output":
            assert backing[2] in stored_outputs(data, backing[1]), (name, fragment, backing)
        elif backing[0] == "bench":
            assert backing[2] in (data / backing[1]).read_text(), (name, fragment, backing)
        elif backing[0] == "checks":
            assert re.search(r"\bcheck", fragment), f"{name}: says it checks, but does not: {fragment}"
        elif backing[0] == "upstream":
            assert backing[1].startswith("https://"), backing
        else:
            assert backing == ("code",)
            assert not re.search(r"\b(was|were|reported|raised|worked|crashed|ran)\b", fragment), \
                f"{name}: a result in the past tense is not a description of code: {fragment}"


def test_recipes_19_and_21_state_no_gpu_result_that_no_gpu_produced(root):
    for name, gone in [("19-debugging-crashes", "`compute-sanitizer --tool memcheck` reported it"),
                       ("21-cuda-graphs", "output worked under capture and `cudaMalloc` raised")]:
        text = " ".join((root / "cookbook" / name / "notebook.md").read_text().split())
        assert gone not in text, name
