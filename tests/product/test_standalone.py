"""Recipe and page code folders in a checkout hold their tracked sources and, at most, a build/.

A folder builds into its own ``build/`` (``tools.cmake_build.build_dir_for``, a recipe's README),
which git ignores; nothing else a build, a test or a notebook writes lands beside the sources, so
``git status`` stays empty and the folder as tracked is what a reader copies. A self-contained
copy that builds alone is the recipe's zip (tests/product/test_recipe_zips.py runs each one).
"""

import re
import subprocess

import pytest

#: What may appear, ignored, in a folder of cookbook/ or docs/: its CMake build, Python's caches.
ALLOWED = re.compile(r"(^|/)(build|__pycache__)/$")


def test_no_generated_files_in_recipe_or_code_folders(root):
    done = subprocess.run(["git", "ls-files", "--others", "--ignored", "--exclude-standard", "--directory",
                           "cookbook", "docs"], cwd=root, capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip("not a git checkout")
    generated = [line for line in done.stdout.splitlines() if not ALLOWED.search(line)]
    assert not generated, f"generated files beside the sources (a build belongs in the folder's build/): {generated}"


def test_the_rule_can_fail():
    assert ALLOWED.search("cookbook/02-tensor-and-view/build/")
    assert not ALLOWED.search("cookbook/02-tensor-and-view/view_of_temporary.cc")
    assert not ALLOWED.search("cookbook/02-tensor-and-view/builds/")
