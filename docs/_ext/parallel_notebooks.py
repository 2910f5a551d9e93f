"""Execute the notebooks of the pages to be read a few at a time, before Sphinx reads them.

myst-nb executes a notebook while Sphinx reads its page, one page after the other.
Just before the reading starts, this extension finds the notebooks that myst-nb
would execute (no up-to-date entry in its cache), executes them in worker
processes with the cookbook's one notebook runner (tools/execute_notebook.py: the
same notebook object, in the page's folder, with myst-nb's timeout) and puts the
results in myst-nb's cache, where myst-nb then finds them.

- A notebook that measures time tags the cells that do (``:tags: [measures-time]``):
  those cells run after everything else, one notebook at a time, with nothing else
  running. The cells before a notebook's first timed cell run beside the other work
  (a recipe's build, mostly), then its kernel waits, paused (tools/execute_notebook.py).
- Notebooks in one folder run one after the other in the same worker: they build
  into the same folder.
- A recipe's notebook (``cookbook/<name>/notebook``) runs from the recipe's zip, in
  the take-away venv, followed by its README's commands in the same folder
  (tools/recipe_runs.py, the recipe pipeline): the page shows what a reader who
  downloaded the recipe gets, and the zip test asserts on that run's record instead
  of building and testing the zip again. The READMEs of those that run alone run
  after the last of them, a few at a time.
- A failure here costs only time: the notebook is not cached, so myst-nb executes
  it again (in the checkout) and reports the error as usual; a recipe's zip test then
  finds no record and takes the zip through the pipeline itself. A README that fails
  leaves a record that says so, with its output, and the zip test fails with it.

The seconds each notebook took, and how it ran, go to ``<build>/timing/notebooks.jsonl``
for ``tools/bench_loop.py``.
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
#: folder -> [(docname, path, notebook, read_fmt, recipe name or None)], read by the forked workers
_WORK: dict[str, list] = {}
_TAKEAWAY: dict = {}  # "build" and "venv" of the recipe runs, read by the forked workers


def runs_alone(notebook) -> bool:
    """Whether ``notebook`` has a cell that measures time."""
    from tools.execute_notebook import first_timed_cell

    return first_timed_cell(notebook) is not None


def _execute_one(path: str, notebook, recipe: str | None, timeout: int, allow_errors: bool,
                 readme: bool = True, pause=None) -> float:
    """Execute one notebook (a recipe's from its zip), its outputs put into ``notebook``; seconds
    (``pause``: called before the first cell that measures time; its seconds are not counted)."""
    if recipe is None:
        from tools.execute_notebook import execute

        return execute(notebook, Path(path).parent, timeout, allow_errors, record_timing=False, pause=pause)
    import nbformat
    from ffi_cookbook import takeaway
    from tools import recipe_runs

    data = takeaway.zip_bytes(takeaway.recipe_files(recipe), recipe)
    executed, record = recipe_runs.run_from_zip(recipe, data, _TAKEAWAY["build"], _TAKEAWAY["venv"], timeout,
                                                _TAKEAWAY["key"], readme=readme, pause=pause)
    take_outputs(notebook, nbformat.read(executed, as_version=4))
    return record["seconds"]


def take_outputs(page, executed) -> None:
    """Put the executed zip notebook's outputs into the page's notebook, cell by cell.

    The zip's code cells must be the page's, word for word: what the page shows is what ran."""
    shown = [c for c in page.cells if c.cell_type == "code"]
    ran = [c for c in executed.cells if c.cell_type == "code"]
    if [c.source for c in shown] != [c.source for c in ran]:
        raise ValueError("the zip notebook's code cells are not the page's")
    for cell, done in zip(shown, ran):
        cell.outputs = done.outputs
        cell.execution_count = done.execution_count


def _execute_folder(folder: str, timeout: int, allow_errors: bool, readme: bool = True) -> list[tuple]:
    """In a worker: execute the folder's notebooks in order; (docname, notebook, seconds, error,
    (began, ended)), the last the wall-clock span of the whole run (a recipe's README included)."""
    return [_execute_entry(entry, timeout, allow_errors, readme) for entry in _WORK[folder]]


def _execute_entry(entry: tuple, timeout: int, allow_errors: bool, readme: bool = True, pause=None) -> tuple:
    docname, path, notebook, _, recipe = entry
    began = time.time()
    try:
        seconds, error = _execute_one(path, notebook, recipe, timeout, allow_errors, readme, pause), None
    except Exception as err:  # noqa: BLE001  (myst-nb executes it again and reports it)
        seconds, error = 0.0, f"{type(err).__name__}: {str(err)[-3000:]}"
    return docname, notebook, seconds, error, (began, time.time())


def _paused(entry: tuple, timeout: int, allow_errors: bool):
    """A notebook that measures time, in a thread of the build (tools.execute_notebook.Paused):
    its cells before the first timed one run beside the other work, the rest when let go (a
    recipe's kernel runs in the take-away venv, a page's is started by this process); its
    result is :func:`_execute_entry`'s."""
    from tools.execute_notebook import Paused

    return Paused(lambda pause: _execute_entry(entry, timeout, allow_errors, readme=False, pause=pause))


@functools.cache
def _recipe_names() -> frozenset[str]:
    from ffi_cookbook import catalog

    return frozenset(r.name for r in catalog.recipes())


def recipe_of(docname: str) -> str | None:
    """``cookbook/<name>/notebook`` -> ``<name>`` for a recipe of the cookbook, else None."""
    parts = docname.split("/")
    if len(parts) == 3 and parts[0] == "cookbook" and parts[2] == "notebook" and parts[1] in _recipe_names():
        return parts[1]
    return None


def _to_execute(app, env, docnames) -> tuple[dict, list]:
    """Notebooks myst-nb would execute: by folder, those that run beside others; in order, the
    entries of those that run alone."""
    from jupyter_cache import get_cache
    from myst_nb.core.read import create_nb_reader

    nb_config = env.mystnb_config
    if nb_config.execution_mode != "cache" or nb_config.kernel_rgx_aliases:
        return {}, set(), []
    cache = get_cache(nb_config.execution_cache_path)
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
        if nb_config.metadata_key in notebook.metadata:
            continue  # per-notebook execution settings: leave it to myst-nb
        try:
            cache.match_cache_notebook(notebook)
            continue  # cached and up to date
        except KeyError:
            pass
        entry = (docname, path, notebook, reader.read_fmt, recipe_of(docname))
        if runs_alone(notebook):
            alone.append(entry)
        else:
            work.setdefault(str(Path(path).parent), []).append(entry)
    return work, alone


def _before_read(app, env, docnames) -> None:
    work, alone = _to_execute(app, env, docnames)
    env.parallel_notebooks_started = time.time()
    env.parallel_notebooks_ran = set()
    if not work and not alone:
        return
    from tools.execute_notebook import Paused

    nb_config = env.mystnb_config
    timeout, allow_errors = nb_config.execution_timeout, nb_config.execution_allow_errors
    _WORK.clear()
    _WORK.update(work)
    if any(e[-1] for items in [*work.values(), alone] for e in items):
        from tools.takeaway_venv import inputs_key, venv_at

        _TAKEAWAY["build"] = build_dir(app)
        logger.info("the recipes' notebooks run from their zips: making or checking the take-away venv")
        try:
            _TAKEAWAY["venv"] = venv_at(_TAKEAWAY["build"] / "takeaway-venv")
            _TAKEAWAY["key"] = inputs_key()
        except Exception as err:  # noqa: BLE001  (no venv, no take-away run: the tests will say why)
            logger.info(f"no take-away venv ({type(err).__name__}: {str(err)[-2000:]}); "
                        "the recipes' notebooks run in the checkout instead")
            for items in [*work.values(), alone]:
                items[:] = [(*e[:-1], None) for e in items]
    log = []
    # A notebook that measures time runs its first cells now (see _paused); the rest, all alone.
    paused = {e[0]: _paused(e, timeout, allow_errors) for e in alone}
    if work or paused:
        workers = min(app.config.notebook_workers, len(work) + len(paused))
        logger.info(f"executing {sum(map(len, work.values()))} notebooks and the first cells of {len(paused)} "
                    f"in {workers} processes")
        # Longest folders first (most notebooks), after the notebooks that start early, so the workers
        # finish together.
        # A recipe's starts at once (it runs from its zip, in a folder of its own). A page builds
        # into its folder: it starts after the other notebooks there, and a second page that
        # measures time in the same folder runs whole, alone (it starts when it is let go).
        early, after, claimed = [], {}, set()
        for entry in alone:
            folder = str(Path(entry[1]).parent)
            if entry[-1]:
                early.append(paused[entry[0]])
            elif folder not in claimed:
                claimed.add(folder)
                (after.setdefault(folder, []) if folder in work else early).append(paused[entry[0]])
        jobs, caching = queue.SimpleQueue(), threading.Lock()
        for job in [*early, *sorted(work, key=lambda f: -len(work[f]))]:
            jobs.put(job)

        def take_jobs(pool) -> None:
            while True:
                try:
                    job = jobs.get_nowait()
                except queue.Empty:
                    return
                if isinstance(job, Paused):
                    job.start()
                else:
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
    ran_alone = []
    if alone:
        _phase(app, "site-alone", "begin")
    for entry in alone:  # with nothing else running; the recipes' READMEs after the last one
        logger.info(f"executing {entry[0]} alone")
        results = [paused[entry[0]].finish()]
        _cache_results(env, [entry], results, "alone", log)
        ran_alone += [entry[-1] for _, _, _, error, _ in results if not error and entry[-1]]
    if ran_alone:
        _readmes(ran_alone, app.config.notebook_workers, log)
    if alone:
        _phase(app, "site-alone", "end")
    _WORK.clear()
    _TAKEAWAY.clear()
    env.parallel_notebooks_ran = {e["doc"] for e in log}
    _append_log(app, log)


def _readmes(names: list[str], workers: int, log: list) -> None:
    """The README runs of the recipes whose notebooks ran alone, ``workers`` at a time: like every
    README run of the site build, their pytest leaves out the tests marked timing."""
    from concurrent.futures import ThreadPoolExecutor

    from tools import recipe_runs

    logger.info(f"running the READMEs of {', '.join(names)}")
    with ThreadPoolExecutor(max(1, workers)) as pool:
        futures = {name: pool.submit(recipe_runs.add_readme, name, _TAKEAWAY["build"], _TAKEAWAY["venv"])
                   for name in names}
        for name, future in futures.items():
            try:
                seconds = future.result()["readme"]["seconds"]
            except Exception as err:  # noqa: BLE001  (no record: the zip test runs the recipe itself)
                logger.info(f"{name}: its README run failed here ({type(err).__name__}: {str(err)[-2000:]})")
                continue
            log.append({"doc": f"cookbook/{name}/README", "seconds": seconds, "how": "readme"})


def _cache_results(env, entries: list, results: list, how: str, log: list) -> None:
    """Put each executed notebook in myst-nb's cache, where myst-nb finds it; log its seconds."""
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    cache = get_cache(env.mystnb_config.execution_cache_path)
    read_fmt = {entry[0]: entry[3] for entry in entries}
    for docname, notebook, seconds, error, (began, ended) in results:
        path = str(env.doc2path(docname))
        if error:  # myst-nb executes it again and reports the error
            logger.info(f"{docname}: failed here ({error}); myst-nb will execute it")
            # in the timing log too, which the bench table's notes show (sphinx -q hides the above)
            log.append({"doc": docname, "seconds": round(seconds, 2), "how": "failed", "error": error[-1500:]})
            continue
        record = (cache.add_nb_to_project(path, read_data=read_fmt[docname]) if read_fmt[docname]
                  else cache.add_nb_to_project(path))
        cache.cache_notebook_bundle(CacheBundleIn(notebook, record.uri, data={"execution_seconds": seconds}),
                                    check_validity=False, overwrite=True)
        # began/ended: seconds after the first notebook started, to see how the workers were kept busy
        start = env.parallel_notebooks_started
        log.append({"doc": docname, "seconds": round(seconds, 2), "how": how,
                    "began": round(began - start, 1), "ended": round(ended - start, 1)})


def _after_read(app, env) -> None:
    """Log the notebooks myst-nb executed itself: one that failed here (executed again to report
    its error) or that has execution settings of its own."""
    started = getattr(env, "parallel_notebooks_started", None)
    if started is None:
        return
    log = []
    for docname, meta in sorted(env.nb_metadata.items()):
        data = meta.get("exec_data") or {}
        if (docname not in env.parallel_notebooks_ran and data.get("mtime", 0) >= started
                and data.get("runtime") is not None):
            log.append({"doc": docname, "seconds": round(data["runtime"], 2), "how": "myst-nb"})
    _append_log(app, log)
    del env.parallel_notebooks_started, env.parallel_notebooks_ran


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
    app.connect("env-updated", _after_read)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
