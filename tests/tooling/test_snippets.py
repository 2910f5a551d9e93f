"""The snippet checker catches each failure mode and names the page and line: a fixture site
(tests/tooling/snippets_fixture) holds one page of blocks that verify and one page per failure."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tools.snippets.markers import regions

FIXTURE = Path(__file__).resolve().parent / "snippets_fixture"
ROOT = FIXTURE.parents[2]


def build_and_check(tmp: Path, clean: bool = False) -> tuple[subprocess.CompletedProcess, dict]:
    """Copy the fixture (only its good page when `clean`), build it, run the checker (cache under `tmp`)."""
    site = tmp / "site"
    shutil.copytree(FIXTURE, site)
    if clean:
        shutil.rmtree(site / "docs" / "code")
        for page in (site / "docs").glob("bad_*.md"):
            page.unlink()
        (site / "docs" / "index.md").write_text("# Fixture\n\n```{toctree}\ngood\n```\n")
    subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-q", str(site / "docs"),
                    str(tmp / "html"), "-d", str(tmp / "doctrees")],
                   check=True, capture_output=True, text=True)
    return check(tmp)


def check(tmp: Path) -> tuple[subprocess.CompletedProcess, dict]:
    done = subprocess.run([sys.executable, "-m", "tools.snippets", "--root", str(tmp / "site"), "--doctrees",
                           str(tmp / "doctrees"), "--out", str(tmp / "snippets")],
                          capture_output=True, text=True, cwd=ROOT)
    return done, json.loads((tmp / "snippets" / "report.json").read_text())


def first_line(path: Path, start: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if start in line)


@pytest.fixture(scope="module")
def checked(tmp_path_factory):
    return build_and_check(tmp_path_factory.mktemp("all"))


@pytest.mark.parametrize("page, message", [
    ("bad_compile.md", "does not compile: "),
    ("bad_raise.md", "raises: json.decoder.JSONDecodeError"),
    ("bad_output.md", "shown output differs"),
    ("bad_marker.md", "region 'absent_region' does not exist in code/regions.cc"),
])
def test_failure_names_page_and_line(checked, page, message):
    done, _ = checked
    assert done.returncode == 1
    where = f"docs/{page}:{first_line(FIXTURE / 'docs' / page, '```')}:"  # the block's first fence
    lines = [ln for ln in done.stdout.splitlines() if ln.strip().startswith(where)]
    assert lines, done.stdout
    assert message in lines[0]


def test_compile_error_is_the_compilers(checked):
    done, _ = checked
    assert "no match for ‘operator!=’" in done.stdout or "no match for 'operator!='" in done.stdout


def test_dangling_marker_names_file_and_line(checked):
    done, _ = checked
    line = first_line(FIXTURE / "docs" / "code" / "regions.cc", "[dangling_region.begin]")
    assert f"docs/code/regions.cc:{line}: '[dangling_region.begin]' has no matching '[dangling_region.end]'" in done.stdout


def test_summary_counts_every_failure(checked):
    done, report = checked
    assert done.stdout.strip().splitlines()[-1] == report["summary"] == "snippets: 7 verified, 5 unverified, 1 exempt"
    assert [e["detail"] for e in report["exempt"]] == ["pseudo-code: shows the shape of a loop, not real code"]


def test_good_page_verifies_by_language(checked):
    _, report = checked
    rows = {(r["language"], r["status"]) for r in report["pages"]["good"]}
    assert rows == {("cpp", "verified"), ("c", "verified"), ("python", "verified"),
                    ("pycon", "verified"), ("cmake", "verified"), ("bash", "verified"),
                    ("cpp", "exempt")}
    assert next(r for r in report["pages"]["good"] if r["language"] == "c")["detail"].startswith("compiled and ran")


def test_clean_site_passes_and_second_run_is_cached(tmp_path):
    done, _ = build_and_check(tmp_path / "one", clean=True)
    assert done.returncode == 0, done.stdout
    assert done.stdout.strip().endswith("snippets: 7 verified, 0 unverified, 1 exempt")
    # Same blocks, same cache folder: nothing is compiled or run again.
    again, report = check(tmp_path / "one")
    assert again.returncode == 0
    assert all("cached" in r["detail"] for r in report["pages"]["good"] if r["status"] == "verified")


@pytest.mark.parametrize("text, message", [
    ("// [a.begin]\n// [a.begin]\n// [a.end]\n", "duplicate marker '[a.begin]'"),
    ("// [a.end]\n", "'[a.end]' has no matching '[a.begin]'"),
    ("# [BadName.begin]\n# [BadName.end]\n", "marker name 'BadName' is not snake_case"),
])
def test_marker_lint(tmp_path, text, message):
    (tmp_path / "f.cc").write_text(text)
    assert message in [p.message for p in regions(tmp_path / "f.cc")[1]]


def test_a_recipe_runs_copy_counts_only_while_it_is_the_checkouts_file(tmp_path, monkeypatch):
    from tools.snippets.evidence import Evidence

    root, build = tmp_path / "checkout", tmp_path / "checkout" / "_build"
    source, helper = root / "cookbook" / "01-x" / "k_cpu.cc", root / "include" / "ffi_cookbook" / "h.h"
    copy = build / "recipe-runs" / "01-x" / "k_cpu.cc"
    helper_copy = build / "recipe-runs" / "01-x" / "include" / "ffi_cookbook" / "h.h"
    for path, text in ((source, "int f();\n"), (helper, "#pragma once\n"), (copy, "int f();\n"),
                       (helper_copy, "#pragma once\n")):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    monkeypatch.setenv("FFI_COOKBOOK_BUILD_DIR", str(build))
    evidence = Evidence(root)
    assert evidence._twin(copy) == source and evidence._twin(helper_copy) == helper
    assert evidence._twin(source) == source  # the checkout's own file is itself
    copy.write_text("int g();\n")  # the checkout changed since the run: not the same file any more
    assert Evidence(root)._twin(copy) == copy
