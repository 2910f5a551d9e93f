"""Shared fixtures for the repository-level tests."""

import os
from pathlib import Path

import pytest

from tools.takeaway_venv import Venv, venv_at

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def takeaway_venv(tmp_path_factory) -> Venv:
    # Under make (a build folder named), the venv is kept in it and made again only when what it
    # is made from changes (inputs_key): a clean clone, as in CI, makes a fresh one, and the next
    # `make test` does not wait a minute for pip; the site build has usually made it already.
    # $FFI_COOKBOOK_TAKEAWAY_VENV names one to use as it is. Elsewhere, one per test session.
    build = os.environ.get("FFI_COOKBOOK_BUILD_DIR")
    if build:
        return venv_at(Path(build) / "takeaway-venv")
    # Under pytest-xdist the workers of one run share the parent of their temporary
    # folders: the first to get the lock makes the venv, the others wait and use it.
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    return venv_at(shared / "takeaway-venv")


#: Tests that each build and run a whole recipe in a fresh venv: minutes each, so one file of them
#: would be the last worker's alone.
SPREAD = {"test_zip_builds_and_passes_its_tests_alone"}


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
