"""Recipe and page code folders in a checkout hold only their tracked sources.

Builds go out of tree (``tools.cmake_build.build_dir_for``), so after
``make docs`` and the tests a folder such as ``cookbook/10-rmsnorm`` is exactly as
tracked and can be copied at any time. A self-contained copy that builds alone
is the recipe's zip (tests/product/test_recipe_zips.py runs each one).
"""

import subprocess

import pytest


def test_no_generated_files_in_recipe_or_code_folders(root):
    done = subprocess.run(["git", "ls-files", "--others", "--ignored", "--exclude-standard", "--directory",
                           "cookbook", "docs"], cwd=root, capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip("not a git checkout")
    # Python's own bytecode caches are allowed: importing a module writes them.
    generated = [line for line in done.stdout.splitlines() if not line.endswith("__pycache__/")]
    assert not generated, f"generated files inside the source tree (builds belong under _build/): {generated}"
