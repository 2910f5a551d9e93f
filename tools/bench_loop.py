"""Where the time of `make docs` + `make test` goes.

    python3 tools/bench_loop.py report [--build _build]
        The breakdown of the runs logged under <build>/timing: each step of the
        Makefile (it writes phases.log), the notebooks the site build executed
        (notebooks.jsonl, written by docs/_ext/parallel_notebooks.py), the test files
        (pytest's junit files) and the compiler cache's hit rate; then one row per
        recipe: the seconds of its build, notebook and README tests in the recipe
        pipeline's run (the records under <build>/recipe-runs, tools/recipe_runs.py),
        of its zip tests (tests/product/test_recipe_zips.py) and of its tests in the sanitizer
        run (<build>/timing/sanitize-junit.xml). .ci/run prints it at the end;
        remove <build>/timing to start a new log.

    python3 tools/bench_loop.py loop [--out _build/bench]
        `make bench-loop`: clones HEAD into <out>/clone and runs `make test` there
        twice, cold (nothing built, no venv, an empty compiler cache in <out>/ccache) and warm (one
        recipe source touched), and prints both breakdowns side by side.

Standard library only: it runs before the venv exists.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STEPS = [  # (name in phases.log, what the table calls it)
    ("venv", "venv (pip installs)"),
    ("runtime", "runtime (CMake)"),
    ("recipe-zips", "recipe zips: README commands in the take-away venv"),
    ("tests", "tests, in parallel"),
    ("timing-tests", "tests marked timing, alone"),
    ("doxygen", "doxygen"),
    ("site", "site: Sphinx + notebooks"),
    ("site-alone", "  of which the cells that measure time, alone"),
    ("snippets", "snippets"),
    ("site-report", "site again (snippet report)"),
    ("site-tests", "site tests (tests/site)"),
    ("sanitize", "sanitizer run (make test-sanitize)"),
    ("recipe", "make recipe"),
]
BESIDE = {"site-alone"}  # part of another step: not in the total
TOUCHED = "cookbook/01-add-one/add_one_cpu.cc"  # the source the warm run changes
TOP_FILES = 12  # test files listed by name; the rest are summed


def phase_seconds(log: Path) -> dict[str, float]:
    """Seconds per step, summed over every begin/end pair in the log."""
    total: dict[str, float] = defaultdict(float)
    started: dict[str, float] = {}
    if log.is_file():
        for line in log.read_text().splitlines():
            name, what, stamp = line.rsplit(" ", 2)
            if what == "begin":
                started[name] = float(stamp)
            elif name in started:
                total[name] += float(stamp) - started.pop(name)
    return dict(total)


def test_file_seconds(timing: Path) -> dict[str, float]:
    """Seconds per test file (setup, call and teardown), from pytest's junit files."""
    seconds: dict[str, float] = defaultdict(float)
    for xml in sorted(timing.glob("pytest-*.xml")):
        for case in ET.parse(xml).iter("testcase"):
            seconds[case.get("file") or case.get("classname", "?")] += float(case.get("time", 0))
    return dict(seconds)


def test_counts(timing: Path) -> dict[str, int]:
    """passed / failed / skipped over pytest's junit files (errors count as failed)."""
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    for xml in sorted(timing.glob("pytest-*.xml")):
        for case in ET.parse(xml).iter("testcase"):
            tags = {child.tag for child in case}
            counts["failed" if tags & {"failure", "error"} else "skipped" if "skipped" in tags else "passed"] += 1
    return counts


def notebook_runs(timing: Path) -> list[dict]:
    path = timing / "notebooks.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.is_file() else []


def ccache_stats(build: Path) -> str:
    """The compiler cache's hits and misses in this run, from its result log (CCACHE_STATSLOG,
    under <build>/timing: the cache itself outlives the run, its counters count every run)."""
    log = build / "timing" / "ccache-stats.log"
    if not log.is_file():
        return "compiler cache: none used"
    results = [line.strip() for line in log.read_text().splitlines() if line and not line.startswith("#")]
    direct, preprocessed = results.count("direct_cache_hit"), results.count("preprocessed_cache_hit")
    calls = direct + preprocessed + results.count("cache_miss")
    rate = f"{100 * (direct + preprocessed) / calls:.0f}%" if calls else "-"
    return (f"compiler cache: {direct + preprocessed} hits of {calls} compilations ({rate}; "
            f"{direct} direct, {preprocessed} preprocessed)")


