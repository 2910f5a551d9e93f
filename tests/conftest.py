"""Shared fixtures for the repository-level tests."""

from pathlib import Path

import pytest

from tests.takeaway_venv import takeaway_venv  # noqa: F401  (one fresh venv for the take-away tests)

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT
