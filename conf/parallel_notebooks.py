"""Execute the notebooks of the pages to be read a few at a time, before Sphinx reads them.

myst-nb executes a notebook while Sphinx reads its page, one page after the other.
Just before the reading starts, this extension finds the notebooks that myst-nb
would execute (no up-to-date entry in its cache), executes them in worker
processes the way myst-nb does (the same notebook object, in the page's folder,
with the same timeout) and puts the results in myst-nb's cache, where myst-nb
then finds them.

- A notebook that measures time says so in its front matter
  (``cookbook: {runs_alone: true}``); it is left to myst-nb, which executes it
  afterwards with nothing else running.
- Notebooks in one folder run one after the other in the same worker: they build
  into the same folder.
- A failure here costs only time: the notebook is not cached, so myst-nb executes
  it again and reports the error as usual.

The seconds each notebook took, and how it ran, go to ``<build>/timing/notebooks.jsonl``
for ``tools/bench_loop.py``.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from sphinx.util import logging

logger = logging.getLogger(__name__)
_WORK: dict[str, list] = {}  # folder -> [(docname, path, notebook, read_fmt)], read by the forked workers


def runs_alone(notebook) -> bool:
    return bool(notebook.metadata.get("cookbook", {}).get("runs_alone"))


def _execute_folder(folder: str, timeout: int, allow_errors: bool) -> list[tuple]:
    """In a worker: execute the folder's notebooks in order; (docname, notebook, seconds, error)."""
    from jupyter_cache.executors.utils import single_nb_execution

    done = []
    for docname, path, notebook, _ in _WORK[folder]:
        result = single_nb_execution(notebook, cwd=str(Path(path).parent), timeout=timeout,
                                     allow_errors=allow_errors, meta_override=True)
        error = None if result.err is None else f"{type(result.err).__name__}: {result.err}"
        done.append((docname, notebook, result.time, error))
    return done


def _to_execute(app, env, docnames) -> tuple[dict, set]:
    """Notebooks myst-nb would execute, by folder, and the docnames of those that run alone."""
    from jupyter_cache import get_cache
    from myst_nb.core.read import create_nb_reader

    nb_config = env.mystnb_config
    if nb_config.execution_mode != "cache" or nb_config.kernel_rgx_aliases:
        return {}, set()
    cache = get_cache(nb_config.execution_cache_path)
    work: dict[str, list] = {}
    alone = set()
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
        if runs_alone(notebook):
            alone.add(docname)
        else:
            work.setdefault(str(Path(path).parent), []).append((docname, path, notebook, reader.read_fmt))
    return work, alone


def _before_read(app, env, docnames) -> None:
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    work, alone = _to_execute(app, env, docnames)
    env.parallel_notebooks_alone = alone
    env.parallel_notebooks_started = time.time()
    if not work:
        return
    nb_config = env.mystnb_config
    workers = min(app.config.notebook_workers, len(work))
    logger.info(f"executing {sum(map(len, work.values()))} notebooks in {workers} processes")
    _WORK.clear()
    _WORK.update(work)
    cache = get_cache(nb_config.execution_cache_path)
    read_fmt = {docname: fmt for items in work.values() for docname, _, _, fmt in items}
    log = []
    # Longest folders first (most notebooks), so the workers finish together.
    folders = sorted(work, key=lambda f: -len(work[f]))
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
        futures = [pool.submit(_execute_folder, f, nb_config.execution_timeout,
                               nb_config.execution_allow_errors) for f in folders]
        for future in futures:
            for docname, notebook, seconds, error in future.result():
                path = str(env.doc2path(docname))
                if error:  # myst-nb executes it again and reports the error
                    logger.info(f"{docname}: failed in a worker ({error}); myst-nb will execute it")
                    continue
                record = (cache.add_nb_to_project(path, read_data=read_fmt[docname]) if read_fmt[docname]
                          else cache.add_nb_to_project(path))
                cache.cache_notebook_bundle(CacheBundleIn(notebook, record.uri, data={"execution_seconds": seconds}),
                                            check_validity=False, overwrite=True)
                log.append({"doc": docname, "seconds": round(seconds, 2), "how": "parallel"})
    _WORK.clear()
    _append_log(app, log)


def _after_read(app, env) -> None:
    """Log the notebooks myst-nb executed itself (those that run alone, and any retried)."""
    started = getattr(env, "parallel_notebooks_started", None)
    if started is None:
        return
    log = []
    for docname in sorted(getattr(env, "parallel_notebooks_alone", set())):
        data = env.nb_metadata.get(docname, {}).get("exec_data") or {}
        if data.get("mtime", 0) >= started and data.get("runtime") is not None:
            log.append({"doc": docname, "seconds": round(data["runtime"], 2), "how": "alone"})
    _append_log(app, log)
    del env.parallel_notebooks_started, env.parallel_notebooks_alone


def _append_log(app, entries: list[dict]) -> None:
    if not entries:
        return
    build = Path(os.environ.get("FFI_COOKBOOK_BUILD_DIR") or Path(app.outdir).parent)
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
