"""Build the first kernel (first-kernel/add_one.cc) with the command its page shows.

Used by a hidden cell of the home page and of Get started: the page's own ``bash`` block that
calls ``tvm-ffi-config`` is the build command, run as it is in a fresh folder under the build
root (``<build>/cmake/first-kernel/<page>``), so the output on the page comes from the command
the page shows. The compile is recorded in that folder's ``compile_commands.json``, which the
snippet checker reads as proof that the file shown on the page was compiled.
tests/site/test_get_started.py runs the same commands (all of them) in a fresh venv.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "first-kernel" / "add_one.cc"
_BASH = re.compile(r"^```bash\n(.*?)^```", re.M | re.S)
#: Get started's commands end where its section on the cookbook's own code begins.
END = "\n## Get the cookbook's code"


def shown_blocks(page: Path) -> list[list[str]]:
    """The command lines of each plain ``bash`` block of a page up to :data:`END`, in order."""
    blocks = []
    for block in _BASH.findall(Path(page).read_text().split(END)[0]):
        blocks.append([line.strip() for line in block.splitlines()
                       if line.strip() and not line.strip().startswith("#")])
    return blocks


def shown_commands(page: Path) -> list[str]:
    """All command lines of :func:`shown_blocks`, in order."""
    return [line for block in shown_blocks(page) for line in block]


def build_command(page: Path) -> str:
    """The page's one command that compiles add_one.cc."""
    found = [c for c in shown_commands(page) if "tvm-ffi-config" in c and "add_one.cc" in c]
    if len(found) != 1:
        raise ValueError(f"{page}: expected one build command with tvm-ffi-config, found {found}")
    return found[0]


def build(page: str | Path) -> Path:
    """Run the page's build command in a fresh folder holding add_one.cc; that folder."""
    page = Path(page).resolve()
    root = HERE.parents[1]
    build_root = Path(os.environ.get("FFI_COOKBOOK_BUILD_DIR") or root / "_build").resolve()
    work = build_root / "cmake" / "first-kernel" / page.stem
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    (work / SOURCE.name).symlink_to(SOURCE)  # compile_commands.json then names the file shown
    command = build_command(page)
    # The reader's shell has the venv's bin folder (tvm-ffi-config) on PATH.
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    argv = subprocess.run(["bash", "-c", "printf '%s\\0' " + command], cwd=work, env=env, check=True,
                          capture_output=True, text=True).stdout.split("\0")[:-1]
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", command], cwd=work, env=env,
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{command}\nexited with {done.returncode}:\n{done.stderr}")
    output = argv[argv.index("-o") + 1]
    (work / "compile_commands.json").write_text(json.dumps(
        [{"directory": str(work), "file": SOURCE.name, "arguments": argv, "output": output}], indent=1))
    return work
