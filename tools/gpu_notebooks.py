"""Execute notebooks on a GPU machine and keep them, with their outputs, for the site.

    python tools/gpu_notebooks.py --out docs/gpu-runs/data cookbook/*/notebook.md docs/guides/*.md ...

``make gpu-check`` (tools/gpu_check.py) calls this module for every notebook of
the site. The site's own build runs on a machine without a GPU, where GPU cells
say that they did not run. Here every notebook runs as the site build runs it:
in its own folder, with the interpreter running this (the venv). Each is
written as ``<name>.ipynb`` with every output and a stamp in the notebook
metadata (``ffi_cookbook_gpu_run``): device, driver, CUDA, torch and
apache-tvm-ffi versions, commit, date, wall time, and the error if a cell failed.
``docs/_ext/gpu_runs.py`` and the GPU runs page read those files.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime
import os
import re
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

import jupytext
import nbclient
import nbformat

ROOT = Path(__file__).resolve().parents[1]


def machine_stamp() -> dict:
    """Where and with what the notebooks ran."""
    import torch
    import tvm_ffi

    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True, check=True).stdout.splitlines()[0]
    device, driver = (part.strip() for part in smi.split(","))
    # A copy of the tree without .git (a GPU box's) names its commit in FFI_COOKBOOK_COMMIT.
    commit = os.environ.get("FFI_COOKBOOK_COMMIT") or subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    return {"device": device, "driver": driver, "cuda": torch.version.cuda, "torch": torch.__version__,
            "apache_tvm_ffi": tvm_ffi.__version__, "commit": commit or "unknown",
            "date": datetime.date.today().isoformat()}


def notebook_name(path: Path) -> str:
    """``cookbook/01-add-one/notebook.md`` -> ``01-add-one``; a page keeps its stem."""
    return path.parent.name if path.name == "notebook.md" else path.stem


ANSI = re.compile(r"\x1b\[[0-9;]*m")  # terminal colours in nbclient's error text
TEMP_FOLDER = re.compile(re.escape(tempfile.gettempdir()) + r"/tmp[a-z0-9_]{8}\b")  # tempfile.mkdtemp's


def scrub_text(text: str) -> str:
    """The GPU machine's checkout, interpreter, home and temporary paths replaced: pages show no
    machine's paths."""
    text = (text.replace(sysconfig.get_paths()["purelib"], "<site-packages>").replace(f"{sys.prefix}/bin/", "")
            .replace(str(ROOT), "<checkout>").replace(str(Path.home()), "~"))
    return TEMP_FOLDER.sub("<tmp>", text)


def scrub_paths(notebook) -> None:
    """Scrub every output of the notebook (see scrub_text)."""
    scrub = scrub_text
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            if "text" in output:
                output["text"] = scrub(output["text"])
            if "traceback" in output:
                output["traceback"] = [scrub(line) for line in output["traceback"]]
            if "evalue" in output:
                output["evalue"] = scrub(output["evalue"])
            for mime, value in output.get("data", {}).items():
                if mime.startswith("text/") and isinstance(value, str):
                    output["data"][mime] = scrub(value)


def execute(path: Path, out: Path, stamp: dict, pause=None) -> tuple[str, float, str | None]:
    """A page's notebook, a recipe's included, in its own folder with this interpreter's packages
    (on a GPU box: its CUDA torch and the carried wheels), by the cookbook's notebook runner
    (tools/execute_notebook.py). ``pause``: called before its first cell that measures time;
    its seconds are not the notebook's."""
    sys.path.insert(0, str(ROOT))
    from tools.execute_notebook import execute as run_cells

    notebook = jupytext.read(path)
    error = None
    waited = [0.0]

    def timed_pause() -> None:  # its seconds are not the notebook's, also when a later cell fails
        began = time.perf_counter()
        pause()
        waited[0] += time.perf_counter() - began

    start = time.perf_counter()
    try:
        run_cells(notebook, path.parent, timeout=600, pause=timed_pause if pause else None)
    except nbclient.exceptions.CellExecutionError as err:  # keep the cells that ran
        error = scrub_text(ANSI.sub("", str(err)).strip().splitlines()[-1])[:500]
    seconds = round(time.perf_counter() - start - waited[0], 1)
    scrub_paths(notebook)
    notebook.metadata["ffi_cookbook_gpu_run"] = dict(stamp, seconds=seconds, error=error)
    notebook.metadata.pop("jupytext", None)
    nbformat.write(notebook, out / f"{notebook_name(path)}.ipynb")
    return notebook_name(path), seconds, error


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="folder for the executed .ipynb files")
    parser.add_argument("--jobs", type=int, default=4, help="notebooks executed at once")
    parser.add_argument("notebooks", nargs="+", type=Path)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    stamp = machine_stamp()
    print(stamp)
    paths = [p.resolve() for p in args.notebooks]
    failed = 0
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for name, seconds, error in pool.map(lambda p: execute(p, args.out, stamp), paths):
            print(f"{name}: {seconds} s", "ok" if error is None else f"FAILED: {error}")
            failed += error is not None
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
