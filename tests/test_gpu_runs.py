"""The stored GPU runs (docs/gpu-runs/data) are complete, clean, and shown on the site.

The notebooks in docs/gpu-runs/data were executed on a GPU box (make gpu-check, through
tools/gpu_notebooks.py); the site's CPU-only build reads them (the GPU runs page, and
conf/gpu_runs.py's note and GPU output blocks on each page whose notebook ran there).
"""

import json
import re
import shutil
import subprocess
import sys
import textwrap

import pytest

STAMP_KEYS = {"device", "driver", "cuda", "torch", "apache_tvm_ffi", "commit", "date", "seconds", "error"}
DEVICE_STAMP = "On NVIDIA H100 80GB HBM3, 2026-11-23, commit c96b285"


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
        for path in ("/root/", "/home/", "/work/"):
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
        pages = list(html.glob(f"cookbook/{name}/notebook.html")) + list(html.glob(f"*/{name}.html"))
        assert len(pages) == 1, name
        text = pages[0].read_text()
        assert f"This notebook also ran on a GPU: {device}" in text, f"{name}: no GPU run note"
        assert "gpu-runs/index.html" in text


# ---------------------------------------------------------------- conf/gpu_runs.py on a tiny site

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
    return next("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code" and needle in "".join(c["source"]))


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
        sys.path.insert(0, {str(root / "conf")!r})
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

    nb = runs["06-cuda-streams"]
    html = build_tiny_site(root, tmp_path, "06-cuda-streams", nb)
    text = unescape(re.sub(r"<[^>]+>", "", html))
    # the note under the title, from the stamp, with the files changed since commit c96b285
    assert "This notebook also ran on a GPU: NVIDIA H100 80GB HBM3" in text
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
