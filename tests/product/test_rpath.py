"""Where no one belongs: our libraries never search the current directory for dependencies.

An empty entry, "." or any relative entry in RPATH/RUNPATH makes the loader
search relative to the directory the process happens to run in, where anyone
may have left a libtvm_ffi.so. Build-tree libraries may carry CMake's absolute
build RPATH (the venv's tvm_ffi, the CUDA toolkit: folders of this machine that
exist); what is installed (the wheel, tests/product/test_wheel.py) carries only
$ORIGIN-relative entries.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.fuzz.run import default_libraries, probe_library

_ENTRY = re.compile(r"\((?:RPATH|RUNPATH)\)\s+Library r(?:un)?path: \[(.*)\]")


def search_path(binary: Path) -> list[str]:
    """The RPATH/RUNPATH entries of an ELF file, split at ':' (empty entries kept)."""
    dynamic = subprocess.run(["readelf", "-d", str(binary)], capture_output=True, text=True, check=True).stdout
    return [entry for m in _ENTRY.finditer(dynamic) for entry in m.group(1).split(":")]


def origin_relative(entry: str) -> Path | None:
    """The folder of an $ORIGIN-relative entry, as a path relative to the binary's folder; None otherwise."""
    for origin in ("$ORIGIN", "${ORIGIN}"):
        if entry == origin or entry.startswith(origin + "/"):
            return Path(entry[len(origin):].lstrip("/") or ".")
    return None


def unsafe_entries(binary: Path) -> list[str]:
    """Entries that depend on the current directory, or absolute ones that do not exist."""
    bad = []
    for entry in search_path(binary):
        if origin_relative(entry) is not None:
            continue
        if not entry.startswith("/") or not Path(entry).is_dir():
            bad.append(entry or "<empty>")
    return bad


@pytest.mark.parametrize("dynamic, expected", [
    ("0x1d (RUNPATH) Library runpath: [$ORIGIN/../lib:/opt/x]", ["$ORIGIN/../lib", "/opt/x"]),
    ("0xf (RPATH) Library rpath: [:.]", ["", "."]),
])
def test_search_path_parses_readelf(dynamic, expected):
    assert [e for m in _ENTRY.finditer(dynamic) for e in m.group(1).split(":")] == expected


def test_built_libraries_never_search_the_current_directory():
    binaries = default_libraries() + [probe_library(), probe_library("libcrash_probe.so")]
    # Everything else a recipe build makes that the loader opens: programs and Python modules.
    for library in list(binaries[1:]):
        binaries += [p for p in library.parent.iterdir()
                     if p.is_file() and p not in binaries and p.read_bytes()[:4] == b"\x7fELF"]
    assert len(binaries) >= 15
    problems = {str(b): unsafe_entries(b) for b in binaries if unsafe_entries(b)}
    assert not problems, problems
