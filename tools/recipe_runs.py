"""One recipe's zip as a reader runs it: unzipped into an empty folder, its README's commands run.

`make test` takes every recipe through it (``--all``), in the take-away venv (tools/takeaway_venv.py,
a fresh venv without ``ffi_cookbook``), as a reader who downloaded the recipe would:

1. the zip is unzipped into an empty folder, ``<build>/recipe-runs/<name>``;
2. the README's ```bash block runs there: its ``cmake`` lines build ``<name>/build`` and its
   ``pytest`` (the tests not marked timing) writes ``<name>.junit.xml``;
3. ``<name>.json`` records which zip and which venv ran, the seconds, and whether the
   README's commands passed (their output's tail when not).

The zip test (tests/product/test_recipe_zips.py) asserts on that record when it is of today's zip
and venv (:func:`record_for`), and otherwise takes the recipe through the pipeline itself. The
tests marked timing run afterwards in the same folders, one recipe at a time (``--timing``).
The site executes each recipe's notebook in the recipe's own folder; it does not run zips.

    python -m tools.recipe_runs --all [--workers 2]   (make test: every recipe not run today)
    python -m tools.recipe_runs 10                      (one recipe; number or name)
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
VERSION = 3

def zip_digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def readme_commands(readme: Path) -> str:
    """The first ```bash block of a recipe README: exactly what a reader runs."""
    match = re.search(r"```bash\n(.*?)```", readme.read_text(), re.S)
    if not match:
        raise ValueError(f"{readme}: no ```bash block with build commands")
    return match.group(1)


def pytest_env(folder: Path, venv: Venv, junit: Path, marks: str = "not timing") -> dict[str, str]:
    """The environment of ``venv`` for a pytest in ``folder``: the tests ``marks`` selects, their
    results in ``junit``, and the reader's defaults.

    pytest reads the first pytest.ini, or pyproject.toml with a pytest table, in the folders
    above: here the checkout's, which a reader's unzipped folder does not have above it. An
    empty one and the folder as root dir keep the reader's defaults (nothing else). A mark the
    folder does not register (a reader would get a warning about it) is an error here."""
    no_config = folder.parent / "no-config.ini"
    no_config.write_text("[pytest]\n")
    junit.unlink(missing_ok=True)
    env = venv.env()
    env["PYTEST_ADDOPTS"] = (f"-m {shlex.quote(marks)} -c {shlex.quote(str(no_config))} "
                             f"--rootdir {shlex.quote(str(folder))} -W error::pytest.PytestUnknownMarkWarning "
                             f"-o junit_family=xunit1 --junitxml={shlex.quote(str(junit))}")
    return env


def run_readme(folder: Path, venv: Venv, junit: Path, timeout: int = 1800) -> dict:
    """Run the README's ```bash block in ``folder`` as a reader would; its pytest writes ``junit``.

    Never raises for a failing command: the result says ``ok`` and keeps the output's tail."""
    env = pytest_env(folder, venv, junit)
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


def run_from_zip(name: str, data: bytes, build: Path, venv: Venv, key: str | None = None,
                 runs: str = RUNS) -> dict:
    """Take recipe ``name``'s zip ``data`` through the pipeline in ``<build>/<runs>/<name>``; return
    the record written beside the folder (``key``: the venv's
    :func:`~tools.takeaway_venv.inputs_key`, when the caller has it)."""
    folder = unzip(name, data, build / runs)
    readme = run_readme(folder, venv, build / runs / f"{name}.junit.xml")
    record = {"version": VERSION, "zip": zip_digest(data), "venv": key or inputs_key(),
              "seconds": readme["seconds"], "readme": readme}
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


def recorded_seconds(runs: Path, name: str) -> float | None:
    """The seconds recipe ``name``'s last run in ``runs`` took (its README), or None without one."""
    try:
        return json.loads((runs / f"{name}.json").read_text())["seconds"]
    except (OSError, ValueError, KeyError):
        return None


def passed(name: str, data: bytes, build: Path, key: str | None = None) -> bool:
    """Whether this very zip ran in today's venv and its README passed (see :func:`record_for`)."""
    record = record_for(name, data, build, key)
    return record is not None and record["readme"]["ok"]


