"""The take-away venv's key (tools/takeaway_venv.py): what it is made from, not which recipe asks."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tools import takeaway_venv

ROOT = Path(__file__).resolve().parents[2]


def test_a_new_recipe_asking_for_nothing_new_keeps_the_venv(tmp_path, monkeypatch):
    """Adding a recipe whose requirements.txt names what others name already (a copy of the
    template's) keeps the venv and every recipe's run in it; a new requirement makes it again."""
    for path in ROOT.glob("cookbook/*/requirements.txt"):
        (tmp_path / "cookbook" / path.parent.name).mkdir(parents=True)
        shutil.copy(path, tmp_path / "cookbook" / path.parent.name / path.name)
    monkeypatch.setattr(takeaway_venv, "ROOT", tmp_path)
    monkeypatch.setattr(takeaway_venv, "project_pins", lambda: "pins")
    before = takeaway_venv.inputs_key()
    (tmp_path / "cookbook" / "26-new").mkdir()
    template = (tmp_path / "cookbook" / "05-dtype-dispatch" / "requirements.txt").read_text()
    (tmp_path / "cookbook" / "26-new" / "requirements.txt").write_text("# another comment\n" + template)
    assert takeaway_venv.inputs_key() == before
    (tmp_path / "cookbook" / "26-new" / "requirements.txt").write_text(template + "scipy>=1.10\n")
    assert takeaway_venv.inputs_key() != before
    assert "scipy>=1.10" in takeaway_venv.requirement_lines()
    assert any(spec.startswith("nvidia-nvshmem-cu") for spec in takeaway_venv.nvidia_extras())  # a comment line


def test_an_nvidia_wheel_pinned_twice_differently_is_an_error(tmp_path, monkeypatch):
    for name, pin in (("01-a", "3.8.0"), ("02-b", "3.9.0")):
        (tmp_path / "cookbook" / name).mkdir(parents=True)
        (tmp_path / "cookbook" / name / "requirements.txt").write_text(f"# with nvcc: nvidia-nvshmem-cu13=={pin}\n")
    monkeypatch.setattr(takeaway_venv, "ROOT", tmp_path)
    with pytest.raises(ValueError, match="nvidia-nvshmem-cu13==3.8.0"):
        takeaway_venv.nvidia_extras()
