"""Each recipe folder, copied alone into an empty directory, builds and passes with its README commands."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RECIPES = sorted(p.parent for p in (ROOT / "cookbook").glob("*/README.md"))


def readme_commands(readme: Path) -> str:
    """The first ```bash block of a recipe README: exactly what a reader runs."""
    match = re.search(r"```bash\n(.*?)```", readme.read_text(), re.S)
    assert match, f"{readme}: no ```bash block with build commands"
    return match.group(1)


@pytest.mark.parametrize("folder", RECIPES, ids=lambda p: p.name)
def test_recipe_builds_standalone(folder, tmp_path):
    copy = tmp_path / folder.name
    shutil.copytree(folder, copy, ignore=shutil.ignore_patterns("build", "__pycache__", ".ipynb_checkpoints"))
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", readme_commands(folder / "README.md")],
                          cwd=copy, env=env, capture_output=True, text=True)
    assert done.returncode == 0, f"stdout:\n{done.stdout[-4000:]}\nstderr:\n{done.stderr[-4000:]}"
