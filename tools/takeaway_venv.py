"""A fresh virtual environment for the take-away tests, as a reader without the cookbook has it.

It is made with ``python -m venv`` from the interpreter behind the project venv and
holds apache-tvm-ffi, torch 2.13.0 (installed first, a CPU wheel, so that the
recipes' ``torch>=`` ranges resolve to it), every recipe's requirements.txt, the tools of
:data:`TOOLS`, and where nvcc is found the NVIDIA wheels the recipes name for their optional
CUDA parts (:func:`nvidia_extras`, as ``make venv`` does). ``ffi_cookbook`` is not installed, and
the test asserts it. Under make it is kept in ``<build>/takeaway-venv`` and made
again when its inputs change (:func:`ensure_venv`). Versions are constrained to the
project's own pins, so pip takes them from its cache, and a requirements.txt range
that excludes a pin fails.
Used by `make test`'s runs of the recipes' zips (tools/recipe_runs.py: each README's
commands), by the site, which executes a recipe's notebook in its zip's folder with this venv's
kernel (docs/_ext/parallel_notebooks.py), and by the tests (the ``takeaway_venv`` fixture in
tests/conftest.py).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TORCH = "torch==2.13.0"
# What a reader runs that no requirements.txt need name: ninja (the generator `make` selects for a
# new build folder), and ipykernel, the kernel the site executes a recipe's notebook in.
TOOLS = ["ninja", "ipykernel"]
#: The Jupyter kernel of this venv (:func:`write_kernelspec`).
KERNEL = "takeaway"


@dataclass
class Venv:
    path: Path
    seconds: float  # wall time of creating it

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"

    def env(self) -> dict[str, str]:
        """The environment a reader's shell has with this venv activated."""
        env = {k: v for k, v in os.environ.items()
               if k not in {"PYTHONPATH", "FFI_COOKBOOK_BUILD_DIR", "FFI_COOKBOOK_LIBRARY", "VIRTUAL_ENV"}}
        env["PATH"] = f"{self.path / 'bin'}{os.pathsep}{env.get('PATH', '')}"
        env["VIRTUAL_ENV"] = str(self.path)
        # Tests that compare timings run in make test's second pass, one recipe at a time
        # (tools/recipe_runs.py --timing sets its own marks); here other tests run beside them
        # on the other worker, and a recipe's README runs its whole file.
        env["PYTEST_ADDOPTS"] = '-m "not timing"'
        return env

    def run(self, cmd, cwd: Path, timeout: int = 1800, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        """Run ``cmd`` (a list, or a bash script) in ``cwd``; fail the test with its output.

        ``env`` adds variables to the reader's environment (a report file for pytest, say)."""
        argv = ["bash", "-euo", "pipefail", "-c", cmd] if isinstance(cmd, str) else [str(c) for c in cmd]
        done = subprocess.run(argv, cwd=cwd, env={**self.env(), **(env or {})}, capture_output=True, text=True,
                              timeout=timeout)
        assert done.returncode == 0, (f"{cmd} in {cwd} failed ({done.returncode})\n"
                                      f"stdout:\n{done.stdout[-5000:]}\nstderr:\n{done.stderr[-5000:]}")
        return done


def project_pins() -> str:
    """The project's pins (pyproject.toml's docs and test extras), one requirement a line."""
    return subprocess.run([sys.executable, str(ROOT / "tools" / "requirements.py"), "docs", "test"],
                          capture_output=True, text=True, check=True).stdout


def constraints(path: Path) -> Path:
    """The project's pins as a pip constraints file."""
    path.write_text(project_pins())
    return path


def nvidia_extras() -> list[str]:
    """The NVIDIA wheels the recipes' requirements.txt files name on a comment line (for an
    optional CUDA part: NVSHMEM, cuBLAS), sorted; a reader with nvcc installs them, and so
    does this venv where nvcc is found. Two pins of one wheel are an error."""
    found = {m.group(0) for p in sorted((ROOT / "cookbook").glob("*/requirements.txt"))
             for line in p.read_text().splitlines() if line.lstrip().startswith("#")
             for m in re.finditer(r"nvidia-[a-z0-9-]+==[\w.]+", line)}
    names = [spec.split("==")[0] for spec in found]
    clashes = sorted(spec for spec in found if names.count(spec.split("==")[0]) > 1)
    if clashes:
        raise ValueError(f"the recipes' requirements.txt files pin one wheel differently: {clashes}")
    return sorted(found)


def requirement_lines() -> list[str]:
    """Every requirement the recipes' requirements.txt files name, once, sorted, without
    comments: what pip installs from them. A new recipe that asks for nothing new leaves it
    as it was, so the venv (and every recipe's run in it) stays today's."""
    lines = set()
    for path in (ROOT / "cookbook").glob("*/requirements.txt"):
        for line in path.read_text().splitlines():
            line = line.split(" #", 1)[0].strip()
            if line and not line.startswith("#"):
                lines.add(line)
    return sorted(lines)


def inputs_key() -> str:
    """What a take-away venv is made from: a venv made from other inputs is made again."""
    digest = hashlib.sha256()
    parts = [sys.base_prefix, TORCH, " ".join(TOOLS), project_pins(), str(bool(shutil.which("nvcc")))]
    parts += [*requirement_lines(), *nvidia_extras()]
    for part in parts:
        digest.update(part.encode() + b"\0")
    return digest.hexdigest()


def ensure_venv(folder: Path) -> Venv:
    """The take-away venv in ``folder``, made (again) unless one from the same inputs is there."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / f"{folder.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        ready = folder / "ready.json"
        key = inputs_key()
        if ready.is_file() and json.loads(ready.read_text()).get("key") == key:
            return Venv(folder, json.loads(ready.read_text())["seconds"])
        shutil.rmtree(folder, ignore_errors=True)
        venv = make_venv(folder)
        ready.write_text(json.dumps({"seconds": venv.seconds, "key": key}))
        return venv


def make_venv(folder: Path) -> Venv:
    start = time.perf_counter()
    base_python = Path(sys.base_prefix) / "bin" / f"python{sys.version_info.major}.{sys.version_info.minor}"
    subprocess.run([str(base_python), "-m", "venv", str(folder)], check=True, capture_output=True)
    venv = Venv(folder, 0.0)
    # --no-compile: Python compiles a module to bytecode when it is first imported; pip would
    # compile every module of every package (torch's thousands) ahead, mostly never imported.
    pip = [venv.python, "-m", "pip", "install", "-q", "--no-compile"]
    venv.run(pip + [TORCH], cwd=folder)
    requirements = [f"-r{p}" for p in sorted((ROOT / "cookbook").glob("*/requirements.txt"))]
    venv.run(pip + ["-c", constraints(folder / "constraints.txt"), *requirements, *TOOLS],
             cwd=folder)
    extras = nvidia_extras()
    if extras and shutil.which("nvcc"):  # a reader with nvcc installs a recipe's CUDA extras
        venv.run(pip + extras, cwd=folder)
    write_kernelspec(venv)
    venv.seconds = time.perf_counter() - start
    return venv


def write_kernelspec(venv: Venv) -> Path:
    """A Jupyter kernel running ``venv``'s Python, named :data:`KERNEL`, in the venv's own
    share/jupyter (put that folder on ``JUPYTER_PATH`` to use it). Its path is absolute:
    jupyter_client would swap a bare ``python`` for the interpreter that starts the kernel."""
    spec = venv.path / "share" / "jupyter" / "kernels" / KERNEL / "kernel.json"
    spec.parent.mkdir(parents=True, exist_ok=True)
    spec.write_text(json.dumps({"argv": [str(venv.python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                                "display_name": "take-away venv", "language": "python"}, indent=1) + "\n")
    return spec


def venv_at(folder: Path) -> Venv:
    """The take-away venv in ``folder`` (:func:`ensure_venv`), or the one
    ``$FFI_COOKBOOK_TAKEAWAY_VENV`` names (a developer's shortcut, used as it is)."""
    reuse = os.environ.get("FFI_COOKBOOK_TAKEAWAY_VENV")
    if reuse:
        return Venv(Path(reuse), 0.0)
    return ensure_venv(Path(folder).resolve())


def pid_file(folder: Path) -> Path:
    """Where a background maker of the venv in ``folder`` leaves its process id."""
    return folder.parent / f"{folder.name}.pid"


def _is_maker(pid: int) -> bool:
    """Whether process ``pid`` is alive and is this module making a venv (not a reused pid)."""
    try:
        return b"tools.takeaway_venv" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def _group_running(group: int) -> bool:
    """Whether a process of process group ``group`` still runs (a zombie waiting for its
    parent to read its status does not)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # gone meanwhile
        if int(fields[2]) == group and fields[0] not in "ZX":
            return True
    return False


def background(folder: Path) -> Venv:
    """:func:`venv_at` as `make` starts it in the background: in a process group of its own
    (pip's children with it), its id in :func:`pid_file` while it runs, so that
    :func:`stop` (`make clean`) can end the whole group before removing the folder."""
    try:
        os.setpgid(0, 0)
    except PermissionError:  # already a session leader (started with setsid): a group of its own
        pass
    path = pid_file(folder)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(f"{os.getpid()}\n")
    tmp.replace(path)
    try:
        return venv_at(folder)
    finally:
        if path.is_file() and path.read_text().strip() == str(os.getpid()):
            path.unlink()


def stop(folder: Path, wait: float = 30.0) -> int | None:
    """End the background maker of the venv in ``folder`` and its children, and wait until
    they are gone (SIGTERM, then SIGKILL after ``wait`` seconds). Returns its pid, or None
    when none was running (a pid file left by a killed maker is removed)."""
    path = pid_file(folder)
    try:
        pid = int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    stopped = None
    if _is_maker(pid):
        stopped = pid
        for sig, seconds in ((signal.SIGTERM, wait), (signal.SIGKILL, 10.0)):
            try:
                os.killpg(pid, sig)
            except ProcessLookupError:
                break
            deadline = time.monotonic() + seconds
            while time.monotonic() < deadline:
                if not _group_running(pid):
                    break
                time.sleep(0.1)
            else:
                continue
            break
    path.unlink(missing_ok=True)
    return stopped


def main(argv: list[str] | None = None) -> int:
    """``python -m tools.takeaway_venv [--background | --stop] FOLDER``: make the venv
    (:func:`ensure_venv`), unless it is up to date.

    `make html` starts it with ``--background`` while the runtime builds; the site build then
    waits for it (the lock in :func:`ensure_venv`) before it runs the recipes. `make clean`
    runs ``--stop`` first: it ends a maker still running (:func:`stop`) before the folder goes."""
    argv = sys.argv[1:] if argv is None else argv
    mode = argv[0] if argv and argv[0] in ("--background", "--stop") else None
    folders = argv[1:] if mode else argv
    if len(folders) != 1:
        print("usage: python -m tools.takeaway_venv [--background | --stop] FOLDER", file=sys.stderr)
        return 2
    folder = Path(folders[0]).resolve()
    if mode == "--stop":
        pid = stop(folder)
        if pid is not None:
            print(f"stopped the take-away venv that was being made in the background (pid {pid})")
        return 0
    venv = background(folder) if mode == "--background" else venv_at(folder)
    print(f"take-away venv {venv.path}: made in {venv.seconds:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
