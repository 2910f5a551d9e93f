"""Sphinx configuration for the TVM FFI Kernel Cookbook.

Built by `make docs` as `sphinx-build -c conf docs _build/html -W --keep-going -n`.
The site's own extensions are in docs/_ext, beside the pages they build.
The build runs offline: intersphinx reads local inventories (conf/inventories,
docs/_ext/links_out.py) and there are no remote assets. Doxygen XML of
include/ffi_cookbook is produced by the Makefile before Sphinx runs.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILD = Path(os.environ.get("FFI_COOKBOOK_BUILD_DIR", ROOT / "_build"))
sys.path.insert(0, str(ROOT))  # for tools and python/ffi_cookbook's checkout imports
sys.path.insert(0, str(ROOT / "docs" / "_ext"))  # the site's own Sphinx extensions

import site_polish  # noqa: E402

project = "TVM FFI Kernel Cookbook"
author = "The TVM FFI Kernel Cookbook authors"
copyright = "2026, " + author

extensions = [
    "myst_nb",
    "breathe",
    "sphinx_copybutton",
    "sphinx_design",
    "snippet_blocks",  # {snippet} blocks and the snippet report page
    "snippet_labels",  # under each code block, how the snippet checker verified it (its report)
    "notebook_sources",  # re-execute a notebook when a source file beside it changes
    "parallel_notebooks",  # execute notebooks a few at a time before the pages are read
    "recipe_downloads",  # recipe zips and notebooks, page code zips (tools.takeaway)
    "gpu_runs",  # on each page whose notebook also ran on a GPU: a note and its GPU cells' output (docs/gpu-runs/data)
    "recipe_gallery",  # the cookbook index's cards, one per recipe folder
    "site_polish",  # footer: versions built with; unique ids; one contents line per overload
    "links_out",  # intersphinx to Python, NumPy, PyTorch, JAX from conf/inventories (offline)
]
# Written by `make snippets` (python -m tools.snippets); rendered by {snippet-report}.
snippets_report = str(BUILD / "snippets" / "report.json")

root_doc = "index"
exclude_patterns = [
    "_build",
    "**/build",
    "**/.ipynb_checkpoints",
    "_ext",  # the extensions below
    "cookbook/*/README.md",
    "cookbook/*/*.py",
    "gpu-runs/data",  # executed GPU notebooks: read by the GPU runs page, not pages themselves
]
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}

# -- MyST and notebooks -----------------------------------------------------
myst_enable_extensions = ["colon_fence", "deflist", "dollarmath"]
myst_heading_anchors = 3
# parallel_notebooks executes every notebook and puts it in this cache; myst-nb only reads it
# (a notebook that fails stops the build before myst-nb would execute it itself).
nb_execution_mode = "cache"
nb_execution_cache_path = str(BUILD / ".jupyter_cache")
nb_execution_in_temp = False  # recipes build the sources that sit next to them
nb_execution_timeout = 900
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_merge_streams = True

# -- C++ API reference through breathe ---------------------------------------
breathe_projects = {"ffi_cookbook": str(BUILD / "doxygen" / "xml")}
breathe_default_project = "ffi_cookbook"
breathe_default_members = ("members",)
cpp_index_common_prefix = ["ffi_cookbook::"]
# DLPack and tvm::ffi types come from the tvm_ffi headers, which are not part of
# this reference; do not ask Sphinx to resolve them.
nitpick_ignore_regex = [
    ("cpp:identifier", r"(DL\w+|kDL\w+|tvm|tvm::ffi|tvm::ffi::\w+|u?int\d+_t|size_t|cudaStream_t|F|T)"),
    # template arguments of FromFloat<> specialisations are not resolved by Sphinx
    ("cpp:identifier", r"(Float16|BFloat16)"),
    # exception kinds named by "\\throws": Python exception classes, not C++ types
    ("cpp:identifier", r"(TypeError|ValueError|RuntimeError)"),
]

# -- HTML ---------------------------------------------------------------------
html_theme = "sphinx_book_theme"
html_title = project
html_static_path = [str(ROOT / "docs" / "_static")]
html_theme_options = {
    "show_toc_level": 2,
    "use_download_button": True,
    "home_page_in_toc": True,
    # pydata-sphinx-theme 0.20 fills an empty navbar with a search field unless told otherwise;
    # that header (hidden by sphinx-book-theme) then holds the first ".primary-toggle" and
    # ".secondary-toggle" of the page, which are the ones both themes' scripts wire up: the
    # visible buttons in the article header did nothing (no dialog below 992 px, no collapse
    # above), and the search box appeared twice.
    "navbar_persistent": [],
    "extra_footer": site_polish.built_with(),
}
# Without it the page script reads an empty mode and logs an error on a first visit.
html_context = {"default_mode": "auto"}
html_favicon = str(ROOT / "docs" / "_static" / "favicon.svg")
html_css_files = ["cookbook.css"]  # outputs wrap instead of scrolling sideways
templates_path = [str(ROOT / "docs" / "_templates")]  # layout.html: no icon-font script
# Copy buttons on code only, not on outputs and tracebacks (their block sits in div.output).
copybutton_selector = "div:not(.output) > div.highlight pre"
html_last_updated_fmt = None
pygments_style = "default"
suppress_warnings = ["mystnb.unknown_mime_type"]
