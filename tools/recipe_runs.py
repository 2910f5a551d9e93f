"""One recipe's pipeline: its zip unzipped, its notebook executed, its README run, one record.

The site build (docs/_ext/parallel_notebooks.py) takes each recipe through it, from the zip
the site offers, in the take-away venv (tools/takeaway_venv.py), as a reader who
downloaded it would:

1. the zip is unzipped into an empty folder, ``<build>/recipe-runs/<name>``;
2. ``notebook.ipynb`` is executed there (it configures and builds the recipe into
   ``<name>/build``); the executed copy is ``<name>.executed.ipynb``, and the page
   shows its outputs (its code cells are the page's, word for word);
3. the README's ```bash block runs in the same folder: its ``cmake`` lines find the
   notebook's build up to date, and its ``pytest`` writes ``<name>.junit.xml``;
4. ``<name>.json`` records which zip and which venv ran, the seconds of each part,
   what the GPU cells printed last and whether the README's commands passed.

The zip test (tests/product/test_recipe_zips.py) asserts on that record when it is of today's
zip and venv (:func:`record_for`), and otherwise takes the recipe through the same
pipeline itself, in ``<build>/zip-tests``. ``make recipe R=10`` runs it for one recipe.

    python -m tools.recipe_runs 10 [--build _build]   (number or name; what `make recipe` runs)
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

from tools.takeaway_venv import Venv, inputs_key

RUNS = "recipe-runs"
#: Bumped when a record's fields change: a record of another version is not today's.
VERSION = 2

# Runs in the take-away venv, in the recipe folder: executes the notebook, writes it
# back executed (up to the failing cell, with its error, when one fails), then prints
# what the GPU cells printed last (one line each).
EXECUTE_NOTEBOOK = r"""
import json, sys, nbclient, nbformat
nb = nbformat.read("notebook.ipynb", as_version=4)
try:
    nbclient.NotebookClient(nb, timeout=int(sys.argv[2]), kernel_name="python3",
                            resources={"metadata": {"path": "."}}).execute()
finally:
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


def readme_commands(readme: Path) -> str:
    """The first ```bash block of a recipe README: exactly what a reader runs."""
    match = re.search(r"```bash\n(.*?)```", readme.read_text(), re.S)
    if not match:
        raise ValueError(f"{readme}: no ```bash block with build commands")
    return match.group(1)


def execute(folder: Path, venv: Venv, executed: Path | None = None, timeout: int = 1500) -> list[str]:
    """Execute ``folder/notebook.ipynb`` in ``venv`` (``executed``: where the executed copy goes).

    Returns the last line each GPU cell printed; fails with the cell's error."""
    done = venv.run([venv.python, "-c", EXECUTE_NOTEBOOK, str(executed or "-"), str(timeout)], cwd=folder)
    return json.loads(done.stdout.strip().splitlines()[-1])


def build_seconds(executed: Path) -> float | None:
    """Seconds of the notebook's cells that build the recipe (``cmake_build(``), from nbclient's
    timestamps; None when no cell builds or a timestamp is missing."""
    from datetime import datetime

    seconds = 0.0
    found = False
    for cell in json.loads(executed.read_text())["cells"]:
        if cell["cell_type"] != "code" or "cmake_build(" not in "".join(cell["source"]):
            continue
        stamps = cell.get("metadata", {}).get("execution", {})
        try:
            start = datetime.fromisoformat(stamps["iopub.execute_input"].replace("Z", "+00:00"))
            end = datetime.fromisoformat(stamps["shell.execute_reply"].replace("Z", "+00:00"))
        except (KeyError, ValueError):
            return None
        seconds += (end - start).total_seconds()
        found = True
    return round(seconds, 2) if found else None


def run_readme(folder: Path, venv: Venv, junit: Path, timeout: int = 1800) -> dict:
    """Run the README's ```bash block in ``folder`` as a reader would; its pytest writes ``junit``.

    Never raises for a failing command: the result says ``ok`` and keeps the output's tail."""
    # pytest reads the first pytest.ini, or pyproject.toml with a pytest table, in the folders
    # above: here the checkout's, which a reader's unzipped folder does not have above it.
    # An empty one and the folder as root dir keep the reader's defaults (nothing else).
    no_config = folder.parent / "no-config.ini"
    no_config.write_text("[pytest]\n")
    junit.unlink(missing_ok=True)
    env = venv.env()
    env["PYTEST_ADDOPTS"] = (f"{env['PYTEST_ADDOPTS']} -c {shlex.quote(str(no_config))} "
                             f"--rootdir {shlex.quote(str(folder))} "
                             f"-o junit_family=xunit1 --junitxml={shlex.quote(str(junit))}")
    start = time.perf_counter()
    try:
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", readme_commands(folder / "README.md")],
                              cwd=folder, env=env, capture_output=True, text=True, timeout=timeout)
        ok, output = done.returncode == 0, f"exit status {done.returncode}\nstdout:\n{done.stdout[-5000:]}\nstderr:\n{done.stderr[-5000:]}"
    except subprocess.TimeoutExpired as err:
        ok, output = False, f"timed out after {timeout} s\n{str(err.stdout or '')[-5000:]}"
    return {"ok": ok and junit.is_file(), "seconds": round(time.perf_counter() - start, 2),
            "junit": junit.name, "output": "" if ok else output}


def unzip(name: str, data: bytes, runs: Path) -> Path:
    """Unzip ``data`` (recipe ``name``'s zip) into ``runs/<name>``, emptied first; no record left."""
    (runs / f"{name}.json").unlink(missing_ok=True)
    shutil.rmtree(runs / name, ignore_errors=True)
    runs.mkdir(parents=True, exist_ok=True)
    zipfile.ZipFile(io.BytesIO(data)).extractall(runs)
    return runs / name


