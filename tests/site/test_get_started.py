"""Get started's first kernel, followed as a reader follows it: the commands the page prints, in an
empty folder, with a fresh venv that holds packages from PyPI alone (nothing of this checkout).

The commands are read from the page (docs/_code/first_kernel.py, which the page's own hidden cell
uses to build at site build time); the two files the page asks the reader to save are the file it
shows (``add_one.cc``) and the code cell it shows (``run.py``). The snippet checker links the
page's shell blocks to this test through :func:`shown_commands`.
"""

from __future__ import annotations

import html
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "get-started.md"
HOME = ROOT / "docs" / "index.md"
#: What ``python run.py`` prints; the page shows the same lines from its executed cell.
EXPECTED = ["torch: tensor([1., 2., 3., 4.])", "numpy: [1. 2. 3. 4.]", "ValueError: y: length 3, expected 4",
            "TypeError: x: expected a contiguous 1-D float32 CPU tensor"]


def _first_kernel():
    spec = importlib.util.spec_from_file_location("first_kernel", ROOT / "docs" / "_code" / "first_kernel.py")
    module = importlib.util.module_from_spec(spec)
    writes, sys.dont_write_bytecode = sys.dont_write_bytecode, True  # nothing generated in docs/
    try:
        spec.loader.exec_module(module)
    finally:
        sys.dont_write_bytecode = writes
    return module


first_kernel = _first_kernel()


def shown_commands() -> dict[str, list[str]]:
    """Page -> the command lines it prints that this test runs (read by tools/snippets)."""
    return {str(page.relative_to(ROOT)): first_kernel.shown_commands(page) for page in (PAGE, HOME)}


def shown_run_py() -> str:
    """The code cell the page asks the reader to save as run.py."""
    text = PAGE.read_text().split(first_kernel.END)[0]
    after = text.split("Save this as `run.py`", 1)[1]
    cells = re.findall(r"^```\{code-cell\} ipython3\n(.*?)^```", after, re.M | re.S)
    shown = [c for c in cells if not c.startswith(":tags: [remove-cell]")]
    return shown[0]


def shown_source() -> Path:
    """The file the page shows as add_one.cc (its literalinclude)."""
    found = re.findall(r"^```\{literalinclude\} (\S+)", PAGE.read_text().split(first_kernel.END)[0], re.M)
    assert len(found) == 1, found
    return PAGE.parent / found[0]


def test_page_shows_five_commands_from_pypi_alone():
    blocks = first_kernel.shown_blocks(PAGE)
    commands = [c for block in blocks for c in block]
    assert len(commands) == 5, commands
    assert commands[0] == "mkdir first-kernel && cd first-kernel"
    assert commands[1].startswith("python3 -m venv .venv")
    install = commands[2].split()
    assert install[:2] == ["pip", "install"], install
    assert sorted(install[2:]) == ["apache-tvm-ffi", "numpy", "torch==2.13.0"]  # PyPI names, no path, no git
    assert commands[-1] == "python run.py"
    assert first_kernel.build_command(PAGE) == commands[3]
    # The home page builds the same file with the same command.
    assert first_kernel.build_command(HOME) == commands[3]
    assert shown_source().resolve() == first_kernel.SOURCE
    assert "tvm_ffi" in shown_run_py() and "ffi_cookbook" not in shown_run_py()


def test_kernel_is_tvm_ffi_alone_and_short():
    source = first_kernel.SOURCE.read_text()
    assert len(source.splitlines()) <= 25
    includes = re.findall(r"#include <([^>]+)>", source)
    assert includes and all(i.startswith("tvm/ffi/") for i in includes), includes
    assert "TVM_FFI_DLL_EXPORT_TYPED_FUNC(add_one," in source


def _built_output() -> str | None:
    """The output the built page shows under run.py's cell, when the site has been built."""
    build = Path(os.environ.get("FFI_COOKBOOK_BUILD_DIR") or ROOT / "_build")
    page = build / "html" / "get-started.html"
    if not page.is_file():
        return None
    outputs = re.findall(r'<div class="cell_output docutils container">\s*<div class="output stream highlight-myst-ansi'
                         r' notranslate"><div class="highlight"><pre><span></span>(.*?)</pre>', page.read_text(), re.S)
    texts = [html.unescape(re.sub(r"<[^>]+>", "", o)) for o in outputs]
    return next((t for t in texts if t.startswith("torch:")), None)


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++, as the page says")
def test_first_kernel_in_a_fresh_venv(tmp_path):
    saved = tmp_path / "saved"
    saved.mkdir()
    shutil.copy(shown_source(), saved / "add_one.cc")
    (saved / "run.py").write_text(shown_run_py())
    steps = first_kernel.shown_blocks(PAGE)
    assert len(steps) == 3, steps  # environment; build; run. The reader saves a file before each of the last two.
    script = "\n".join([*steps[0], f'cp "{saved}/add_one.cc" .', *steps[1], f'cp "{saved}/run.py" .', *steps[2],
                        'python -c "import importlib.util as u; print(\'cookbook:\', u.find_spec(\'ffi_cookbook\'))"'])
    home = tmp_path / "reader"
    home.mkdir()
    # A reader's shell: no venv active, nothing of this checkout on PATH or sys.path.
    drop = {"PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "PYTHONPYCACHEPREFIX", "PYTHONDONTWRITEBYTECODE"}
    env = {k: v for k, v in os.environ.items() if k not in drop and not k.startswith(("FFI_COOKBOOK", "TVM_FFI"))}
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep)
                                  if not Path(p).resolve().is_relative_to(ROOT))
    env["HOME"] = str(home)
    for cache in ("PIP_CACHE_DIR", "XDG_CACHE_HOME"):  # pip's cache stays the machine's (no download twice)
        if cache in os.environ:
            env[cache] = os.environ[cache]
    env.setdefault("PIP_CACHE_DIR", str(Path.home() / ".cache" / "pip"))
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    lines = done.stdout.strip().splitlines()
    assert lines[-1] == "cookbook: None"  # the venv holds PyPI packages alone
    printed = lines[-1 - len(EXPECTED):-1]
    assert printed == EXPECTED, done.stdout[-2000:]
    built = _built_output()
    if built is not None:
        assert built.strip().splitlines() == EXPECTED
