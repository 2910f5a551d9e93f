"""The ``takeaway_venv`` fixture: the fresh venv of tools/takeaway_venv.py, one per test run."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tools.takeaway_venv import Venv, venv_at


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
