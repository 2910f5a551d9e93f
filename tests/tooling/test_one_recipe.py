"""`make recipe`'s test selection (tests/one_recipe.py): one recipe's tests, and the checks of every page."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.one_recipe import EVERY_PAGE

ROOT = Path(__file__).resolve().parents[2]


def collect(*args: str) -> list[str]:
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "--co", "-p", "tests.one_recipe", *args],
                          cwd=ROOT, capture_output=True, text=True)
    assert done.returncode in (0, 5), done.stdout[-3000:] + done.stderr[-3000:]
    return [line for line in done.stdout.splitlines() if "::" in line]


def test_every_page_names_tests_that_exist():
    files = sorted({name.split("::")[0] for name in EVERY_PAGE})
    found = {line.split("[")[0] for line in collect(*files)}
    assert not EVERY_PAGE - found, f"tests/one_recipe.py names tests that are gone: {sorted(EVERY_PAGE - found)}"


def test_one_recipe_keeps_its_own_tests_and_the_checks_of_every_page():
    kept = collect("--recipe", "05-dtype-dispatch", "tests/site", "tests/product")
    own = [line for line in kept if "[" in line]
    assert own and all("05-dtype-dispatch" in line for line in own), own
    assert {line.split("[")[0] for line in kept} - {line.split("[")[0] for line in own} <= EVERY_PAGE
    for test in ("test_recipe_zips.py::test_zip_builds_and_passes_its_tests_alone",
                 "test_page_prose.py::test_prose_tells_no_history", "test_zip_contents.py::test_no_path_outside_the_folder"):
        assert any(test in line for line in own), test
    assert not any("02-tensor-and-view" in line or "05-dtype-dispatch-" in line for line in kept)
