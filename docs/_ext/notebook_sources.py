"""Re-execute a notebook when the files beside it change, not only its cells.

myst-nb caches executed notebooks by the text of their cells. A recipe's cells
rarely change when its kernel does, so a cached page would keep showing the
output of the old kernel. This extension hashes the source files in each
notebook's folder (build outputs excluded); when the hash changes, it drops the
notebook's cache record and marks the page outdated, so the page is executed
again. The settings the build gives its kernels (the IPython profile that
parallel_notebooks writes) are part of every hash: a change to them, such as
the traceback mode, shows on every page only if every page runs again. Hashes
are kept beside myst-nb's cache. A recipe's ``include`` link to the helper headers is
followed, so a header change runs the pages that compile it again.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

SOURCE_SUFFIXES = {".c", ".cc", ".cpp", ".cu", ".h", ".cuh", ".py", ".txt", ".toml", ".cmake", ".in", ".ipynb"}
SKIP_DIRS = {"build", "_build", "__pycache__", ".ipynb_checkpoints", "harness"}


def folder_digest(folder: Path) -> str:
    digest = hashlib.sha256()
    # top-down, so pruning `dirs` takes effect; links followed (a recipe's include/)
    for top, dirs, files in os.walk(folder, followlinks=True):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        for name in sorted(files):
            path = Path(top) / name
            if path.suffix in SOURCE_SUFFIXES:
                digest.update(str(path.relative_to(folder)).encode())
                digest.update(path.read_bytes())
    return digest.hexdigest()


def kernel_settings_digest() -> str:
    """Hash of the kernels' IPython profile (IPYTHONDIR, set by parallel_notebooks), '' without one."""
    home = os.environ.get("IPYTHONDIR")
    profile = Path(home) / "profile_default" if home else None
    if profile is None or not profile.is_dir():
        return ""
    return hashlib.sha256(b"".join(p.name.encode() + p.read_bytes()
                                   for p in sorted(profile.glob("*_config.py")))).hexdigest()


def _notebooks(srcdir: Path):
    """Text notebooks under the source folder (symlinked folders followed)."""
    for top, dirs, files in os.walk(srcdir, followlinks=True):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS]
        for name in files:
            path = Path(top) / name
            if name.endswith(".md") and "kernelspec:" in path.read_text()[:600]:
                yield path


def _drop_stale(app) -> None:
    from jupyter_cache import get_cache

    cache_dir = Path(app.config.nb_execution_cache_path)
    stamp = cache_dir / "source-digests.json"
    old = json.loads(stamp.read_text()) if stamp.is_file() else {}
    settings = kernel_settings_digest()
    notebooks = list(_notebooks(Path(app.srcdir)))
    new = {str(nb): f"{folder_digest(nb.parent)} {settings}" for nb in notebooks}
    stale = {uri for uri, digest in new.items() if old.get(uri) != digest}
    if stale and cache_dir.is_dir():
        cache = get_cache(cache_dir)
        for record in cache.list_cache_records():
            if record.uri in stale:
                cache.remove_cache(record.pk)
    app.env.notebook_sources_stale = {app.env.path2doc(uri) for uri in stale} - {None}
    cache_dir.mkdir(parents=True, exist_ok=True)
    stamp.write_text(json.dumps(new, indent=1))


def _outdated(app, env, added, changed, removed):
    return sorted(getattr(env, "notebook_sources_stale", set()))


def setup(app):
    app.connect("builder-inited", _drop_stale)
    app.connect("env-get-outdated", _outdated)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
