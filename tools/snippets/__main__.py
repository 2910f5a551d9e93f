"""python -m tools.snippets [--root R] [--doctrees T] [--out O]: verify every code block of the built site."""

from __future__ import annotations

import argparse
import os
import sys
import time
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from . import report
from .collect import Block, collect
from .evidence import Evidence
from .markers import lint
from .verify import Context, linked_commands, verify_cmake, verify_compiled, verify_python_page, verify_shell


def verify(ctx: Context, blocks: list[Block], executed: dict) -> None:
    compiled, python_pages, shell = [], {}, []
    evidence = Evidence(ctx.root)
    for block in blocks:
        verifier = block.verifier = ctx.config["languages"].get(block.language) or ""
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
        elif not verifier:
            block.fail(f"no verifier for language {block.language or '(none)'}: label output as `text`")
        elif verifier in ("c", "cpp", "cuda"):
            if block.kind == "doxygen" and verifier != "c":
                block.harness = block.harness or ctx.config["doxygen"]["harness"]
            compiled.append((block, verifier))
        elif verifier == "cmake":
            verify_cmake(ctx, block)
        elif verifier in ("python", "pycon"):
            python_pages.setdefault(block.page, []).append(block)
        elif verifier == "shell":
            shell.append(block)
    known = linked_commands(ctx) if shell else {}
    # Shell blocks (one short process each) run beside the compiles, so no core sits idle.
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        runs = [pool.submit(verify_shell, ctx, block, known) for block in shell]
        verify_compiled(ctx, compiled)
        for run in runs:
            run.result()
    for page_blocks in python_pages.values():
        verify_python_page(ctx, page_blocks)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.snippets", description=__doc__)
    parser.add_argument("--root", type=Path, default=Path.cwd())
    parser.add_argument("--doctrees", type=Path, help="root/_build/doctrees")
    parser.add_argument("--out", type=Path, help="root/_build/snippets")
    args = parser.parse_args(argv)
    root, start = args.root.resolve(), time.perf_counter()
    config = tomllib.loads((Path(__file__).resolve().parents[2] / "conf" / "snippets.toml").read_text())
    ctx = Context(root, (args.out or root / "_build" / "snippets").resolve(), config)
    blocks, executed = collect(args.doctrees or root / "_build" / "doctrees", root)
    verify(ctx, blocks, executed)
    problems = lint(root, root / "docs", config.get("markers", {}).get("exclude", []))
    line = report.write(blocks, problems, ctx.out, time.perf_counter() - start, root)
    return 0 if " 0 unverified" in line else 1


if __name__ == "__main__":
    sys.exit(main())
