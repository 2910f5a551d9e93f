"""A built page carries one note on how its code was checked and a label only under the blocks whose
report row says they were not run (docs/_ext/snippet_labels.py).

A fixture site (tests/tooling/snippets_fixture, its good page) is built, checked by the snippet
checker, and built again as the Makefile does: the labels appear in the second pass, one
per report row, in the page's order; before the checker ran there is none, and a report
older than the page gives none. On the built site (`make docs`), every page's labels
equal the labels of its report rows, and no CUDA block that was only compiled reads as
if it ran.
"""

from __future__ import annotations

import html
import json
import os
import pickle
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from docutils import nodes

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "tooling" / "snippets_fixture"
BUILD = Path(os.environ.get("FFI_COOKBOOK_BUILD_DIR") or ROOT / "_build")
LABEL = re.compile(r'<p class="snippet-label snippet-label-([\w-]+)">(.*?)</p>', re.S)

sys.path.insert(0, str(ROOT / "docs" / "_ext"))
try:
    import gpu_runs
    import snippet_labels
finally:
    sys.path.remove(str(ROOT / "docs" / "_ext"))


def labels_in(page: Path) -> list[tuple[str, str]]:
    """(how, text) of every label on a built page, in page order."""
    return [(how, html.unescape(text)) for how, text in LABEL.findall(page.read_text())]


def block_texts(page: str) -> list[str]:
    """The text of each code block of a built page, in the order the report's ``index`` counts."""
    from tools.snippets.collect import page_blocks

    doctree = pickle.loads((BUILD / "doctrees" / f"{page}.doctree").read_bytes())
    return [node.astext() for node in page_blocks(doctree)]


def gpu_records() -> dict[str, tuple[dict, set[str]]]:
    """notebook name -> (stamp, names its stored GPU run called without an error)."""
    return {name: (nb["metadata"]["ffi_cookbook_gpu_run"], gpu_runs.ran_exports(nb))
            for name, nb in gpu_runs.stored_runs().items()}


def row_labels(report: dict, page: str) -> list[tuple[dict, str | None]]:
    """(row, its label) for every report row of a built page, the CUDA ones from the stored GPU run."""
    rows = sorted(report["pages"].get(page, []), key=lambda r: r["index"])
    texts = block_texts(page) if any(snippet_labels.is_cuda(r) for r in rows) else []
    record = gpu_records().get(gpu_runs.notebook_name(page))
    return [(r, snippet_labels.label(r, snippet_labels.gpu_run_of(r, texts[r["index"]] if texts else "", record)))
            for r in rows]


def expected_labels(report: dict, page: str) -> list[tuple[str, str]]:
    return [(r["how"], text) for r, text in row_labels(report, page) if text]


# -- the labels, from a row alone ----------------------------------------------------------------

def row(**fields) -> dict:
    return {"kind": "inline", "status": "verified", "detail": "", "verifier": "cpp", "tool": "", "file": "",
            "output_compared": False, **fields}


def test_compiled_cpp_names_the_compiler_and_the_headers():
    assert snippet_labels.label(row(how="compiled", tool="g++ 12.2")) == \
        "compiled with g++ 12.2 against the tvm_ffi headers"


@pytest.mark.parametrize("fields", [
    {"verifier": "cuda", "tool": "nvcc 13.0"},  # an inline CUDA block
    {"kind": "include", "verifier": "cuda", "file": "cookbook/01-add-one/add_one_cuda.cu", "tool": "nvcc 13.0"},
    {"kind": "include", "verifier": "cuda", "file": "include/ffi_cookbook/launch.cuh", "tool": "nvcc 13.0"},
])
def test_compiled_cuda_says_where_it_ran_from_the_record(fields):
    not_run = snippet_labels.label(row(how="compiled", **fields))
    assert not_run.startswith("compiled with nvcc 13.0") and not_run.endswith(", not run")
    assert "ran" not in not_run.replace("not run", "")
    ran = snippet_labels.label(row(how="compiled", **fields), "NVIDIA H200 at commit 587c9e5")
    assert ran.startswith("compiled with nvcc 13.0") and ran.endswith("; ran on NVIDIA H200 at commit 587c9e5")