def breakdown(build: Path) -> tuple[list[tuple[str, float]], list[str]]:
    """Rows (label, seconds) and notes for one build folder's timing log."""
    timing = build / "timing"
    steps = phase_seconds(timing / "phases.log")
    rows = [(label, steps.get(name, 0.0)) for name, label in STEPS]
    rows.append(("total of the steps", sum(v for k, v in steps.items() if k not in BESIDE)))
    runs = notebook_runs(timing)
    for how in ("parallel", "alone"):
        done = [r for r in runs if r["how"] == how]
        if done:
            label = {"parallel": "executed in parallel", "alone": "that measure time (timed cells alone)"}[how]
            rows.append((f"  notebooks {label}: {len(done)}, seconds each added up",
                         sum(r["seconds"] for r in done)))
    files = sorted(test_file_seconds(timing).items(), key=lambda kv: -kv[1])
    for name, seconds in files[:TOP_FILES]:
        rows.append((f"  {name}", seconds))
    if len(files) > TOP_FILES:
        rows.append((f"  {len(files) - TOP_FILES} other test files", sum(s for _, s in files[TOP_FILES:])))
    # A notebook that failed (it stopped the site build): the last line of its error.
    failed = [f"notebook failed: {r['doc']}: "
              f"{r['error'].strip().splitlines()[-1] if r['error'].strip() else '?'}"
              for r in runs if r["how"] == "failed"]
    return rows, [ccache_stats(build), *failed]


RECIPE_COLUMNS = ("README", "notebook", "zip test", "sanitizer")


def recipe_seconds(build: Path) -> dict[str, dict[str, float | None]]:
    """Per recipe: its zip's README run (cmake and pytest, tools/recipe_runs.py), its notebook in
    the site build, its zip tests in `make test` and its tests in the sanitizer run."""
    runs = build / "recipe-runs"
    table: dict[str, dict[str, float | None]] = {}
    for path in sorted(runs.glob("*.json")) if runs.is_dir() else []:
        record = json.loads(path.read_text())
        table[path.stem] = {"README": (record.get("readme") or {}).get("seconds")}
    for run in notebook_runs(build / "timing"):
        parts = run["doc"].split("/")
        if len(parts) == 3 and parts[0] == "cookbook" and parts[1] in table and run["how"] != "failed":
            row = table[parts[1]]
            row["notebook"] = (row.get("notebook") or 0.0) + run["seconds"]
    junit = build / "timing"
    for xml in [*sorted(junit.glob("pytest-*.xml")), junit / "sanitize-junit.xml"]:
        if not xml.is_file():
            continue
        for case in ET.parse(xml).iter("testcase"):
            where = f"{case.get('file') or ''} {case.get('classname') or ''} {case.get('name') or ''}"
            if xml.name == "sanitize-junit.xml":
                column = "sanitizer"
            elif "test_recipe_zips" in where:
                column = "zip test"
            else:
                continue
            for name in table:
                if name in where:
                    row = table[name]
                    row[column] = (row.get(column) or 0.0) + float(case.get("time", 0))
    return table


def print_recipes(build: Path) -> None:
    table = recipe_seconds(build)
    if not table:
        return
    width = max(len(name) for name in table) + 2
    print(f"\n{'recipe (seconds)':<{width}}" + "".join(f"{c:>11}" for c in RECIPE_COLUMNS))
    for name, row in table.items():
        cells = [row.get(c) for c in RECIPE_COLUMNS]
        print(f"{name:<{width}}" + "".join(f"{c:>11.1f}" if c is not None else f"{'-':>11}" for c in cells))
    totals = [sum(row.get(c) or 0.0 for row in table.values()) for c in RECIPE_COLUMNS]
    print(f"{'added up':<{width}}" + "".join(f"{c:>11.1f}" for c in totals))
    print("(README: its zip's README commands, cmake and pytest, in make test; notebook: its pages in the"
          " site build, in the folder where its zip ran; zip test: tests/product/test_recipe_zips.py's tests of the recipe;"
          " sanitizer: its tests in make test-sanitize)")