def folder_of_run(name: str, files: dict[str, bytes], build: Path, key: str | None = None) -> Path | None:
    """The folder `make test`'s run of recipe ``name`` left (``<build>/recipe-runs/<name>``), when
    that run was of the zip of ``files`` (the recipe as it is now: ``takeaway.recipe_files``) and
    the unzipped folder still holds them, byte for byte; else None. The site executes the
    recipe's notebook there (docs/_ext/parallel_notebooks.py)."""
    from tools import takeaway

    folder = build / RUNS / name
    if not passed(name, takeaway.zip_bytes(files, name), build, key):  # a failed README: half-built
        return None
    for rel, content in files.items():
        path = folder / rel
        if rel != "notebook.ipynb" and (not path.is_file() or path.read_bytes() != content):
            return None
    return folder


def build_of_run(name: str, files: dict[str, bytes], build: Path, key: str | None = None) -> Path | None:
    """The CMake build folder (``<folder>/build``) of :func:`folder_of_run`, or None.

    The tests that load every recipe's libraries (the fuzz, the threads, the RPATH scan) use it
    instead of building each recipe folder of the checkout again from the same sources."""
    folder = folder_of_run(name, files, build, key)
    return folder / "build" if folder and (folder / "build" / "CMakeCache.txt").is_file() else None


def timing_test_files(folder: Path) -> list[str]:
    """The test files of the recipe in ``folder`` that hold tests marked ``timing``."""
    return sorted(p.name for p in folder.glob("test_*.py") if "pytest.mark.timing" in p.read_text())


def checkout_junit(junit: Path, name: str, out: Path) -> None:
    """Copy ``junit`` (a pytest of recipe ``name``'s unzipped folder, its root dir) to ``out``,
    the test files named by their path in the checkout, as `make test`'s other junit files do."""
    import xml.etree.ElementTree as ET

    tree = ET.parse(junit)
    for case in tree.iter("testcase"):
        if case.get("file"):
            case.set("file", f"cookbook/{name}/{case.get('file')}")
        case.set("classname", f"cookbook.{name}.{case.get('classname', '')}")
    tree.write(out)


def run_timing_tests(build: Path, junit_dir: Path | None) -> int:
    """`make test`'s second pass: the tests marked timing, one recipe at a time with nothing else
    running, each in `make test`'s run of its zip (built there, in the take-away venv), as
    its README runs the others. A recipe without a run of today's zip is taken through the
    pipeline first. Their junit files go to ``junit_dir`` as ``pytest-timing-<name>.xml``."""
    from ffi_cookbook import catalog
    from tools import takeaway
    from tools.takeaway_venv import venv_at

    timed = {r.name: files for r in catalog.recipes() if (files := timing_test_files(r.folder))}
    venv, key = venv_at(build / "takeaway-venv"), inputs_key()
    failed = 0
    for name, files in timed.items():
        if not passed(name, takeaway.zip_bytes(takeaway.recipe_files(name), name), build, key):
            print(f"{name}: no passing run of today's zip; taking it through the pipeline first", flush=True)
            run_recipe(name, build, key=key)
        folder = build / RUNS / name
        junit = build / RUNS / f"{name}.timing.xml"
        done = subprocess.run([str(venv.python), "-m", "pytest", "-q", "-rs", *files], cwd=folder,
                              env=pytest_env(folder, venv, junit, marks="timing"))
        failed += done.returncode not in (0, 5)  # 5: none selected
        if junit_dir is not None and junit.is_file():
            junit_dir.mkdir(parents=True, exist_ok=True)
            checkout_junit(junit, name, junit_dir / f"pytest-timing-{name}.xml")
    return 1 if failed else 0


def default_build() -> Path:
    """The build root `make` uses: ``$FFI_COOKBOOK_BUILD_DIR``, else ``_build`` of the checkout."""
    return Path(os.environ.get("FFI_COOKBOOK_BUILD_DIR") or Path(__file__).resolve().parents[1] / "_build").resolve()


def run_recipe(name: str, build: Path | None = None, runs: str = RUNS, key: str | None = None) -> dict:
    """Recipe ``name``'s zip, as the checkout holds it now, through the pipeline in the take-away
    venv of ``build`` (:func:`default_build`); see :func:`run_from_zip` (``key`` as there)."""
    from tools import takeaway
    from tools.takeaway_venv import venv_at

    build = build or default_build()
    data = takeaway.zip_bytes(takeaway.recipe_files(name), name)
    return run_from_zip(name, data, build, venv_at(build / "takeaway-venv"), key=key, runs=runs)


