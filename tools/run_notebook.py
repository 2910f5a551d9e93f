"""Execute MyST text notebooks the way the site build does, and fail loudly.

    python tools/run_notebook.py cookbook/02-tensor-view/notebook.md [more.md ...]

Each notebook runs in its own folder (as myst-nb does with
``nb_execution_in_temp = False``). Cells tagged ``raises-exception`` may raise;
any other error stops with the cell's traceback and a non-zero exit.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import jupytext
import nbclient

from ffi_cookbook.build import RECIPE_BUILD_ENV, build_dir_for


def run(path: Path, timeout: int = 900) -> float:
    """Execute one notebook in its folder; return the wall time in seconds."""
    notebook = jupytext.read(path)
    os.environ[RECIPE_BUILD_ENV] = str(build_dir_for(path.parent))  # the kernel inherits it
    start = time.perf_counter()
    client = nbclient.NotebookClient(notebook, timeout=timeout, kernel_name="python3",
                                     resources={"metadata": {"path": str(path.parent)}})
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
