"""Execute MyST text notebooks the way the site build does, and fail loudly.

    python tools/run_notebook.py cookbook/02-tensor-view/notebook.md [more.md ...]

A page's notebook runs in its own folder (as myst-nb does with
``nb_execution_in_temp = False``); a recipe's in a fresh copy of its zip's files under the
build root (``<build>/notebook-runs/NN-slug``), as a reader runs it in a copy of theirs,
so what it builds and writes stays out of the checkout. Cells tagged
``raises-exception`` may raise; any other error stops with the cell's traceback and a
non-zero exit.
"""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

import jupytext
import nbclient

from ffi_cookbook import takeaway
from ffi_cookbook.build import build_root, checkout_root


def folder_to_run_in(path: Path) -> Path:
    """The folder a notebook runs in: a recipe's, a fresh copy of its zip's files; a page's, its own."""
    folder = path.parent
    checkout = checkout_root(folder)
    if checkout is None or folder.parent != checkout / "cookbook":
        return folder
    copy = build_root(checkout) / "notebook-runs" / folder.name
    shutil.rmtree(copy, ignore_errors=True)
    return takeaway.write_recipe(folder.name, copy)  # the files of its zip


def run(path: Path, timeout: int = 900) -> float:
    """Execute one notebook; return the wall time in seconds."""
    notebook = jupytext.read(path)
    folder = folder_to_run_in(path)
    start = time.perf_counter()
    client = nbclient.NotebookClient(notebook, timeout=timeout, kernel_name="python3",
                                     resources={"metadata": {"path": str(folder)}})
    client.execute()
    return time.perf_counter() - start


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    for name in argv:
        path = Path(name).resolve()
        try:
            seconds = run(path)
        except nbclient.exceptions.CellExecutionError as err:
            print(f"{name}: a cell failed\n{err}", file=sys.stderr)
            return 1
        print(f"{name}: executed in {seconds:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