def run_all(build: Path, workers: int) -> int:
    """Every recipe without a passing record of today's zip and venv through the pipeline,
    ``workers`` at a time, longest first (by its last record); 1 when a README failed. A record
    whose README failed runs again: a later `make` must not go on from its half-built folder."""
    from concurrent.futures import ThreadPoolExecutor

    from ffi_cookbook import catalog
    from tools import takeaway
    from tools.takeaway_venv import venv_at

    venv, key = venv_at(build / "takeaway-venv"), inputs_key()

    recipes = catalog.recipes()
    zips = [(r.name, takeaway.zip_bytes(takeaway.recipe_files(r.name), r.name)) for r in recipes]
    todo = [(name, data) for name, data in zips if not passed(name, data, build, key)]
    todo.sort(key=lambda item: -(recorded_seconds(build / RUNS, item[0]) or 0.0))
    print(f"recipe zips to run: {len(todo)} ({len(recipes) - len(todo)} passed with today's zip already)", flush=True)

    def one(item) -> dict:
        return run_from_zip(item[0], item[1], build, venv, key)

    failed = 0
    with ThreadPoolExecutor(max(1, workers)) as pool:
        for (name, _), record in zip(todo, pool.map(one, todo)):
            readme = record["readme"]
            print(f"{name}: README {readme['seconds']:.0f} s, {'passed' if readme['ok'] else 'FAILED'}", flush=True)
            if not readme["ok"]:
                print(readme["output"], file=sys.stderr, flush=True)
                failed += 1
    return 1 if failed else 0


def recipe_name(number_or_name: str) -> str:
    """``10``, ``10-rmsnorm``, ``rmsnorm`` (or a path ending in one) -> ``10-rmsnorm``."""
    from ffi_cookbook import catalog

    wanted = number_or_name.strip().rstrip("/").split("/")[-1]
    try:
        return catalog.recipe(wanted.zfill(2) if wanted.isdigit() else wanted).name
    except catalog.RecipeError as err:
        raise SystemExit(str(err)) from None


#: Rough seconds of each step `make recipe` may have to do first, measured on 2 cores
#: (2026-11): a cold `make docs` took 12-15 minutes, most of it executing the notebooks.
STEP_SECONDS = {"venv": 120, "runtime": 240, "takeaway-venv": 150, "site": 780, "recipe": 90}


def _minutes(seconds: float) -> str:
    return f"~{max(1, round(seconds / 60))} min"


