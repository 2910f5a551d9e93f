"""Execute the notebooks of the pages to be read, a few at a time, before Sphinx reads them.

This is the site's one notebook executor; myst-nb only renders. Just before the reading starts,
this extension finds the notebooks without an up-to-date entry in myst-nb's cache, executes them
in worker processes with the cookbook's notebook runner (tools/execute_notebook.py, with myst-nb's
timeout) and puts the results in that cache, where myst-nb finds them. A notebook that fails stops
the build with the cell's error: myst-nb never executes one itself.

- A page's notebook runs in the page's folder with the project's Python.
- A recipe's notebook runs where a reader runs it: in the folder its zip was unzipped to and its
  README run by `make test` (``<build>/recipe-runs/<name>``, tools/recipe_runs.py), with the
  take-away venv's kernel (tools/takeaway_venv.py). The build its README made is the one the
  notebook's build cell finds, so a recipe is compiled once.

- A notebook that measures time tags the cells that do (``:tags: [measures-time]``):
  those cells run after everything else, one notebook at a time, with nothing else
  running. The cells before a notebook's first timed cell run beside the other work
  (a recipe's build, mostly), then its kernel waits, paused (tools/execute_notebook.py).
- Notebooks in one folder run one after the other in the same worker: they build
  into the same folder (``<folder>/build``).

A recipe's zip and README are not run here: `make test` does, and this build stops when a
recipe's zip has not run.
The seconds each notebook took go to ``<build>/timing/notebooks.jsonl`` for ``tools/bench_loop.py``.
"""

from __future__ import annotations

import functools
import json
import multiprocessing
import os
import queue
import threading
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

from sphinx.util import logging

logger = logging.getLogger(__name__)
#: folder -> [(docname, path, notebook, read_fmt)], read by the forked workers
_WORK: dict[str, list] = {}


def runs_alone(notebook) -> bool:
    """Whether ``notebook`` has a cell that measures time."""
    from tools.execute_notebook import first_timed_cell

    return first_timed_cell(notebook) is not None


def where(app, path: Path, venv_key=None) -> tuple[Path, str, dict | None]:
    """The folder, the kernel and the kernel's environment (None: this process's) of the page at
    ``path``: a recipe's in its zip's run, with the take-away venv; any other in its own folder.
    ``venv_key`` returns the take-away venv's key (default: tools.takeaway_venv.inputs_key, a
    subprocess a call; the build passes one cached for all its pages)."""
    from tools import takeaway
    from tools.recipe_runs import folder_of_run
    from tools.takeaway_venv import KERNEL, Venv, inputs_key

    if path.parent.parent.name != "cookbook":
        return path.parent, "python3", None
    build, name = build_dir(app), path.parent.name
    venv = Venv(build / "takeaway-venv", 0.0)
    folder = venv.python.is_file() and folder_of_run(name, takeaway.recipe_files(name), build,
                                                     (venv_key or inputs_key)())
    if not folder:  # never run, failed, or a run of other files: its build is not of this page
        from sphinx.errors import ExtensionError

        raise ExtensionError(f"{name}: its zip as it is now has not run in the take-away venv, "
                             f"or its README failed there: run `make recipe-zips` first")
    env = venv.env()
    env.pop("PYTEST_ADDOPTS")
    env["JUPYTER_PATH"] = str(venv.path / "share" / "jupyter")
    return folder, KERNEL, env


def expected_seconds(folder: Path, notebooks: int) -> float:
    """About how long a folder's notebooks take, to start the long ones first: for a recipe's
    zip's folder, the seconds its README took there (a notebook builds and calls what its README
    built and tested: the two go together, 15's and 22's the longest); else 10 s a notebook."""
    from tools.recipe_runs import recorded_seconds

    seconds = recorded_seconds(folder.parent, folder.name)
    return 10.0 * notebooks if seconds is None else seconds


def _execute_folder(folder: str, timeout: int, allow_errors: bool) -> list[tuple]:
    """In a worker: execute the folder's notebooks in order; (docname, notebook, seconds, error,
    (began, ended)) each."""
    return [_execute_entry(entry, timeout, allow_errors) for entry in _WORK[folder]]


