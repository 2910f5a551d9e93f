"""``pytest -p tests.one_recipe --recipe NAME tests/site tests/product``: one recipe's part of
``make test`` (``make recipe R=NAME`` runs it).

It keeps the tests that concern the recipe and deselects the rest:

- every test whose parameters name the recipe (the folder, its notebook or its page: the
  tests of its zip, CMake, requirements, prose, claims, provenance, GPU claims...);
- the tests in :data:`EVERY_PAGE`, which check every page or every recipe of the built site
  in one go and read what the site build left (seconds): a new page breaks them as surely
  as a parametrized one.

So no recipe is named here: a test parametrized by recipe is selected by its ids, and a
new check of every page joins by its name below (tests/tooling/test_one_recipe.py fails
when a name here no longer exists). Left out, with what runs them: the browser crawl
(tests/site/test_browser.py, in ``make test``) and the fuzz of every library (``make recipe``
fuzzes the recipe's own libraries with ``python -m tests.fuzz``).
"""

from __future__ import annotations

import re

import pytest

#: Tests that check every page or recipe at once, from the built site, in seconds.
EVERY_PAGE = {
    "tests/site/test_site.py::test_build_has_zero_warnings",
    "tests/site/test_site.py::test_every_recipe_notebook_is_rendered_with_outputs",
    "tests/site/test_site.py::test_every_notebook_page_executed_successfully",
    "tests/site/test_site.py::test_cookbook_index_groups_recipes_by_level",
    "tests/site/test_gallery.py::test_gallery_has_a_card_for_every_recipe_folder",
    "tests/site/test_gallery.py::test_gallery_badges_follow_the_sources",
    "tests/site/test_gallery.py::test_built_gallery_lists_every_recipe",
    "tests/site/test_gallery.py::test_execution_statistics_give_every_notebook_a_run_time",
    "tests/site/test_gpu_runs.py::test_every_run_belongs_to_a_notebook_of_the_site",
    "tests/site/test_gpu_runs.py::test_every_notebook_that_stopped_on_the_gpu_is_explained_on_the_page",
    "tests/site/test_gpu_runs.py::test_pages_that_ran_on_a_gpu_say_so",
    "tests/site/test_gpu_runs.py::test_every_gpu_result_claimed_in_prose_is_checked_by_a_gpu_cell",
    "tests/site/test_snippet_labels.py::test_every_built_page_carries_the_labels_of_its_report_rows",
    "tests/site/test_snippet_labels.py::test_built_files_shown_never_read_as_run",
    "tests/site/test_snippet_labels.py::test_built_cuda_blocks_say_not_run_only_where_no_stored_run_ran_them",
    "tests/site/test_snippet_labels.py::test_built_site_has_no_label_under_a_cell_that_ran",
    "tests/site/test_tracebacks.py::test_no_page_prints_could_not_get_source",
    "tests/site/test_links_out.py::test_pages_use_python_roles",
    "tests/site/test_links_out.py::test_every_python_role_target_is_in_an_inventory",
    "tests/site/test_links_out.py::test_downloaded_notebooks_keep_python_names_as_code",
    "tests/site/test_api_links.py::test_built_pages_link_into_the_api_page",
    "tests/product/test_recipe_zips.py::test_site_offers_every_download",
    "tests/product/test_recipe_cmake.py::test_cuda_architectures_have_one_default",
    "tests/product/test_standalone.py::test_no_generated_files_in_recipe_or_code_folders",
    "tests/product/test_runtime.py::test_recipe_kernels_are_in_the_library",
}


def pytest_addoption(parser):
    parser.addoption("--recipe", help="keep only the tests that concern this recipe (its folder name)")


def concerns(item, name: str) -> bool:
    """Whether ``item`` is one of recipe ``name``'s tests (see the module's docstring)."""
    base = item.nodeid.split("[", 1)[0]
    if base in EVERY_PAGE:
        return True
    callspec = getattr(item, "callspec", None)
    if callspec is None:
        return False
    whole = re.compile(rf"(?<![\w-]){re.escape(name)}(?![\w-])")  # 05-x, not 05-x-y
    return any(whole.search(str(said)) for said in [callspec.id, *callspec.params.values()])


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    name = config.getoption("recipe")
    if not name:
        return
    kept = [item for item in items if concerns(item, name)]
    config.hook.pytest_deselected(items=[item for item in items if item not in kept])
    items[:] = kept
    if not any(item.nodeid.split("[", 1)[0] not in EVERY_PAGE for item in kept):
        raise pytest.UsageError(f"--recipe {name}: no test is parametrized by it (a folder name, e.g. 05-dtype-dispatch)")
