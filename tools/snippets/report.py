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
from .evidence import HEADERS, SOURCES
from .markers import Problem


@lru_cache(maxsize=None)
def tool_version(tool: str) -> str:
    """``g++ 12.2``, ``nvcc 13.0``, ``cmake 3.25`` for a tool as a build called it ('' if unknown).
    The name is the real file's (``c++`` is a link to ``x86_64-linux-gnu-g++-12``: ``g++``)."""
    found = shutil.which(tool) if tool else None
    if not found:
        return ""
    name = Path(os.path.realpath(found)).name  # x86_64-linux-gnu-g++-12: drop the target and version
    name = re.sub(r"-\d+(\.\d+)*$", "", re.sub(r"^\w+-\w+-\w+-(?=[a-z])", "", name))
    try:
        text = subprocess.run([found, "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return name
    release = re.search(r"release (\d+\.\d+)", text)  # nvcc: "Cuda compilation tools, release 13.0"
    numbers = re.findall(r"\b(\d+)\.(\d+)(?:\.\d+)?\b", text.splitlines()[0] if text else "")
    version = release.group(1) if release else (".".join(numbers[-1]) if numbers else "")
    return f"{name} {version}".strip()


def gpu_visible() -> bool:
    """Whether the machine that ran the checker has an NVIDIA GPU (``nvidia-smi -L`` lists one)."""
    if not shutil.which("nvidia-smi"):
        return False
    try:
        done = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0 and "GPU" in done.stdout


def how(block: Block) -> str:
    """What the check did to a block, in one word the site's labels are written from:
    executed, compiled, compiled-and-ran, configured, built, tested, linked, ran, pseudo, unverified."""
    if block.status == "exempt":
        return "pseudo"
    if block.status != "verified":
        return "unverified"
    if block.kind == "include":  # a file: compiled, configured, built or tested; never run here
        suffix = block.include.suffix.lower() if block.include else ""
        if suffix in SOURCES or suffix in HEADERS:
            return "compiled"
        if block.include and (block.include.name == "CMakeLists.txt" or suffix == ".cmake"):
            return "configured"
        if block.include and block.include.name == "pyproject.toml":
            return "built"
        return "tested"
    if block.kind == "cell" or block.verifier in ("python", "pycon"):
        return "executed"
    if block.verifier in ("c", "cpp", "cuda"):
        return "compiled-and-ran" if block.run else "compiled"
    if block.verifier == "cmake":
        return "configured"
    if block.verifier == "shell":
        return "ran" if block.run else "linked"
    return "unverified"


def summary(blocks: list[Block], problems: list[Problem]) -> tuple[str, Counter]:
    counts = Counter(b.status for b in blocks)
    unverified = counts["unverified"] + len(problems)
    return (f"snippets: {counts['verified']} verified, {unverified} unverified, "
            f"{counts['exempt']} exempt"), counts


def write(blocks: list[Block], problems: list[Problem], out: Path, seconds: float,
          root: Path | None = None) -> str:
    line, _ = summary(blocks, problems)
    pages: dict[str, list[dict]] = {}
    for b in blocks:
        if b.status == "text":
            continue
        pages.setdefault(b.page, []).append({
            # Doxygen examples have no page line: show the header line they come from.
            "line": b.line or b.where.partition("(from ")[2].rstrip(")"), "language": b.language or "(none)", "kind": b.kind,
            "status": b.status, "detail": b.detail, "where": b.where,
            # For the labels under each block on the site (docs/_ext/snippet_labels.py):
            "index": b.index, "page_line": b.line, "verifier": b.verifier, "how": how(b), "tool": tool_version(b.tool),
            "file": _shown(b.include, root) if b.include else "",
            "output_compared": b.expected_output is not None or b.language == "pycon"})
    for page, rows in pages.items():
        print(f"\n{page}")
        print(f"  {'line':>5}  {'language':<9} {'kind':<8} {'status':<10} how")
        for r in rows:
            print(f"  {str(r['line']):>5}  {r['language']:<9} {r['kind']:<8} {r['status']:<10} {r['detail']}")
    failures = [b for b in blocks if b.status == "unverified"]
    if failures or problems:
        print("\nUnverified:")
        for b in failures:
            print(f"  {b.where}: {b.language or '(no language)'} {b.kind} block: {b.detail}")
        for p in problems:
            print(f"  {p.where}: {p.message}")
    exempt = [{"page": b.page, "line": b.line, "detail": b.detail} for b in blocks if b.status == "exempt"]
    report = {"summary": line, "seconds": round(seconds, 1), "gpu_visible": gpu_visible(),
              "pages": pages, "exempt": exempt,
              "problems": [{"where": p.where, "message": p.message} for p in problems]}
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.json").write_text(json.dumps(report, indent=1))
    print(f"\n(checked in {seconds:.1f} s; report in {out / 'report.json'})")
    print(line)
    return line


def _shown(path: Path, root: Path | None) -> str:
    """A shown file relative to the repository (never an absolute path of this machine)."""
    if root is not None and path.is_relative_to(root):
        return path.relative_to(root).as_posix()
    return path.name