def test_a_cuda_block_ran_where_the_stored_run_called_its_export():
    stamp = {"device": "NVIDIA H200", "commit": "587c9e5"}
    cuda = row(how="compiled", verifier="cuda", tool="nvcc 13.0")
    block = "TVM_FFI_DLL_EXPORT_TYPED_FUNC" + "(twice_cuda, TwiceCUDA);"  # split: not an export of this file
    assert snippet_labels.gpu_run_of(cuda, block, (stamp, {"twice_cuda", "torch"})) == "NVIDIA H200 at commit 587c9e5"
    assert snippet_labels.gpu_run_of(cuda, block, (stamp, {"add_one_cuda"})) is None  # called, but not this one
    assert snippet_labels.gpu_run_of(cuda, block, None) is None  # no stored run
    assert snippet_labels.gpu_run_of(row(how="compiled", tool="g++ 12.2"), block, (stamp, {"twice_cuda"})) is None
    # a block with no export of its own: what it defines, else every export of the file it is shown from
    shown = row(how="compiled", kind="include", verifier="cuda", file="docs/guides/code/guide_cuda.cu")
    entry = "void TwiceCUDA(ffi::TensorView x, ffi::TensorView y) {"
    assert snippet_labels.gpu_run_of(shown, entry, (stamp, {"guide_twice_cuda"}))
    assert snippet_labels.gpu_run_of(shown, entry, (stamp, {"guide_fill_cuda"})) is None
    assert snippet_labels.gpu_run_of(shown, "__global__ void K() {}", (stamp, {"guide_fill_cuda"}))


def test_a_stored_run_counts_only_cells_that_ran_without_an_error():
    def cell(source, outputs=(), count=1):
        return {"cell_type": "code", "source": source, "execution_count": count, "outputs": list(outputs)}

    nb = {"cells": [cell("mod.ok_cuda(x)"), cell("mod.bad_cuda(x)", [{"output_type": "error", "ename": "E",
                                                                        "evalue": "", "traceback": []}]),
                    cell("mod.never_cuda(x)", count=None)]}
    called = gpu_runs.ran_exports(nb)
    assert "ok_cuda" in called and "bad_cuda" not in called and "never_cuda" not in called


def test_blocks_that_ran_get_no_label_and_the_rest_their_own_words():
    words = {how: snippet_labels.label(row(how=how, detail="same commands as .ci/run", tool="x 1.0"))
             for how in ("executed", "compiled", "compiled-and-ran", "configured", "built", "tested", "linked", "ran")}
    # What ran is said once per page (page_note), not under every block.
    for how in ("executed", "compiled-and-ran", "ran", "linked", "built"):
        assert words[how] is None, (how, words[how])
    assert words["compiled"] == "compiled with x 1.0 against the tvm_ffi headers"
    assert words["configured"] == "configured with x 1.0, not built"
    assert words["tested"] == "a test: it passes under pytest"
    assert snippet_labels.label(row(how="tested", detail="imported by test_overhead.py, a test module pytest runs")) == "runs in the recipe's tests (test_overhead.py)"
    # A file of the page's own build runs there: no label, unless it is CUDA that was only compiled.
    assert snippet_labels.label(row(how="compiled", kind="include", tool="g++ 12.2", verifier="cpp")) is None
    assert snippet_labels.label(row(how="pseudo", status="exempt", detail="pseudo-code: a shape")) == \
        "pseudo-code: a shape"
    assert snippet_labels.label(row(how="something new")) is None  # never a guessed label