def _execute_entry(entry: tuple, timeout: int, allow_errors: bool, pause=None) -> tuple:
    from tools.execute_notebook import execute

    docname, path, notebook, _, (folder, kernel, env) = entry
    began = time.time()
    try:
        if env is not None:  # the kernel's spec is found on the JUPYTER_PATH of this process
            os.environ["JUPYTER_PATH"] = env["JUPYTER_PATH"]
        seconds = execute(notebook, folder, timeout, allow_errors, record_timing=False, pause=pause,
                          kernel=kernel, env=env)
        error = None
    except Exception as err:  # noqa: BLE001  (reported by _cache_results, which stops the build)
        seconds, error = 0.0, f"{type(err).__name__}: {str(err)[-6000:]}"
    return docname, notebook, seconds, error, (began, time.time())


def _paused(entry: tuple, timeout: int, allow_errors: bool):
    """A notebook that measures time, in a thread of the build (tools.execute_notebook.Paused):
    its cells before the first timed one run beside the other work, the rest when let go."""
    from tools.execute_notebook import Paused

    return Paused(lambda pause: _execute_entry(entry, timeout, allow_errors, pause=pause))


def _to_execute(app, env, docnames) -> tuple[dict, list]:
    """Notebooks not in myst-nb's cache: by folder, those that run beside others; in order, the
    entries of those that run alone."""
    from jupyter_cache import get_cache
    from myst_nb.core.read import create_nb_reader

    nb_config = env.mystnb_config
    if nb_config.execution_mode != "cache":  # execution off (say -D nb_execution_mode=off): none
        return {}, []
    from tools.takeaway_venv import inputs_key

    cache = get_cache(nb_config.execution_cache_path)
    venv_key = functools.cache(inputs_key)  # computed once, when a recipe's notebook is to run
    work: dict[str, list] = {}
    alone = []
    for docname in sorted(docnames):
        path = str(env.doc2path(docname))
        if any(Path(path).match(p) for p in nb_config.execution_excludepatterns):
            continue
        text = Path(path).read_text()
        reader = create_nb_reader(path, env.myst_config, nb_config, text)
        if reader is None:
            continue
        notebook = reader.read(text)
        try:
            cache.match_cache_notebook(notebook)
            continue  # cached and up to date
        except KeyError:
            pass
        entry = (docname, path, notebook, reader.read_fmt, where(app, Path(path), venv_key))
        if runs_alone(notebook):
            alone.append(entry)
        else:
            work.setdefault(str(entry[4][0]), []).append(entry)
    return work, alone


def _before_read(app, env, docnames) -> None:
    work, alone = _to_execute(app, env, docnames)
    env.parallel_notebooks_started = time.time()
    if not work and not alone:
        return
    nb_config = env.mystnb_config
    timeout, allow_errors = nb_config.execution_timeout, nb_config.execution_allow_errors
    _WORK.clear()
    _WORK.update(work)
    log: list = []
    # A notebook that measures time runs its first cells now (see _paused); the rest, all alone.
    paused = {e[0]: _paused(e, timeout, allow_errors) for e in alone}
    workers = min(app.config.notebook_workers, len(work) + len(paused))
    logger.info(f"executing {sum(map(len, work.values()))} notebooks and the first cells of {len(paused)} "
                f"in {workers} processes")
    # Longest folders first (expected_seconds), after the notebooks that start early, so the workers
    # finish together. A page that measures time starts after the other notebooks of its folder
    # (they build into the same build/); a second one there runs whole, alone.
    early, after, claimed = [], {}, set()
    for entry in alone:
        folder = str(entry[4][0])
        if folder not in claimed:
            claimed.add(folder)
            (after.setdefault(folder, []) if folder in work else early).append(paused[entry[0]])
    jobs, caching = queue.SimpleQueue(), threading.Lock()
    for job in [*early, *sorted(work, key=lambda f: -expected_seconds(Path(f), len(work[f])))]:
        jobs.put(job)

    def take_jobs(pool) -> None:
        while True:
            try:
                job = jobs.get_nowait()
            except queue.Empty:
                return
            if not isinstance(job, str):
                job.start()
                continue
            results = pool.submit(_execute_folder, job, timeout, allow_errors).result()
            with caching:
                _cache_results(env, work[job], results, "parallel", log)
            for page in after.get(job, []):
                page.start()

    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
        pool.submit(int).result()  # its processes forked now, before any thread of ours starts
        with ThreadPoolExecutor(workers) as takers:
            for done in [takers.submit(take_jobs, pool) for _ in range(workers)]:
                done.result()
    if alone:
        _phase(app, "site-alone", "begin")
    for entry in alone:  # with nothing else running
        logger.info(f"executing {entry[0]} alone")
        _cache_results(env, [entry], [paused[entry[0]].finish()], "alone", log)
    if alone:
        _phase(app, "site-alone", "end")
    _WORK.clear()
    _append_log(app, log)
    failed = [e for e in log if e["how"] == "failed"]
    if failed:
        from sphinx.errors import ExtensionError

        raise ExtensionError("notebooks failed:\n" + "\n\n".join(f"{e['doc']}: {e['error']}" for e in failed))


