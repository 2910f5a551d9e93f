"""``python -m tests.fuzz``: the fuzz of every export (``make fuzz``), or replay one case.

    python -m tests.fuzz --cases 100000 --seed 1   # the systematic pass, then 100,000 drawn
    python -m tests.fuzz --cases 0                 # the systematic pass alone
    python -m tests.fuzz --replay LIBRARY EXPORT "ARGUMENTS"
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

from tests.fuzz.run import default_libraries, describe, discover, fuzz, probe_library, systematic
from tests.fuzz.pool import Pool


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz")
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--library", action="append", type=Path, help="fuzz only these libraries")
    parser.add_argument("--export", action="append", help="fuzz only these exports")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--replay", nargs=3, metavar=("LIBRARY", "EXPORT", "ARGUMENTS"))
    opts = parser.parse_args()
    probe = probe_library()
    pool = Pool(probe=str(probe), workers=1 if opts.replay else opts.workers)
    try:
        if opts.replay:
            library, name, specs = opts.replay
            print(pool.call(str(Path(library).resolve()), name, ast.literal_eval(specs)))
            return 0
        libraries = opts.library or default_libraries() + [probe]
        targets = [t for t in discover(libraries, pool) if not opts.export or t.name in opts.export]
        reports = [systematic(targets, pool)]
        if opts.cases > 0:
            reports.append(fuzz(targets, pool, opts.cases, opts.seed))
    finally:
        exits = pool.close()
    failures = [f for report in reports for f in report.failures]
    for failure in failures:
        print(describe(failure), end="\n\n")
    for report in reports:
        print(f"fuzz: {len(targets)} exports in {len(libraries)} libraries; " + report.summary())
    bad_exits = [e for e in exits if e[0] != 0]
    for status, tail in bad_exits:
        print(f"a worker exited with status {status}:\n{tail}")
    return 1 if failures or bad_exits else 0


if __name__ == "__main__":
    sys.exit(main())
