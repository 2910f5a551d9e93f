"""``python -m tests.sanitize``: the recipe tests and the fuzz against sanitized builds (see __init__)."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from tests.sanitize import FLAGS, REPORT, ROOT, sanitizer_env


def build_all(build: Path) -> None:
    """Configure and build every sanitized library (later cmake_build calls keep the cache)."""
    os.environ["FFI_COOKBOOK_BUILD_DIR"] = str(build)
    from ffi_cookbook.build import cmake_build, cmake_commands

    for cmd in cmake_commands(ROOT / "runtime", build / "runtime", *FLAGS):
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    folders = [p.parent for p in sorted((ROOT / "cookbook").glob("*/CMakeLists.txt"))]
    for folder in folders + [ROOT / "tests" / "probe"]:
        cmake_build(folder, *FLAGS, verbose=False)


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.sanitize")
    parser.add_argument("--build", type=Path, default=ROOT / "_build" / "sanitize")
    parser.add_argument("pytest_args", nargs="*", default=["cookbook", "tests/test_helpers.py",
                                                           "tests/test_fuzz.py"])
    opts = parser.parse_args()
    build = opts.build.resolve()
    build_all(build)
    env = sanitizer_env(build)
    env.setdefault("FFI_COOKBOOK_FUZZ_CASES", "3000")
    log = build / "pytest.log"
    with open(log, "w") as out:
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *opts.pytest_args],
                              cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    text = log.read_text(errors="replace")
    print(text[-6000:])
    reports = sorted({m.group(0) for m in REPORT.finditer(text)})
    if reports:
        print(f"sanitizer reports found ({', '.join(reports)}): see {log}")
        return 1
    print(f"sanitizers: 0 reports (pytest exit status {done.returncode}; log {log})")
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