def _cache_results(env, entries: list, results: list, how: str, log: list) -> None:
    """Put each executed notebook in myst-nb's cache, where myst-nb finds it; log its seconds."""
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    cache = get_cache(env.mystnb_config.execution_cache_path)
    read_fmt = {entry[0]: entry[3] for entry in entries}
    for docname, notebook, seconds, error, (began, ended) in results:
        path = str(env.doc2path(docname))
        if error:
            logger.info(f"{docname}: failed ({error[-300:]})")
            log.append({"doc": docname, "seconds": round(seconds, 2), "how": "failed", "error": error})
            continue
        record = (cache.add_nb_to_project(path, read_data=read_fmt[docname]) if read_fmt[docname]
                  else cache.add_nb_to_project(path))
        cache.cache_notebook_bundle(CacheBundleIn(notebook, record.uri, data={"execution_seconds": seconds}),
                                    check_validity=False, overwrite=True)
        # began/ended: seconds after the first notebook started, to see how the workers were kept busy
        start = env.parallel_notebooks_started
        log.append({"doc": docname, "seconds": round(seconds, 2), "how": how,
                    "began": round(began - start, 1), "ended": round(ended - start, 1)})


def build_dir(app) -> Path:
    return Path(os.environ.get("FFI_COOKBOOK_BUILD_DIR") or Path(app.outdir).parent).resolve()


def _phase(app, name: str, what: str) -> None:
    """A line of <build>/timing/phases.log, as the Makefile writes them (tools/bench_loop.py
    shows how long the notebooks that run alone took, a core idle meanwhile)."""
    timing = build_dir(app) / "timing"
    timing.mkdir(parents=True, exist_ok=True)
    with (timing / "phases.log").open("a") as out:
        out.write(f"{name} {what} {time.time():.9f}\n")


def _append_log(app, entries: list[dict]) -> None:
    if not entries:
        return
    build = build_dir(app)
    (build / "timing").mkdir(parents=True, exist_ok=True)
    with (build / "timing" / "notebooks.jsonl").open("a") as out:
        out.writelines(json.dumps(e) + "\n" for e in entries)


def plain_tracebacks(build: Path) -> None:
    """Kernels started by this build print tracebacks in IPython's Plain mode.

    The default (Context) mode prints "Could not get source, probably due dynamically evaluated
    source code." for every frame without Python source, such as tvm_ffi's compiled call frame;
    Plain mode prints that frame's file and line, and the C++ frame and message as before. The
    profile lives under the build folder (IPython also keeps its history there), so a reader's
    own IPython settings and the checkout stay untouched.
    """
    profile = build / "ipython" / "profile_default"
    profile.mkdir(parents=True, exist_ok=True)
    (profile / "ipython_kernel_config.py").write_text('c.InteractiveShell.xmode = "Plain"\n')
    os.environ["IPYTHONDIR"] = str(build / "ipython")  # inherited by every kernel and worker


def setup(app):
    plain_tracebacks(Path(app.outdir).parent)
    app.add_config_value("notebook_workers", min(4, os.cpu_count() or 1), "", int)
    # after notebook_sources (builder-inited) has dropped the cache entries of changed folders
    app.connect("env-before-read-docs", _before_read)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
