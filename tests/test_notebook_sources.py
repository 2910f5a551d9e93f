"""A notebook is re-executed when a source beside it changes, not when its build output does."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "conf"))
from notebook_sources import folder_digest  # noqa: E402


def test_digest_follows_sources_and_ignores_build_output(tmp_path):
    (tmp_path / "kernel_cpu.cc").write_text("int f() { return 1; }\n")
    (tmp_path / "build").mkdir()
    before = folder_digest(tmp_path)
    (tmp_path / "build" / "generated.cc").write_text("// written by a build\n")
    (tmp_path / "notes.md").write_text("not a source\n")
    assert folder_digest(tmp_path) == before
    (tmp_path / "kernel_cpu.cc").write_text("int f() { return 2; }\n")
    assert folder_digest(tmp_path) != before