def test_page_note_says_once_what_ran():
    rows = [row(how="executed"), row(how="executed"), row(how="compiled", kind="include"), row(how="linked"),
            row(how="pseudo")]
    assert snippet_labels.page_note(rows) == (
        "How this page's code was checked: 2 code cells ran when the site was built; "
        "1 file shown compiled by that build; 1 command block run as shown by CI or a test; "
        "1 block of pseudo-code, marked.")
    assert snippet_labels.page_note([]) is None


def test_a_shown_file_is_never_said_to_have_run():
    from tools.snippets.collect import Block
    from tools.snippets.report import how

    def shown(name: str, language: str, verifier: str) -> str:
        block = Block(page="p", source=Path("p.md"), line=1, language=language, kind="include", text="",
                      include=Path(name), status="verified", verifier=verifier)
        return how(block)

    assert shown("test_add_one.py", "python", "python") == "tested"  # a test module: run by pytest, not here
    assert shown("add_one_cuda.cu", "cuda", "cuda") == "compiled"
    assert shown("CMakeLists.txt", "cmake", "cmake") == "configured"
    assert shown("pyproject.toml", "toml", "") == "built"


# -- the fixture site, built as `make docs` builds: site, checker, site again -------------------

@pytest.fixture(scope="module")
def fixture_site(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("labels")
    site = tmp / "site"
    shutil.copytree(FIXTURE, site)
    shutil.rmtree(site / "docs" / "code")
    for page in (site / "docs").glob("bad_*.md"):
        page.unlink()
    (site / "docs" / "index.md").write_text("# Fixture\n\n```{toctree}\ngood\nreport\n```\n")
    (site / "docs" / "report.md").write_text("# Report\n\n```{snippet-report}\n```\n")
    with (site / "docs" / "conf.py").open("a") as conf:
        conf.write(f"\nsys.path.insert(0, {str(ROOT / 'docs' / '_ext')!r})\nextensions.append('snippet_labels')\n"
                   f"snippets_report = {str(tmp / 'snippets' / 'report.json')!r}\n")

    def sphinx():
        subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-q", "-n", "-W", str(site / "docs"),
                        str(tmp / "html"), "-d", str(tmp / "doctrees")], check=True, capture_output=True,
                       text=True, cwd=ROOT)

    sphinx()
    before = labels_in(tmp / "html" / "good.html")
    subprocess.run([sys.executable, "-m", "tools.snippets", "--root", str(site), "--doctrees", str(tmp / "doctrees"),
                    "--out", str(tmp / "snippets")], check=True, capture_output=True, text=True, cwd=ROOT)
    sphinx()
    return tmp, before, json.loads((tmp / "snippets" / "report.json").read_text())


def test_no_label_before_the_checker_ran(fixture_site):
    _, before, _ = fixture_site
    assert before == []


def test_second_pass_labels_every_block_of_the_report(fixture_site):
    tmp, _, report = fixture_site
    shown = labels_in(tmp / "html" / "good.html")
    assert shown == expected_labels(report, "good")
    rows = report["pages"]["good"]
    assert len(rows) == 8 and 0 < len(shown) < len(rows)  # the cells and blocks that ran have no label
    assert not [text for _, text in shown if "ran when the site was built" in text]
    assert any(how == "compiled" and re.fullmatch(r"compiled with g\+\+ [\d.]+ against the tvm_ffi headers", text)
               for how, text in shown), shown
    assert ("pseudo", "pseudo-code: shows the shape of a loop, not real code") in shown


def test_label_sits_under_its_block(fixture_site):
    tmp, _, _ = fixture_site
    text = (tmp / "html" / "good.html").read_text()
    assert "snippet-label-executed" not in text
    # the page's one note, at its end, links to the checks page
    assert text.count('class="snippet-page-note"') == 1
    note = text.split('class="snippet-page-note"', 1)[1].split("</p>", 1)[0]
    assert "How this page&#8217;s code was checked:" in note or "How this page's code was checked:" in note
    assert 'href="checks.html"' in note


