"""The report: a table per page on stdout, the summary line, and report.json for the site."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections import Counter
from functools import lru_cache
from pathlib import Path

from .collect import Block
from .evidence import file_kind
from .markers import Problem


def _run(*cmd: str) -> subprocess.CompletedProcess | None:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None


@lru_cache(maxsize=None)
def tool_version(tool: str) -> str:
    """``g++ 12.2``, ``nvcc 13.0``, ``cmake 3.25`` for a tool as a build called it ('' if unknown),
    named after the real file (``c++`` links to ``x86_64-linux-gnu-g++-12``: ``g++``)."""
    found = shutil.which(tool) if tool else None
    if not found:
        return ""
    name = Path(os.path.realpath(found)).name
    name = re.sub(r"-\d+(\.\d+)*$", "", re.sub(r"^\w+-\w+-\w+-(?=[a-z])", "", name))
    if (done := _run(found, "--version")) is None:
        return name
    text = done.stdout
    release = re.search(r"release (\d+\.\d+)", text)  # nvcc
    numbers = re.findall(r"\b(\d+)\.(\d+)(?:\.\d+)?\b", text.splitlines()[0] if text else "")
    version = release.group(1) if release else (".".join(numbers[-1]) if numbers else "")
    return f"{name} {version}".strip()


def how(block: Block) -> str:
    """What the check did to a block, the word the site's labels are written from."""
    if block.status != "verified":
        return "pseudo" if block.status == "exempt" else "unverified"
    if block.kind == "include":  # a file: compiled, configured, built or tested; never run here
        return file_kind(block.include) if block.include else "tested"
    if block.kind == "cell" or block.verifier in ("python", "pycon"):
        return "executed"
    if block.verifier in ("c", "cpp", "cuda"):
        return "compiled-and-ran" if block.run else "compiled"
    return {"cmake": "configured", "shell": "ran" if block.run else "linked"}.get(block.verifier, "unverified")


def write(blocks: list[Block], problems: list[Problem], out: Path, seconds: float, root: Path) -> str:
    counts = Counter(b.status for b in blocks)
    line = (f"snippets: {counts['verified']} verified, {counts['unverified'] + len(problems)} unverified, "
            f"{counts['exempt']} exempt")
    pages: dict[str, list[dict]] = {}
    for b in blocks:
        if b.status != "text":
            pages.setdefault(b.page, []).append({
                # Doxygen examples have no page line: show the header line they come from.
                "line": b.line or b.where.partition("(from ")[2].rstrip(")"), "language": b.language or "(none)",
                "kind": b.kind, "status": b.status, "detail": b.detail, "where": b.where,
                # for the labels on the site (docs/_ext/snippet_labels.py)
                "index": b.index, "page_line": b.line, "verifier": b.verifier, "how": how(b),
                "tool": tool_version(b.tool),
                "file": "" if not b.include else b.include.relative_to(root).as_posix()
                if b.include.is_relative_to(root) else b.include.name,  # never a path of this machine
                "output_compared": b.expected_output is not None or b.language == "pycon"})
    for page, rows in pages.items():
        print(f"\n{page}\n  {'line':>5}  {'language':<9} {'kind':<8} {'status':<10} how")
        for r in rows:
            print(f"  {str(r['line']):>5}  {r['language']:<9} {r['kind']:<8} {r['status']:<10} {r['detail']}")
    failures = [f"{b.where}: {b.language or '(no language)'} {b.kind} block: {b.detail}"
                for b in blocks if b.status == "unverified"] + [f"{p.where}: {p.message}" for p in problems]
    if failures:
        print("\nUnverified:\n" + "\n".join(f"  {f}" for f in failures))
    gpu = _run("nvidia-smi", "-L") if shutil.which("nvidia-smi") else None
    report = {"summary": line, "seconds": round(seconds, 1),
              "gpu_visible": bool(gpu and gpu.returncode == 0 and "GPU" in gpu.stdout),
              "pages": pages,
              "exempt": [{"page": b.page, "line": b.line, "detail": b.detail} for b in blocks if b.status == "exempt"],
              "problems": [{"where": p.where, "message": p.message} for p in problems]}
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.json").write_text(json.dumps(report, indent=1))
    print(f"\n(checked in {seconds:.1f} s; report in {out / 'report.json'})\n{line}")
    return line