def plan(number_or_name: str, build: Path, stamp: Path, root: Path | None = None,
         runtime: Path | None = None) -> tuple[str, list[str]]:
    """What ``make recipe R=<number_or_name>`` will do before and for the recipe, with rough
    times: (the recipe's folder name, one line per step). Standard library only, so that
    `make` can print it before the venv exists (after `make clean`, say). ``stamp``: the file
    `make` touches when the project venv is installed; ``runtime``: the recipe library's build
    folder (``<root>/build/runtime``)."""
    root = root or Path(__file__).resolve().parents[1]
    runtime = runtime or root / "build" / "runtime"
    wanted = number_or_name.strip().rstrip("/").split("/")[-1]
    wanted = wanted.zfill(2) if wanted.isdigit() else wanted
    folders = sorted(p.name for p in (root / "cookbook").glob("[0-9][0-9]-*") if (p / "notebook.md").is_file())
    found = [n for n in folders if wanted in (n, n.split("-", 1)[0], n.split("-", 1)[1])]
    if not found:
        raise SystemExit(f"unknown recipe {number_or_name!r}; the recipes are: {', '.join(folders)}")
    name = found[0]
    steps, seconds = [], 0.0
    if not stamp.is_file() or stamp.stat().st_mtime < (root / "pyproject.toml").stat().st_mtime:
        steps.append(f"make the project venv {stamp.parent} with pip ({_minutes(STEP_SECONDS['venv'])})")
        seconds += STEP_SECONDS["venv"]
    if not (runtime / "CMakeCache.txt").is_file():
        steps.append(f"configure and build the recipe library, build/runtime ({_minutes(STEP_SECONDS['runtime'])}; "
                     "less where the compiler cache has its objects)")
        seconds += STEP_SECONDS["runtime"]
    ready = build / "takeaway-venv" / "ready.json"
    try:
        fresh = json.loads(ready.read_text()).get("key") == inputs_key()
    except (OSError, ValueError, subprocess.CalledProcessError):
        fresh = False
    if not fresh and not os.environ.get("FFI_COOKBOOK_TAKEAWAY_VENV"):  # that one is used as it is
        steps.append(f"make the take-away venv the recipes run in, {build / 'takeaway-venv'} "
                     f"({_minutes(STEP_SECONDS['takeaway-venv'])}, in the background beside the above)")
    if not (build / "html" / "index.html").is_file() or not (build / "doctrees" / "environment.pickle").is_file():
        steps.append(f"build the whole site once, executing every page's notebook ({_minutes(STEP_SECONDS['site'])} "
                     "on 2 cores: no site is built yet; later runs read only the pages whose files changed)")
        seconds += STEP_SECONDS["site"]
    else:
        steps.append("build the site again: only the pages whose files changed (seconds, unless they run notebooks)")
    steps.append(f"run {name}'s part of make test ({_minutes(STEP_SECONDS['recipe'])}): its zip's README when a "
                 "file of it changed, its notebook when the site build finds it changed, the snippets, its tests and "
                 "its page's site tests, the fuzz of its libraries")
    seconds += STEP_SECONDS["recipe"]
    steps.append(f"in all about {_minutes(seconds)[1:]}")
    return name, steps


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.recipe_runs", description=__doc__.split("\n\n")[0])
    parser.add_argument("recipe", nargs="?", help="number or name, e.g. 10 or 10-rmsnorm")
    parser.add_argument("--all", action="store_true", help="every recipe whose zip did not run today (make test)")
    parser.add_argument("--workers", type=int, default=2, help="with --all: recipes run at once")
    parser.add_argument("--timing", action="store_true",
                        help="run every recipe's tests marked timing, one recipe at a time (make test's second pass)")
    parser.add_argument("--junit-dir", type=Path, help="with --timing: where their junit files go")
    parser.add_argument("--name", action="store_true", help="print the recipe's full name and stop")
    parser.add_argument("--plan", action="store_true",
                        help="say what `make recipe` will build for the recipe, and roughly how long (stdlib only)")
    parser.add_argument("--stamp", type=Path, default=Path(".venv/.installed"),
                        help="with --plan: the file make touches when the project venv is installed")
    parser.add_argument("--build", type=Path, default=default_build())
    parser.add_argument("--libraries", action="store_true",
                        help="print `--library PATH` for each library the run of the recipe's zip built "
                             "(what `make recipe` fuzzes)")
    opts = parser.parse_args(argv)

    if opts.timing:
        return run_timing_tests(opts.build.resolve(), opts.junit_dir)
    if opts.all:
        return run_all(opts.build.resolve(), opts.workers)
    if opts.recipe is None:
        parser.error("name a recipe, or --all, or --timing")
    if opts.plan:
        name, steps = plan(opts.recipe, opts.build.resolve(), opts.stamp)
        print(f"make recipe R={opts.recipe} ({name}) will:")
        print("\n".join(f"  - {step}" for step in steps), flush=True)
        return 0
    name = recipe_name(opts.recipe)
    if opts.name:
        print(name)
        return 0
    if opts.libraries:
        built = sorted((opts.build.resolve() / RUNS / name / "build").glob("lib*.so"))
        print(" ".join(f"--library {shlex.quote(str(p))}" for p in built))
        return 0
    from tools import takeaway
    from tools.takeaway_venv import venv_at

    build = opts.build.resolve()
    key = inputs_key()  # one run of tools/requirements.py, for the record and the pipeline
    data = takeaway.zip_bytes(takeaway.recipe_files(name), name)
    record = record_for(name, data, build, key)
    if record is not None:
        print(f"{name}: this zip already ran (its record, {build / RUNS / name}.json, is of today's zip and venv)")
    else:
        print(f"{name}: unzip, run the README in {build / RUNS / name} ...", flush=True)
        record = run_from_zip(name, data, build, venv_at(build / "takeaway-venv"), key)
    readme = record["readme"]
    print(f"{name}: README {readme['seconds']:.0f} s, {'passed' if readme['ok'] else 'FAILED'}")
    if not readme["ok"]:
        print(readme["output"], file=sys.stderr)
    return 0 if readme["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
