"""The Makefile's entry points: what a reader types first."""

import re
import subprocess


def test_plain_make_builds_the_site(root):
    """Rules for files (the compiler facts) come before `all`; without .DEFAULT_GOAL, a plain
    `make` made the first of them and stopped."""
    database = subprocess.run(["make", "-pnq", "--no-print-directory"], cwd=root, capture_output=True,
                              text=True).stdout
    assert re.findall(r"^\.DEFAULT_GOAL := (\S+)$", database, re.M) == ["all"]


def test_make_help_names_the_ci_steps(root):
    listed = subprocess.run(["make", "-s", "help"], cwd=root, capture_output=True, text=True, check=True).stdout
    for target in ("docs", "test", "test-sanitize", "recipe", "gpu-check"):
        assert re.search(rf"^  make {target} +\S", listed, re.M), target
