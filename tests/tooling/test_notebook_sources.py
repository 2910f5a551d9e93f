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


def test_a_recipe_page_runs_again_when_a_helper_header_changes(tmp_path):
    """A recipe's include link is followed: a header it compiles is one of its sources."""
    (tmp_path / "headers" / "ffi_cookbook").mkdir(parents=True)
    header = tmp_path / "headers" / "ffi_cookbook" / "check.h"
    header.write_text("// one\n")
    recipe = tmp_path / "recipe"
    recipe.mkdir()
    (recipe / "include").symlink_to("../headers")
    before = folder_digest(recipe)
    header.write_text("// two\n")
    assert folder_digest(recipe) != before


def test_a_page_executed_by_the_workers_is_found_in_myst_nbs_cache(tmp_path):
    """myst-nb's cache hashes each code cell's metadata: a page executed by the build's workers
    (parallel_notebooks) must keep the metadata myst-nb reads, or myst-nb executes it again."""
    import nbformat
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn
    from parallel_notebooks import _execute_entry

    page = tmp_path / "page.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(6 * 7)")],
                                            metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                                     "language": "python"}}), page)
    executed = nbformat.read(page, as_version=4)
    *_, error, _ = _execute_entry(("page", str(page), executed, None, (tmp_path, "python3", None)), 60, False)
    assert error is None
    assert executed.cells[0].outputs[0]["text"] == "42\n"
    cache = get_cache(tmp_path / "cache")
    record = cache.add_nb_to_project(str(page))
    cache.cache_notebook_bundle(CacheBundleIn(executed, record.uri), check_validity=False, overwrite=True)
    cache.match_cache_notebook(nbformat.read(page, as_version=4))  # raises KeyError on a miss
