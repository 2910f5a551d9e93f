"""The stored GPU runs (docs/gpu-runs/data) are complete, clean, and shown on the site.

The notebooks in docs/gpu-runs/data were executed on a GPU box by
tools/gpu_notebooks.py; the site's CPU-only build reads them (the GPU runs
page, and conf/gpu_runs.py's note on each page whose notebook ran there).
"""

import json
import re

import pytest

STAMP_KEYS = {"device", "driver", "cuda", "torch", "apache_tvm_ffi", "commit", "date", "seconds", "error"}


@pytest.fixture(scope="module")
def data(root):
    return root / "docs" / "gpu-runs" / "data"


@pytest.fixture(scope="module")
def runs(data):
    found = {p.stem: json.loads(p.read_text()) for p in sorted(data.glob("*.ipynb"))}
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
