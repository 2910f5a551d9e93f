"""The site built by `make docs` has no warnings and shows executed notebooks.

`make docs` builds the site (Sphinx with -W --keep-going -n, every notebook executed by
docs/_ext/parallel_notebooks.py) and then runs these tests on what that build left behind.
"""

import html as html_lib
import os
import re
from pathlib import Path

import pytest

BUILD = os.environ.get("FFI_COOKBOOK_BUILD_DIR") or "_build"  # make's $(BUILD), as an absolute path


@pytest.fixture(scope="module")
def html(root):
    out = root / BUILD / "html"
    if not (out / "index.html").is_file():
        pytest.fail("the site is not built: run `make docs` (its last step runs these tests)")
    return out


def page_text(path):
    """The visible text of a built page: tags dropped, entities decoded."""
    return html_lib.unescape(re.sub(r"<[^>]+>", "", path.read_text()))


def test_build_has_zero_warnings(root, html):
    log = root / BUILD / "warnings.log"
    assert log.is_file()
    assert log.read_text() == ""


def test_every_recipe_notebook_is_rendered_with_outputs(root, html):
    recipes = sorted(p.parent.name for p in (root / "cookbook").glob("*/notebook.md"))
    assert recipes, "no recipe notebooks found"
    for name in recipes:
        page = (html / "cookbook" / name / "notebook.html").read_text()
        assert "cell_output" in page, f"{name}: notebook page has no executed output"


def test_add_one_page_shows_executed_results(html):
    page = page_text(html / "cookbook" / "01-add-one" / "notebook.html")
    assert "['libadd_one.so']" in page  # the build cell's output: the library it left in build/
    assert "TypeError: argument 'x': expected dtype float32 or float64" in page


def test_api_page_renders_helpers(html):
    page = (html / "api" / "index.html").read_text()
    for name in ["CheckDevice", "CheckSameShape", "DispatchFloat", "EmptyLike", "CPUAllocator",
                 "CUDAAllocator", "NVSHMEMAllocator", "CurrentStream", "BlocksFor"]:
        assert re.search(rf"\b{name}\b", page), name


def test_every_notebook_page_executed_successfully(root, html):
    """myst-nb's own record for the build: each notebook page ran, and without error."""
    import pickle

    env = pickle.loads((root / BUILD / "doctrees" / "environment.pickle").read_bytes())
    records = {doc: meta.get("exec_data") for doc, meta in env.nb_metadata.items()}
    notebooks = {f"cookbook/{p.parent.name}/notebook" for p in (root / "cookbook").glob("*/notebook.md")}
    assert notebooks <= set(records), sorted(notebooks - set(records))
    assert all(records[doc] for doc in notebooks), sorted(doc for doc in notebooks if not records[doc])
    # A page that is not a notebook (the execution statistics page) has a record without exec_data.
    failed = {doc: data.get("error") for doc, data in records.items() if data and not data.get("succeeded")}
    assert not failed, failed


def test_first_recipe_notebook_executes_outside_sphinx(root, capsys):
    """The notebook runner by hand (tools/execute_notebook.py) runs recipe 01's page in its
    folder, as the site build does."""
    from tools import execute_notebook

    assert execute_notebook.main([str(root / "cookbook" / "01-add-one" / "notebook.md")]) == 0
    assert "notebook.md: executed in" in capsys.readouterr().out


# -- the way in: home, Get started, the cookbook index, the checks page -------------------------

def test_home_shows_the_kernel_its_build_and_its_printed_output(html):
    page = page_text(html / "index.html")
    assert "TVM_FFI_DLL_EXPORT_TYPED_FUNC(add_one, AddOne);" in page
    assert "tvm-ffi-config --cxxflags --ldflags --libs" in page
    assert "tensor([1., 2., 3., 4.])" in page  # printed by the executed cell
    for step in ("Get started", "Add one", "Learn in this order"):
        assert step in page, step
    assert 'href="checks.html"' in (html / "index.html").read_text()


