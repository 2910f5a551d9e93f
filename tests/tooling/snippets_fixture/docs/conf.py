# Fixture site for the snippet checker's own tests (myst-parser only: no kernels).
import sys
from pathlib import Path

# The repository: above this file; for a copy the tests build elsewhere, the folder they start
# sphinx in (`python -m` puts it first on sys.path; sphinx reads this file from its own folder).
ROOT = next(p for p in [*Path(__file__).resolve().parents, *map(Path, sys.path)] if (p / "docs" / "_ext").is_dir())
sys.path.insert(0, str(ROOT))  # for tools.snippets
sys.path.insert(0, str(ROOT / "docs" / "_ext"))  # for snippet_blocks
extensions = ["myst_parser", "snippet_blocks"]
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build"]
snippets_report = ""
