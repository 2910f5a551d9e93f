"""Execute a notebook: the one runner of the site build and `make gpu-check`.

A notebook runs with its folder as the working directory, its cells in order, and stops at
the first cell that raises (a cell tagged ``raises-exception`` may raise, and must: one that
raises nothing stops the run as an error), keeping the outputs up to there. A cell that
measures time is tagged ``measures-time``: the site build
runs such a notebook's cells before the first of them beside other work, then pauses it
(``pause``) and runs the rest with nothing else running. Everything that executes a notebook
calls :func:`execute`:

- the site build (docs/_ext/parallel_notebooks.py): a page's notebook in its folder; a recipe's
  in its zip's folder, built there by `make test`, with the take-away venv's kernel;
- `make gpu-check` (tools/gpu_notebooks.py) on a GPU machine, each in its own folder.

By hand, in the page's own folder with this interpreter:

    python -m tools.execute_notebook cookbook/10-rmsnorm/notebook.md docs/guides/streams.md
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

#: The tag of a code cell that measures time (what it prints depends on nothing else running).
MEASURES_TIME = "measures-time"
#: The tag of a cell that demonstrates an error: it may raise, and it fails the run when it does not.
RAISES = "raises-exception"


def first_timed_cell(notebook) -> int | None:
    """The index in ``notebook.cells`` of the first code cell tagged :data:`MEASURES_TIME`."""
    return next((i for i, cell in enumerate(notebook.cells) if cell.cell_type == "code"
                 and MEASURES_TIME in cell.get("metadata", {}).get("tags", [])), None)


def execute(notebook, folder: Path, timeout: int = 900, allow_errors: bool = False,
            record_timing: bool = True, pause: Callable[[], None] | None = None,
            kernel: str = "python3", env: dict[str, str] | None = None) -> float:
    """Execute ``notebook`` (an nbformat node, changed in place) in ``folder`` with the Jupyter
    kernel named ``kernel``, started with the environment ``env`` (default: this process's); its
    seconds, less the time spent in ``pause``.

    With ``record_timing`` each code cell gets nbclient's timestamps in its metadata (the stored
    GPU runs keep them). A page for myst-nb's cache must not: the cache hashes
    every cell's metadata, so a timed page misses it and myst-nb executes it again.
    ``pause`` is called just before the first cell that measures time (:func:`first_timed_cell`),
    its kernel idle, and the cell runs when it returns.
    Raises nbclient's CellExecutionError (or CellTimeoutError) at the first failing cell, and
    at a cell tagged ``raises-exception`` that raised nothing."""
    import nbclient

    paused = [0.0]
    at = first_timed_cell(notebook) if pause is not None else None

    class Client(nbclient.NotebookClient):
        async def async_execute_cell(self, cell, cell_index, *args, **kwargs):
            if cell_index == at:
                began = time.perf_counter()
                pause()
                paused[0] = time.perf_counter() - began
            executed = await super().async_execute_cell(cell, cell_index, *args, **kwargs)
            if RAISES in cell.get("metadata", {}).get("tags", []) and not any(
                    output.get("output_type") == "error" for output in cell.get("outputs", [])):
                raise nbclient.exceptions.CellExecutionError(
                    "", "AssertionError", f"cell {cell_index} is tagged {RAISES} but raised nothing:\n{cell.source}")
            return executed

    start = time.perf_counter()
    Client(notebook, timeout=timeout, kernel_name=kernel, allow_errors=allow_errors,
           record_timing=record_timing, resources={"metadata": {"path": str(folder)}}).execute(
               **({} if env is None else {"env": env}))
    return time.perf_counter() - start - paused[0]


class Paused:
    """A run of a notebook that measures time, in a thread of its own: ``work(pause)`` runs the
    notebook and calls ``pause`` before its first timed cell (``execute``'s ``pause``).
    :meth:`start` returns once it waits there (or ended without); :meth:`finish` lets it go on,
    waits for it and returns what ``work`` returned, or raises what it raised. Used by the site
    build and `make gpu-check`: the cells before the timed ones run beside other work, the rest
    when nothing else runs."""

    def __init__(self, work: Callable[[Callable[[], None]], object]):
        self._work, self._result, self._error = work, None, None
        self._at_pause, self._go = threading.Event(), threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _pause(self) -> None:
        self._at_pause.set()
        self._go.wait()

    def _run(self) -> None:
        try:
            self._result = self._work(self._pause)
        except BaseException as err:  # noqa: BLE001  (raised again by finish, in the caller's thread)
            self._error = err
        finally:
            self._at_pause.set()  # also when it ended before a timed cell

    def start(self, wait: bool = True) -> None:
        """Start the thread (once); with ``wait``, return when it waits at the pause or ended."""
        if not self._thread.is_alive() and not self._at_pause.is_set():
            self._thread.start()
        if wait:
            self._at_pause.wait()

    def finish(self):
        """Run the rest (all of it, when never started) and return its result."""
        self.start()
        self._go.set()
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._result


def run_page(path: Path, timeout: int) -> float:
    """By hand: a page's notebook (a recipe's too) in its own folder with this interpreter, as the
    site build runs it."""
    import jupytext

    return execute(jupytext.read(path), path.parent, timeout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.execute_notebook", description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="+", type=Path, help="MyST pages (.md)")
    parser.add_argument("--timeout", type=int, default=900, help="seconds a cell may take")
    opts = parser.parse_args(argv)
    import nbclient

    for path in opts.notebooks:
        try:
            seconds = run_page(path.resolve(), opts.timeout)
        except (nbclient.exceptions.CellExecutionError, AssertionError) as err:
            print(f"{path}: a cell failed\n{err}", file=sys.stderr)
            return 1
        print(f"{path}: executed in {seconds:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