def test_get_started_shows_its_run_from_pypi_alone(html):
    page = page_text(html / "get-started.html")
    for line in ("torch: tensor([1., 2., 3., 4.])", "numpy: [1. 2. 3. 4.]", "ValueError: y: length 3, expected 4",
                 "TypeError: x: expected a contiguous 1-D float32 CPU tensor", "pip install apache-tvm-ffi numpy torch==2.13.0"):
        assert line in page, line
    # The cookbook's own package comes after the first kernel, not before.
    assert page.index("python run.py") < page.index("ffi_cookbook.load()")


def test_checks_pages_are_outside_the_main_navigation(html):
    home = (html / "index.html").read_text()
    nav = re.search(r'<nav class="[^"]*\bbd-docs-nav\b.*?</nav>', home, re.S)
    assert nav, "no site navigation on the home page"
    for page in ("snippets.html", "execution-statistics.html", "checks.html"):
        assert page not in nav.group(0), f"{page} is in the main navigation"
    checks = (html / "checks.html").read_text()
    assert 'href="snippets.html"' in checks and 'href="execution-statistics.html"' in checks
    assert 'href="gpu-runs/index.html"' in nav.group(0)  # the GPU runs stay reachable


def test_cookbook_index_groups_recipes_by_level(root, html):
    page = (html / "cookbook" / "index.html").read_text()
    levels = ["Basics", "Frameworks and callers", "Performance", "Shipping", "GPU in depth"]
    assert re.findall(r"<h3>([^<]+)", page) == levels
    cards = re.findall(r'<div class="sd-card-footer[^"]*">(.*?)</div>', page, re.S)
    assert len(cards) == len(list((root / "cookbook").glob("*/notebook.md")))
    for card in cards:
        badges = re.findall(r'sd-badge[^>]*>([^<]+)<', card)
        assert len(badges) == 2 and badges[0] in levels and badges[1] in {"CPU", "CUDA GPU", "NVSHMEM, several GPUs"}, badges


def test_site_report_has_nothing_unverified(root):
    """The snippet checker's report (make snippets) is on its page and found nothing unverified."""
    import json

    site = Path(os.environ.get("FFI_COOKBOOK_BUILD_DIR") or root / "_build")  # make's $(BUILD)
    report = json.loads((site / "snippets" / "report.json").read_text())
    assert report["summary"].endswith(" 0 unverified, " + str(len(report["exempt"])) + " exempt")
    page = (site / "html" / "snippets.html").read_text()
    assert report["summary"] in page


def test_the_site_offers_the_whole_cookbook_as_one_archive(root, tmp_path):
    """downloads/ffi-cookbook.tar.gz holds the repository's files (what git lists), links as links,
    and the README's commands find a Makefile they can run there (make's dry run)."""
    import io
    import subprocess
    import tarfile

    from tools import takeaway

    archive = Path(BUILD).resolve() / "html" / "downloads" / "ffi-cookbook.tar.gz"
    data = archive.read_bytes()
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        members = {m.name.removeprefix("ffi-cookbook/"): m for m in tar.getmembers()}
        assert sorted(members) == takeaway.source_names(root)
        links = {name for name, m in members.items() if m.issym()}
        assert "cookbook/05-dtype-dispatch/include" in links  # the recipes' link to the headers
        assert members[".ci/run"].mode & 0o111  # the CI entry point stays executable
        tar.extractall(tmp_path, filter="tar")
    unpacked = tmp_path / "ffi-cookbook"
    assert (unpacked / "cookbook" / "05-dtype-dispatch" / "include" / "ffi_cookbook" / "check.h").is_file()
    assert takeaway.source_archive(unpacked) == data  # the unpacked files give the same archive
    for target in ("test", "docs"):
        done = subprocess.run(["make", "-n", target], cwd=unpacked, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[-2000:]
    for page in ("get-started.html", "index.html"):
        assert 'download href="downloads/ffi-cookbook.tar.gz"' in (Path(BUILD) / "html" / page).read_text(), page
