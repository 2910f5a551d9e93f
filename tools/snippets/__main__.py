"""python -m tools.snippets [--root R] [--srcdir D] [--doctrees T] [--out O]: verify every code block."""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from . import report
from .collect import Block, collect
from .compile import verify_cmake, verify_compiled
from .context import Context
from .evidence import Evidence
from .markers import lint
from .run import linked_commands, verify_python_page, verify_shell


def verify(ctx: Context, blocks: list[Block], executed: dict) -> None:
    languages = ctx.config["languages"]
    compiled: list[tuple[Block, str]] = []
    python_pages: dict[str, list[Block]] = {}
    evidence = Evidence(ctx.root)
    shell: list[Block] = []
    for block in blocks:
        verifier = languages.get(block.language)
        block.verifier = verifier or ""
        if not block.pseudo and block.kind != "include" and verifier in ("c", "cpp", "cuda", "cmake"):
            block.tool = "cmake" if verifier == "cmake" else ctx.config["compile"][verifier][0]
        if block.pseudo:
            block.status, block.detail = "exempt", f"pseudo-code: {block.pseudo}"
        elif verifier == "text":
            block.status = "text"
        elif block.kind == "cell":
            data = executed.get(block.page) or {}
            if data.get("succeeded"):
                block.ok(f"notebook cell, executed by myst-nb ({data.get('method')})")
            else:
                block.fail(f"the notebook did not execute successfully: {data.get('error') or 'not executed'}")
        elif block.kind == "include":
            evidence.verify(block)
        elif verifier is None:
            block.fail(f"no verifier for language {block.language or '(none)'}: label output as `text`")
        elif block.kind == "doxygen" and verifier in ("cpp", "cuda"):
            block.harness = block.harness or ctx.config["doxygen"]["harness"]
            compiled.append((block, verifier))
        elif verifier in ("c", "cpp", "cuda"):
            compiled.append((block, verifier))
        elif verifier == "cmake":
            verify_cmake(ctx, block)
        elif verifier in ("python", "pycon"):
            python_pages.setdefault(block.page, []).append(block)
        elif verifier == "shell":
            shell.append(block)
    known_commands = linked_commands(ctx) if shell else {}
    # The shell blocks run in scratch folders beside the compiles (each one process on one core,
    # most of them short): one after the other they left a core idle.
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        runs = [pool.submit(verify_shell, ctx, block, known_commands) for block in shell]
        verify_compiled(ctx, compiled)
        for run in runs:
            run.result()
    for page_blocks in python_pages.values():
        verify_python_page(ctx, page_blocks)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.snippets", description=__doc__)
    parser.add_argument("--root", type=Path, default=Path.cwd())
    parser.add_argument("--srcdir", type=Path, default=None, help="the Sphinx source folder (root/docs)")
    parser.add_argument("--doctrees", type=Path, default=None, help="root/_build/doctrees")
    parser.add_argument("--out", type=Path, default=None, help="root/_build/snippets")
    parser.add_argument("--config", type=Path, default=None, help="root/conf/snippets.toml")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    start = time.perf_counter()
    ctx = Context.create(root, args.out or root / "_build" / "snippets",
                         args.config or Path(__file__).resolve().parents[2] / "conf" / "snippets.toml")
    blocks, executed = collect(args.doctrees or root / "_build" / "doctrees", root)
    verify(ctx, blocks, executed)
    problems = lint(root, args.srcdir or root / "docs", ctx.config.get("markers", {}).get("exclude", []))
    line = report.write(blocks, problems, ctx.out, time.perf_counter() - start, ctx.root)
    return 0 if " 0 unverified" in line else 1


if __name__ == "__main__":
    sys.exit(main())