def write_record(runs: Path, name: str, record: dict) -> None:
    path = runs / f"{name}.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(record, indent=1) + "\n")
    tmp.replace(path)


def run_from_zip(name: str, data: bytes, build: Path, venv: Venv, timeout: int = 1500,
                 key: str | None = None, readme: bool = True, runs: str = RUNS) -> tuple[Path, dict]:
    """Take recipe ``name``'s zip ``data`` through the pipeline in ``<build>/<runs>/<name>``.

    Returns the executed notebook's path and the record written beside the folder
    (``key``: the venv's :func:`~tools.takeaway_venv.inputs_key`, when the caller has it).
    Fails when the notebook fails (then no record is left). With ``readme=False`` the
    README waits for :func:`add_readme` (the notebooks that run alone): until then the
    record is not today's (:func:`record_for`)."""
    folder = unzip(name, data, build / runs)
    executed = build / runs / f"{name}.executed.ipynb"
    start = time.perf_counter()
    gpu_cells = execute(folder, venv, executed, timeout)
    record = {"version": VERSION, "zip": zip_digest(data), "venv": key or inputs_key(), "gpu_cells": gpu_cells,
              "seconds": round(time.perf_counter() - start, 2), "build_seconds": build_seconds(executed)}
    if readme:
        record["readme"] = run_readme(folder, venv, build / runs / f"{name}.junit.xml")
    write_record(build / runs, name, record)
    return executed, record


def add_readme(name: str, build: Path, venv: Venv, runs: str = RUNS) -> dict:
    """Run the README of a recipe whose notebook :func:`run_from_zip` ran with ``readme=False``."""
    path = build / runs / f"{name}.json"
    record = json.loads(path.read_text())
    record["readme"] = run_readme(build / runs / name, venv, build / runs / f"{name}.junit.xml")
    write_record(build / runs, name, record)
    return record


def record_for(name: str, data: bytes, build: Path, key: str | None = None, runs: str = RUNS) -> dict | None:
    """The record of taking this very zip through the pipeline, README included, in a venv made
    as today's, else None (``key``: the venv's :func:`~tools.takeaway_venv.inputs_key`, when the
    caller has it)."""
    path = build / runs / f"{name}.json"
    if not path.is_file():
        return None
    record = json.loads(path.read_text())
    if (record.get("version") != VERSION or record.get("zip") != zip_digest(data)
            or record.get("venv") != (key or inputs_key()) or "readme" not in record):
        return None
    return record


def build_of_run(name: str, files: dict[str, bytes], build: Path, key: str | None = None) -> Path | None:
    """The build folder the site build's run of recipe ``name`` left (``<folder>/build``), when
    that run was of the zip of ``files`` (the recipe as it is now: ``takeaway.recipe_files``) and
    the unzipped folder still holds them, byte for byte; else None.

    The tests that load every recipe's libraries (the fuzz, the threads, the RPATH scan) use it
    instead of building each recipe folder of the checkout again from the same sources."""
    from ffi_cookbook import takeaway

    folder = build / RUNS / name
    if record_for(name, takeaway.zip_bytes(files, name), build, key) is None:
        return None
    for rel, content in files.items():
        path = folder / rel
        if rel != "notebook.ipynb" and (not path.is_file() or path.read_bytes() != content):
            return None
    return folder / "build" if (folder / "build" / "CMakeCache.txt").is_file() else None


def recipe_name(number_or_name: str) -> str:
    """``10``, ``10-rmsnorm`` or ``rmsnorm`` -> ``10-rmsnorm``."""
    from ffi_cookbook import catalog

    names = [r.name for r in catalog.recipes()]
    wanted = number_or_name.strip().rstrip("/").split("/")[-1]
    found = [n for n in names if n == wanted or n.split("-", 1)[0] == wanted.zfill(2)
             or n.split("-", 1)[1] == wanted]
    if len(found) != 1:
        raise SystemExit(f"no single recipe is {number_or_name!r}; the recipes: {', '.join(names)}")
    return found[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.recipe_runs", description=__doc__.split("\n\n")[0])
    parser.add_argument("recipe", help="number or name, e.g. 10 or 10-rmsnorm")
    parser.add_argument("--name", action="store_true", help="print the recipe's full name and stop")
    parser.add_argument("--build", type=Path, default=Path(os.environ.get("FFI_COOKBOOK_BUILD_DIR") or "_build"))
    opts = parser.parse_args(argv)
    from ffi_cookbook import takeaway
    from tools.takeaway_venv import venv_at

    name = recipe_name(opts.recipe)
    if opts.name:
        print(name)
        return 0
    build = opts.build.resolve()
    data = takeaway.zip_bytes(takeaway.recipe_files(name), name)
    key = inputs_key()
    record = record_for(name, data, build, key)
    if record is not None:
        print(f"{name}: this zip already ran (its record, {build / RUNS / name}.json, is of today's zip and venv)")
    else:
        venv = venv_at(build / "takeaway-venv")
        print(f"{name}: unzip, execute the notebook, run the README in {build / RUNS / name} ...", flush=True)
        _, record = run_from_zip(name, data, build, venv, key=key)
    readme = record["readme"]
    print(f"{name}: notebook {record['seconds']:.0f} s (build {record.get('build_seconds') or 0:.0f} s), "
          f"README {readme['seconds']:.0f} s, {'passed' if readme['ok'] else 'FAILED'}; "
          f"GPU cells said: {record['gpu_cells']}")
    if not readme["ok"]:
        print(readme["output"], file=sys.stderr)
    return 0 if readme["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