def test_a_report_older_than_the_page_gives_no_label(fixture_site, tmp_path):
    tmp, _, report = fixture_site
    stale = json.loads(json.dumps(report))
    for r in stale["pages"]["good"]:
        r["page_line"] = (r["page_line"] or 0) + 1  # the page moved on since the check
    tree = pickle.loads((tmp / "doctrees" / "good.doctree").read_bytes())

    class App:
        class config:
            snippets_report = str(tmp_path / "stale.json")
    (tmp_path / "stale.json").write_text(json.dumps(stale))
    snippet_labels.add_labels(App, tree, "good")
    assert not [p for p in tree.findall(nodes.paragraph) if "snippet-label" in p.get("classes", [])]
    App.config.snippets_report = str(tmp_path / "fresh.json")
    (tmp_path / "fresh.json").write_text(json.dumps(report))
    snippet_labels.add_labels(App, tree, "good")
    assert len([p for p in tree.findall(nodes.paragraph) if "snippet-label" in p.get("classes", [])]) == \
        len(expected_labels(report, "good"))


def test_report_page_is_a_summary_with_the_table_folded(fixture_site):
    tmp, _, report = fixture_site
    text = (tmp / "html" / "report.html").read_text()
    assert report["summary"] in text
    summary, folded = text.split("<details", 1)
    assert "By kind of block" in summary and "By page" in summary
    assert 'href="good.html"' in summary  # the page is linked from its row
    assert "compiled (cpp, batch of 2)" not in summary and "compiled (cpp, batch of 2)" in folded.split("</details>")[0]


# -- the built site ---------------------------------------------------------------------------

def site_report() -> dict:
    path = BUILD / "snippets" / "report.json"
    if not path.is_file() or not (BUILD / "html" / "index.html").is_file():
        pytest.skip(f"the site is not built and checked (make docs): no {path}")
    report = json.loads(path.read_text())
    if "index" not in next(iter(next(iter(report["pages"].values()))), {}):
        pytest.skip("the snippet report predates the labels (make docs again)")
    return report


def test_every_built_page_carries_the_labels_of_its_report_rows():
    report = site_report()
    checked = 0
    for page in report["pages"]:
        built = BUILD / "html" / f"{page}.html"
        assert built.is_file(), page
        assert labels_in(built) == expected_labels(report, page), page
        checked += 1
    assert checked >= 20


def test_built_files_shown_never_read_as_run():
    report = site_report()
    shown = [r for rows in report["pages"].values() for r in rows if r["kind"] == "include"]
    assert shown
    for r in shown:
        text = snippet_labels.label(r) or ""
        assert not re.search(r"\bran\b", text), (r["where"], text)


def test_built_cuda_blocks_say_not_run_only_where_no_stored_run_ran_them():
    report = site_report()
    records = gpu_records()
    seen = {"ran": 0, "not run": 0}
    for page in report["pages"]:
        record = records.get(gpu_runs.notebook_name(page))
        for r, text in row_labels(report, page):
            if r["how"] != "compiled" or not snippet_labels.is_cuda(r):
                continue
            assert text.startswith("compiled with nvcc"), (r["where"], text)
            if "not run" in text:
                seen["not run"] += 1
                # nothing the block stands for was called by the page's stored GPU run
                exports = gpu_runs.exports_shown(block_texts(page)[r["index"]],
                                                 (ROOT / r["file"]).read_text() if r["file"] else "")
                assert not (record and exports & record[1]), (r["where"], "a stored run called it", text)
            else:
                seen["ran"] += 1
                assert record and f"ran on {record[0]['device']} at commit {record[0]['commit']}" in text
    assert seen["ran"] and seen["not run"], seen


def test_built_site_has_no_label_under_a_cell_that_ran():
    report = site_report()
    for page in report["pages"]:
        text = (BUILD / "html" / f"{page}.html").read_text()
        assert "ran when the site was built" not in text.split('class="snippet-page-note"')[0], page
        assert not re.search(r"imported by \S+, run by the test suite", text), page
