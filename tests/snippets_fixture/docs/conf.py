# Fixture site for the snippet checker's own tests (myst-parser only: no kernels).
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the repository, for tools.snippets
extensions = ["myst_parser", "tools.snippets.sphinx_ext"]
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build"]
snippets_report = ""
