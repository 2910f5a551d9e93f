"""The report: a table per page on stdout, the summary line, and report.json for the site."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from .collect import Block
from .markers import Problem


def summary(blocks: list[Block], problems: list[Problem]) -> tuple[str, Counter]:
    counts = Counter(b.status for b in blocks)
    unverified = counts["unverified"] + len(problems)
    return (f"snippets: {counts['verified']} verified, {unverified} unverified, "
            f"{counts['exempt']} exempt"), counts


def write(blocks: list[Block], problems: list[Problem], out: Path, seconds: float) -> str:
    line, _ = summary(blocks, problems)
    pages: dict[str, list[dict]] = {}
    for b in blocks:
        if b.status == "text":
            continue
        pages.setdefault(b.page, []).append({
            # Doxygen examples have no page line: show the header line they come from.
            "line": b.line or b.where.partition("(from ")[2].rstrip(")"), "language": b.language or "(none)", "kind": b.kind,
            "status": b.status, "detail": b.detail, "where": b.where})
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
    report = {"summary": line, "seconds": round(seconds, 1), "pages": pages, "exempt": exempt,
              "problems": [{"where": p.where, "message": p.message} for p in problems]}
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.json").write_text(json.dumps(report, indent=1))
    print(f"\n(checked in {seconds:.1f} s; report in {out / 'report.json'})")
    print(line)
    return line
