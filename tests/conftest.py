"""Shared fixtures for the repository-level tests."""

from pathlib import Path

import pytest

from tests.takeaway_venv import takeaway_venv  # noqa: F401  (one fresh venv for the take-away tests)

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


#: Tests that each build and run a whole recipe in a fresh venv: minutes each, so one file of them
#: would be the last worker's alone.
SPREAD = {"test_zip_builds_passes_and_runs_its_notebook_alone"}


# tryfirst: pytest-xdist's worker plug-in registers after this conftest, so its hook (which
# reads the marks into the test ids) would otherwise run first and find none.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """`make test` runs pytest-xdist with ``--dist loadgroup``: a test file is one group, so its
    module fixtures (a recipe build) run once, on one worker; each test in SPREAD is a group of
    its own, so both workers share the take-away builds."""
    for item in items:
        if item.get_closest_marker("xdist_group"):
            continue
        group = item.nodeid.split("::")[0]
        if getattr(item, "originalname", None) in SPREAD:
            group = item.nodeid
        item.add_marker(pytest.mark.xdist_group(group))
