"""A notebook that measures time pauses before its first timed cell; a raises-exception cell must raise."""

from pathlib import Path

import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from tools.execute_notebook import MEASURES_TIME, Paused, execute, first_timed_cell


def timed_notebook(folder: Path):
    """Cell 1 writes a file; cell 2, timed, reads it; cell 3, timed too, prints."""
    return new_notebook(cells=[
        new_markdown_cell("A page."),
        new_code_cell(f"open({str(folder / 'first')!r}, 'w').write('ran')"),
        new_code_cell(f"print(open({str(folder / 'first')!r}).read())", metadata={"tags": [MEASURES_TIME]}),
        new_code_cell("print('last')", metadata={"tags": [MEASURES_TIME]}),
    ])


def test_first_timed_cell_is_a_tagged_code_cell(tmp_path):
    assert first_timed_cell(timed_notebook(tmp_path)) == 2
    assert first_timed_cell(new_notebook(cells=[new_code_cell("1")])) is None


def test_pause_comes_after_the_cells_before_and_before_the_timed_ones(tmp_path):
    notebook = timed_notebook(tmp_path)
    seen = []

    def pause():  # what has run when the pause comes
        seen.append(((tmp_path / "first").exists(), [c.get("outputs") for c in notebook.cells[2:]]))

    execute(notebook, tmp_path, timeout=60, pause=pause)
    assert seen == [(True, [[], []])]
    assert [o["text"] for c in notebook.cells[2:] for o in c.outputs] == ["ran\n", "last\n"]


def test_a_failure_before_the_pause_fails_without_pausing(tmp_path):
    import nbclient

    notebook = timed_notebook(tmp_path)
    notebook.cells[1].source = "raise ValueError('before the timed cells')"
    with pytest.raises(nbclient.exceptions.CellExecutionError, match="before the timed cells"):
        execute(notebook, tmp_path, timeout=60, pause=lambda: pytest.fail("paused"))


def test_a_paused_run_waits_at_the_pause_until_finish(tmp_path):
    """The class the site build and gpu-check share: start() returns at the pause, with the
    cells before it run and the timed ones not; finish() runs them and returns the result."""
    notebook = timed_notebook(tmp_path)
    run = Paused(lambda pause: execute(notebook, tmp_path, timeout=60, pause=pause))
    run.start()
    assert (tmp_path / "first").exists() and notebook.cells[2].get("outputs") == []
    assert run.finish() > 0
    assert [o["text"] for c in notebook.cells[2:] for o in c.outputs] == ["ran\n", "last\n"]


def test_a_paused_run_never_started_runs_whole_and_raises_what_its_work_raised():
    steps = []

    def work(pause):
        steps.append("before")
        pause()
        steps.append("after")
        raise ValueError("in the timed part")

    with pytest.raises(ValueError, match="in the timed part"):
        Paused(work).finish()
    assert steps == ["before", "after"]
    ended = Paused(lambda pause: "no timed cell")  # work that never pauses: start() returns at its end
    ended.start()
    assert ended.finish() == "no timed cell"


def test_a_cell_tagged_raises_exception_must_raise(tmp_path):
    import nbclient

    from tools.execute_notebook import RAISES

    raising = new_notebook(cells=[new_code_cell("raise ValueError('bad x')", metadata={"tags": [RAISES]}),
                                  new_code_cell("print('after')")])
    execute(raising, tmp_path, timeout=60)
    assert raising.cells[0].outputs[0]["ename"] == "ValueError"
    assert raising.cells[1].outputs[0]["text"] == "after\n"
    silent = new_notebook(cells=[new_code_cell("x = 1", metadata={"tags": [RAISES]}), new_code_cell("print('after')")])
    with pytest.raises(nbclient.exceptions.CellExecutionError, match="tagged raises-exception but raised nothing"):
        execute(silent, tmp_path, timeout=60)
    assert silent.cells[1].get("outputs") == []


def test_a_named_kernel_runs_with_its_environment(tmp_path, monkeypatch):
    """A recipe's notebook runs in the take-away venv's kernel (docs/_ext/parallel_notebooks.py):
    the kernel named, found on JUPYTER_PATH, started with the environment given."""
    import json
    import os
    import sys

    spec = tmp_path / "share" / "kernels" / "probe" / "kernel.json"
    spec.parent.mkdir(parents=True)
    spec.write_text(json.dumps({"argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                                "display_name": "probe", "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "share"))
    notebook = new_notebook(cells=[new_code_cell("import os; print(os.environ['PROBE'], os.getcwd())")])
    execute(notebook, tmp_path, timeout=60, kernel="probe", env={**os.environ, "PROBE": "from the caller"})
    assert notebook.cells[0].outputs[0]["text"] == f"from the caller {tmp_path}\n"


def test_a_recipe_page_runs_in_its_zip_s_folder_with_the_take_away_kernel(tmp_path, monkeypatch):
    from types import SimpleNamespace

    from sphinx.errors import ExtensionError

    from tools.takeaway_venv import KERNEL

    root = Path(__file__).resolve().parents[2]
    monkeypatch.syspath_prepend(str(root / "docs" / "_ext"))
    import parallel_notebooks
    monkeypatch.setenv("FFI_COOKBOOK_BUILD_DIR", str(tmp_path))
    app = SimpleNamespace(outdir=str(tmp_path / "html"))
    guide = root / "docs" / "guides" / "kernel-library.md"
    assert parallel_notebooks.where(app, guide) == (guide.parent, "python3", None)
    recipe = root / "cookbook" / "01-add-one" / "notebook.md"
    with pytest.raises(ExtensionError, match="01-add-one: its zip as it is now has not run"):
        parallel_notebooks.where(app, recipe)
    (tmp_path / "takeaway-venv" / "bin").mkdir(parents=True)
    (tmp_path / "takeaway-venv" / "bin" / "python").touch()
    run = tmp_path / "recipe-runs" / "01-add-one"
    monkeypatch.setattr("tools.recipe_runs.folder_of_run", lambda name, files, build, key: run)
    folder, kernel, env = parallel_notebooks.where(app, recipe)
    assert (folder, kernel) == (run, KERNEL)
    assert env["VIRTUAL_ENV"] == str(tmp_path / "takeaway-venv")
    assert env["JUPYTER_PATH"] == str(tmp_path / "takeaway-venv" / "share" / "jupyter")
    assert "PYTEST_ADDOPTS" not in env and "FFI_COOKBOOK_BUILD_DIR" not in env


def test_a_recipe_s_notebook_is_expected_to_take_as_long_as_its_readme(tmp_path, monkeypatch):
    import json

    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2] / "docs" / "_ext"))
    from parallel_notebooks import expected_seconds

    (tmp_path / "15-jit-kernels.json").write_text(json.dumps({"seconds": 74.4}))
    assert expected_seconds(tmp_path / "15-jit-kernels", 1) == 74.4
    assert expected_seconds(tmp_path / "guides", 3) == 30.0
