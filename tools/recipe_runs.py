"""A recipe's notebook, executed once: from the recipe's zip, in the take-away venv.

The site build (conf/parallel_notebooks.py) unzips each recipe's zip, the bytes
the site offers, into ``<build>/recipe-runs/<name>`` and executes its
``notebook.ipynb`` there in the take-away venv (tools/takeaway_venv.py), as a
reader who downloaded it would. The page shows that run's outputs: its code
cells are the page's, word for word (a test of the page asserts it). A record,
``<build>/recipe-runs/<name>.json``, says which zip and which venv ran; the zip
test (tests/test_recipe_zips.py) accepts a record of the same zip and venv
instead of executing the notebook a second time, and executes it itself when
there is none.
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import time
import zipfile
from pathlib import Path

from tools.takeaway_venv import Venv, inputs_key

RUNS = "recipe-runs"

# Runs in the take-away venv, in the recipe folder: executes the notebook, writes it
# back executed, then prints what the GPU cells printed last (one line each).
EXECUTE_NOTEBOOK = r"""
import json, sys, nbclient, nbformat
nb = nbformat.read("notebook.ipynb", as_version=4)
nbclient.NotebookClient(nb, timeout=int(sys.argv[2]), kernel_name="python3",
                        resources={"metadata": {"path": "."}}).execute()
if sys.argv[1] != "-":
    nbformat.write(nb, sys.argv[1])
gpu = []
for cell in nb.cells:
    if cell.cell_type == "code" and any(k in cell.source for k in ("cuda.is_available()", "device_count()")):
        text = "".join(o.get("text", "") for o in cell.outputs if o.get("output_type") == "stream")
        gpu.append(text.strip().splitlines()[-1] if text.strip() else "")
print(json.dumps(gpu))
"""


def zip_digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def execute(folder: Path, venv: Venv, executed: Path | None = None, timeout: int = 1500) -> list[str]:
    """Execute ``folder/notebook.ipynb`` in ``venv`` (``executed``: where the executed copy goes).

    Returns the last line each GPU cell printed; fails with the cell's error."""
    done = venv.run([venv.python, "-c", EXECUTE_NOTEBOOK, str(executed or "-"), str(timeout)], cwd=folder)
    return json.loads(done.stdout.strip().splitlines()[-1])


def run_from_zip(name: str, data: bytes, build: Path, venv: Venv, timeout: int = 1500,
                 key: str | None = None) -> tuple[Path, dict]:
    """Unzip ``data`` (recipe ``name``'s zip) into an empty folder and execute its notebook.

    Returns the executed notebook's path and the record written beside the folder
    (``key``: the venv's :func:`~tools.takeaway_venv.inputs_key`, when the caller has it)."""
    runs = build / RUNS
    folder = runs / name
    record_path = runs / f"{name}.json"
    record_path.unlink(missing_ok=True)
    shutil.rmtree(folder, ignore_errors=True)
    runs.mkdir(parents=True, exist_ok=True)
    zipfile.ZipFile(io.BytesIO(data)).extractall(runs)
    executed = runs / f"{name}.executed.ipynb"
    start = time.perf_counter()
    gpu_cells = execute(folder, venv, executed, timeout)
    record = {"zip": zip_digest(data), "venv": key or inputs_key(), "gpu_cells": gpu_cells,
              "seconds": round(time.perf_counter() - start, 2)}
    record_path.write_text(json.dumps(record, indent=1) + "\n")
    return executed, record


def record_for(name: str, data: bytes, build: Path, key: str | None = None) -> dict | None:
    """The site build's record of running this very zip in a venv made as today's, else None
    (``key``: the venv's :func:`~tools.takeaway_venv.inputs_key`, when the caller has it)."""
    path = build / RUNS / f"{name}.json"
    if not path.is_file():
        return None
    record = json.loads(path.read_text())
    if record.get("zip") != zip_digest(data) or record.get("venv") != (key or inputs_key()):
        return None
    return record


def build_of_run(name: str, files: dict[str, bytes], build: Path, key: str | None = None) -> Path | None:
    """The build folder the site build's run of recipe ``name`` left (``<folder>/build``), when
    that run was of the zip of ``files`` (the recipe as it is now: ``recipes.recipe_files``) and
    the unzipped folder still holds them, byte for byte; else None.

    The tests that load every recipe's libraries (the fuzz, the threads, the RPATH scan) use it
    instead of building each recipe folder of the checkout again from the same sources."""
    from ffi_cookbook import recipes

    folder = build / RUNS / name
    if record_for(name, recipes.zip_bytes(files, name), build, key) is None:
        return None
    for rel, content in files.items():
        path = folder / rel
        if rel != "notebook.ipynb" and (not path.is_file() or path.read_bytes() != content):
            return None
    return folder / "build" if (folder / "build" / "CMakeCache.txt").is_file() else None
