"""Tracebacks on the built pages show frames, not IPython's filler for frames without source.

docs/_ext/parallel_notebooks.py starts the build's kernels with IPython's Plain traceback mode; in the
default mode every compiled frame (tvm_ffi's call) printed "Could not get source, probably due
dynamically evaluated source code."
"""

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SITE = Path(os.environ.get("FFI_COOKBOOK_BUILD_DIR") or ROOT / "_build") / "html"


def test_no_page_prints_could_not_get_source():
    pages = sorted(SITE.rglob("*.html"))
    if not (SITE / "index.html").is_file():
        pytest.skip("no built site (run make docs)")
    bad = [p.relative_to(SITE).as_posix() for p in pages if "Could not get source" in p.read_text(errors="replace")]
    assert not bad, f"pages with IPython's 'Could not get source' lines: {bad}"


def test_a_page_still_shows_the_cpp_frame_and_message():
    page = SITE / "cookbook" / "04-validation-and-errors" / "notebook.html"
    if not page.is_file():
        pytest.skip("no built site (run make docs)")
    text = page.read_text(errors="replace")
    assert "Traceback" in text and "argument '" in text
