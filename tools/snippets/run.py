"""Verify Python blocks (executed, doctest output compared) and shell blocks (run or linked)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from .collect import Block
from .compile import wrap
from .context import Context


def verify_python_page(ctx: Context, blocks: list[Block]) -> None:
    """Run a page's python/pycon blocks in order in one fresh interpreter, in the page's folder."""
    payload = [{"language": b.language, "text": b.text, "where": b.where} for b in blocks]
    key = ctx.cached("python", payload)
    if key.exists():
        for b in blocks:
            b.ok("executed (cached)")
        return
    done = subprocess.run([sys.executable, "-m", "tools.snippets.pyrunner"], input=json.dumps(payload),
                          capture_output=True, text=True, cwd=blocks[0].source.resolve().parent,
                          env=dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2])))
    try:
        results = json.loads(done.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        for b in blocks:
            b.fail(f"the Python runner crashed: {done.stderr.strip()[-300:]}")
        return
    for block, result in zip(blocks, results):
        if result["ok"]:
            block.ok("executed" + (", shown output compared" if block.language == "pycon" else ""))
        else:
            block.fail(f"raises: {result['error']}")
    if all(r["ok"] for r in results):
        key.touch()


def _commands(text: str) -> list[str]:
    """Command lines of a shell block: prompts, comments and blank lines dropped."""
    lines = []
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("$ "):
            line = line[2:]
        line = line.split(" #", 1)[0].strip()
        if line and not line.startswith("#"):
            lines.append(line)
    return lines


def linked_commands(ctx: Context) -> dict[str, str]:
    """Command line -> the file that CI or a test runs it from."""
    shell = ctx.config["shell"]
    known: dict[str, str] = {}
    ci = ctx.root / shell["ci_script"]
    if ci.is_file():
        for line in _commands(ci.read_text()):
            known.setdefault(line, shell["ci_script"])
    test = ctx.root / shell["standalone_test"]
    if test.is_file():
        # Use the test's own functions, so the link is the code that runs the commands.
        spec = importlib.util.spec_from_file_location("_standalone_test", test)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        for folder in module.RECIPES:
            readme = folder / "README.md"
            for line in _commands(module.readme_commands(readme)):
                known.setdefault(line, f"{readme.relative_to(ctx.root)} (run by {shell['standalone_test']})")
    # Pages whose commands a test runs as they are shown (tests/site/test_get_started.py: shown_commands).
    for name in shell.get("page_tests", []):
        if not (ctx.root / name).is_file():
            continue
        spec = importlib.util.spec_from_file_location("_page_test", ctx.root / name)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        for page, lines in module.shown_commands().items():
            for line in _commands("\n".join(lines)):
                known.setdefault(line, f"{page} (run by {name})")
    return known


def verify_shell(ctx: Context, block: Block, known: dict[str, str]) -> None:
    if block.run:
        try:
            script = wrap(block, "shell")
        except (FileNotFoundError, ValueError) as err:
            return block.fail(str(err))
        key = ctx.cached("shell", script, block.expected_output)
        if key.exists():
            return block.ok("ran in a scratch folder (cached)")
        with tempfile.TemporaryDirectory(dir=ctx.out / "scratch") as tmp:
            env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
            done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=tmp, env=env,
                                  capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            return block.fail(f"exits with status {done.returncode}: {done.stderr.strip()[-300:]}")
        if block.expected_output is not None and done.stdout.strip() != block.expected_output.strip():
            return block.fail(f"output differs from the page: got {done.stdout.strip()[:200]!r}")
        key.touch()
        return block.ok("ran in a scratch folder")
    commands = _commands(block.text)
    missing = [c for c in commands if c not in known]
    if not commands or missing:
        return block.fail("not run: mark it `:run:` (scratch folder) or use only commands that CI or "
                          f"a test runs; unknown: {missing[0] if missing else '(empty block)'!r}")
    block.ok("same commands as " + ", ".join(sorted({known[c] for c in commands})))
