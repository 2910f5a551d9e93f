"""Print the pinned requirements of pyproject.toml's extras, one per line.

Used by the Makefile so the pins live in one place:
    pip install $(python tools/requirements.py docs test)
"""

import sys
import tomllib
from pathlib import Path

project = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())["project"]
requirements = list(project["dependencies"])
for extra in sys.argv[1:]:
    requirements += project["optional-dependencies"][extra]
print("\n".join(dict.fromkeys(requirements)))
