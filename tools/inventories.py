"""Write the inventories of NumPy, PyTorch, JAX and tvm_ffi from conf/inventories/sources.toml.

The site builds offline, so intersphinx reads local inventory files (docs/_ext/links_out.py). Python's
is the real one (conf/inventories/python.inv, see the README there); the other projects' are
written here, small, holding only the names our prose links to, each with the page address
recorded in the table. Sphinx's own writer (sphinx.util.inventory.InventoryFile.dump) produces
the objects.inv v2 format, so intersphinx reads them exactly as it reads a published one.

tvm_ffi's inventory also holds C and C++ names (a role "cpp:class", "c:macro", ...) and the other
spellings an entry lists under ``also``; docs/_ext/links_out.py reads it to link inline code.

    python tools/inventories.py          # rewrite conf/inventories/{numpy,torch,jax,tvm_ffi}.inv
    python tools/inventories.py --check  # exit 1 when a file differs from what the table gives
"""

from __future__ import annotations

import sys
import tempfile
import tomllib
from pathlib import Path
from types import SimpleNamespace

from sphinx.util.inventory import InventoryFile

ROOT = Path(__file__).resolve().parents[1]
FOLDER = ROOT / "conf" / "inventories"
SOURCES = FOLDER / "sources.toml"
ROLES = {"function", "class", "module", "exception", "method", "attribute", "data",
         "cpp:class", "cpp:function", "c:macro", "c:function", "std:doc"}


def table(path: Path = SOURCES) -> dict:
    """{inventory name: {"project", "version", "base", "entries": [...]}} from the table, checked."""
    data = tomllib.loads(path.read_text())
    projects = {}
    for key, project in data["projects"].items():
        entries = data.get(key, [])
        names = [e["name"] for e in entries]
        if len(set(names)) != len(names):
            raise ValueError(f"{path.name}: a name appears twice under [[{key}]]")
        for entry in entries:
            if entry["role"] not in ROLES:
                raise ValueError(f"{path.name}: {entry['name']}: unknown role {entry['role']!r}")
            if not entry["url"].startswith(project["base"]):
                raise ValueError(f"{path.name}: {entry['name']}: {entry['url']} is not under {project['base']}")
            if not entry.get("seen"):
                raise ValueError(f"{path.name}: {entry['name']}: say where the page was seen")
        projects[key] = dict(project, entries=entries)
    return projects


def split_role(role: str) -> tuple[str, str]:
    """("py", "function") for "function"; ("cpp", "class") for "cpp:class"."""
    domain, _, kind = role.rpartition(":")
    return domain or "py", kind


class _Domain:
    """What InventoryFile.dump reads of a Sphinx domain: a name and its objects."""

    def __init__(self, project: dict, name: str):
        self.project, self.name = project, name

    def get_objects(self):
        for entry in self.project["entries"]:
            domain, kind = split_role(entry["role"])
            if domain != self.name:
                continue
            page, _, anchor = entry["url"][len(self.project["base"]):].partition("#")
            # (name, display name, object type, page, anchor, priority 1 = a normal object)
            for name in [entry["name"], *entry.get("also", [])]:
                yield name, entry["name"], kind, page, anchor, 1


def write(project: dict, path: Path) -> None:
    names = sorted({split_role(e["role"])[0] for e in project["entries"]})
    env = SimpleNamespace(config=SimpleNamespace(project=project["project"], version=project["version"]),
                          domains=SimpleNamespace(sorted=lambda: [_Domain(project, n) for n in names]))
    builder = SimpleNamespace(get_target_uri=lambda page: page)  # pages are already relative paths
    InventoryFile.dump(path, env, builder)


def main(argv: list[str]) -> int:
    check = "--check" in argv
    stale = []
    for key, project in table().items():
        target = FOLDER / f"{key}.inv"
        if not check:
            write(project, target)
            print(f"{target.relative_to(ROOT)}: {len(project['entries'])} names")
            continue
        with tempfile.TemporaryDirectory() as tmp:
            fresh = Path(tmp) / target.name
            write(project, fresh)
            if not target.is_file() or target.read_bytes() != fresh.read_bytes():
                stale.append(target.relative_to(ROOT).as_posix())
    if stale:
        print("out of date with sources.toml (run python tools/inventories.py): " + ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
