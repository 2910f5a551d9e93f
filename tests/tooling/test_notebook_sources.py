"""A notebook is re-executed when a source beside it changes, not when its build output does."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "docs" / "_ext"))
from notebook_sources import folder_digest, kernel_settings_digest  # noqa: E402
from parallel_notebooks import plain_tracebacks  # noqa: E402


def test_digest_follows_sources_and_ignores_build_output(tmp_path):
    (tmp_path / "kernel_cpu.cc").write_text("int f() { return 1; }\n")
    (tmp_path / "build").mkdir()
    before = folder_digest(tmp_path)
    (tmp_path / "build" / "generated.cc").write_text("// written by a build\n")
    (tmp_path / "notes.md").write_text("not a source\n")
    assert folder_digest(tmp_path) == before
    (tmp_path / "kernel_cpu.cc").write_text("int f() { return 2; }\n")
    assert folder_digest(tmp_path) != before


def test_kernel_settings_are_part_of_the_digest(tmp_path, monkeypatch):
    # A cached page executed under other kernel settings (the traceback mode) runs again.
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))  # restored after the test
    assert kernel_settings_digest() == ""  # no profile yet
    plain_tracebacks(tmp_path)  # writes the build's profile and sets IPYTHONDIR
    plain = kernel_settings_digest()
    assert plain
    config = tmp_path / "ipython" / "profile_default" / "ipython_kernel_config.py"
    config.write_text('c.InteractiveShell.xmode = "Context"\n')
    assert kernel_settings_digest() not in ("", plain)


def test_a_recipe_page_takes_the_outputs_of_the_same_code_only():
    import nbformat
    import pytest

    from parallel_notebooks import take_outputs

    def notebook(*sources):
        return nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# title")]
                                        + [nbformat.v4.new_code_cell(s) for s in sources])

    page, ran = notebook("a = 1", "print(a)"), notebook("a = 1", "print(a)")
    ran.cells[2].outputs = [nbformat.v4.new_output("stream", name="stdout", text="1\n")]
    ran.cells[2].execution_count = 2
    take_outputs(page, ran)
    assert page.cells[2].outputs[0]["text"] == "1\n" and page.cells[2].execution_count == 2
    with pytest.raises(ValueError, match="not the page's"):  # an import rewritten, say
        take_outputs(notebook("a = 1", "print(a)"), notebook("a = 2", "print(a)"))


def test_a_recipe_page_runs_again_when_its_zip_changes_or_was_not_run(tmp_path):
    from notebook_sources import takeaway_digests

    root = Path(__file__).resolve().parents[2]
    notebooks = [root / "docs" / "cookbook" / "01-add-one" / "notebook.md", root / "docs" / "get-started.md"]
    digests, unrecorded = takeaway_digests(notebooks, root / "docs", tmp_path)  # no record in an empty build folder
    assert set(digests) == set(unrecorded) == {notebooks[0]}  # a guide page has no zip
