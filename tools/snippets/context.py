"""Where things are: the repository, the toolchain paths, the cache, the config."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path


def _query(*args: str) -> str:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True,
                          check=True).stdout.strip()


def _nvshmem_include() -> str:
    try:
        import nvidia.nvshmem as nvshmem
    except ImportError:
        return ""
    return str(Path(list(nvshmem.__path__)[0]) / "include")


@dataclass
class Context:
    root: Path  # repository (or fixture) root
    out: Path  # where the report, cache and scratch builds go
    config: dict = field(default_factory=dict)
    paths: dict = field(default_factory=dict)

    @classmethod
    def create(cls, root: Path, out: Path, config_path: Path) -> "Context":
        ctx = cls(root=root.resolve(), out=out.resolve(), config=tomllib.loads(config_path.read_text()))
        ctx.paths = {
            "tvm_ffi_include": _query("-m", "tvm_ffi.config", "--includedir"),
            "dlpack_include": _query("-m", "tvm_ffi.config", "--dlpack-includedir"),
            "tvm_ffi_libdir": _query("-m", "tvm_ffi.config", "--libdir"),
            "cookbook_include": str(ctx.root / "include"),
            "nvshmem_include": _nvshmem_include(),
            "python": sys.executable,
        }
        (ctx.out / "cache").mkdir(parents=True, exist_ok=True)
        (ctx.out / "scratch").mkdir(parents=True, exist_ok=True)
        return ctx

    def command(self, key: str) -> list[str]:
        """A compiler command line from the config, paths filled in, empty include dirs dropped."""
        cmd = [arg.format(**self.paths) for arg in self.config["compile"][key]]
        return [arg for arg in cmd if arg not in ("-I", "-L")]

    def fingerprint(self) -> str:
        """Changes when any header a snippet may include changes (computed once)."""
        if "fingerprint" in self.paths:
            return self.paths["fingerprint"]
        digest = hashlib.sha256()
        for folder in (Path(self.paths["tvm_ffi_include"]), self.root / "include"):
            for path in sorted(folder.rglob("*.h")):
                digest.update(path.as_posix().encode())
                digest.update(path.read_bytes())
        self.paths["fingerprint"] = digest.hexdigest()
        return self.paths["fingerprint"]

    def cached(self, *parts: object) -> Path:
        """The cache entry for a job; it exists when the same job passed before."""
        key = hashlib.sha256(json.dumps([str(p) for p in parts]).encode()).hexdigest()
        return self.out / "cache" / key