def print_table(columns: dict[str, Path]) -> None:
    """One column of seconds per build folder; rows by label, in first-seen order."""
    tables = {title: breakdown(build) for title, build in columns.items()}
    labels: list[str] = []
    for rows, _ in tables.values():
        labels += [label for label, _ in rows if label not in labels]
    width = max(len(label) for label in labels) + 2
    print(f"{'step':<{width}}" + "".join(f"{title:>12}" for title in tables))
    for label in labels:
        cells = [dict(rows).get(label) for rows, _ in tables.values()]
        print(f"{label:<{width}}" + "".join(f"{c:>11.1f}s" if c is not None else f"{'-':>12}" for c in cells))
    print("(indented rows are parts of the step above them: notebooks of the site step, test files of the"
          " test steps, counted per test, so files run in parallel add up to more than the step; a recipe's"
          " test file ran in the recipe zips step, in the pipeline's run of its zip, and"
          " tests/product/test_recipe_zips.py copies its junit file)")
    for title, (_, notes) in tables.items():
        for note in notes:
            print(f"{title}: {note}" if len(tables) > 1 else note)


def make(clone: Path, log: Path, *targets: str) -> float:
    """Run make in the clone with a clean make environment; return its wall time."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MAKE", "MFLAGS", "CCACHE", "CMAKE_"))
           and k not in {"VIRTUAL_ENV", "FFI_COOKBOOK_BUILD_DIR", "PYTHONPYCACHEPREFIX"}}
    start = time.perf_counter()
    with log.open("w") as out:
        # make puts its command-line variables in the environment: name the clone's own
        done = subprocess.run(["make", "BUILD=_build", "VENV=.venv", f"COMPILER_CACHE={clone.parent / 'ccache'}",
                               *targets], cwd=clone, env=env,
                              stdout=out, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        sys.exit(f"make {' '.join(targets)} failed in {clone}; its output is in {log}")
    return time.perf_counter() - start


def loop(out: Path) -> None:
    out = out.resolve()
    clone = out / "clone"
    for folder in (clone, out / "ccache"):  # cold: the compiler cache too
        if folder.exists():
            shutil.rmtree(folder)
    out.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "clone", "-q", "--no-local", str(ROOT), str(clone)], check=True)
    load = os.getloadavg()[0]
    print(f"cold run in {clone} (load average before: {load:.1f}) ...", flush=True)
    build = clone / "_build"
    columns = {}
    for title in ("cold", "warm"):
        if title == "cold":
            seconds = make(clone, out / "cold-docs.log", "docs") + make(clone, out / "cold-test.log", "test")
        else:
            (clone / TOUCHED).touch()
            print(f"warm run ({TOUCHED} touched) ...", flush=True)
            seconds = make(clone, out / "warm-test.log", "test")
        view = out / title  # the table reads <folder>/timing
        shutil.rmtree(view, ignore_errors=True)
        shutil.move(str(build / "timing"), str(view / "timing"))
        columns[title] = (view, seconds)
    print_table({title: view for title, (view, _) in columns.items()})
    print("wall time: " + ", ".join(f"{title} {s:.0f} s" for title, (_, s) in columns.items())
          + f" (cold: make docs, then make test; warm: make test); {os.cpu_count()} CPUs,"
          f" load average now {os.getloadavg()[0]:.1f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    report = sub.add_parser("report")
    report.add_argument("--build", type=Path, default=ROOT / "_build")
    run = sub.add_parser("loop")
    run.add_argument("--out", type=Path, default=ROOT / "_build" / "bench")
    args = parser.parse_args(argv)
    if args.command == "report":
        print_table({"seconds": args.build.resolve()})
        print_recipes(args.build.resolve())
        counts = test_counts(args.build.resolve() / "timing")
        if sum(counts.values()):  # both pytest passes together, as the last line of the log
            print(f"tests: {counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped")
    else:
        loop(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
