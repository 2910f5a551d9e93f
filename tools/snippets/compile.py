"""Compile (and optionally run) C, C++, CUDA and CMake blocks; batch and cache the work."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .collect import Block
from .context import Context

SUFFIX = {"c": ".c", "cpp": ".cc", "cuda": ".cu", "cmake": ".cmake", "python": ".py", "shell": ".sh"}
PLACEHOLDER = re.compile(r"^[ \t]*(?:/\*|#)[ \t]*SNIPPET[ \t]*(?:\*/)?[ \t]*$", re.M)
INCLUDE = re.compile(r"^[ \t]*#[ \t]*include\b.*$", re.M)


def harness_path(block: Block, verifier: str, name: str) -> Path:
    return block.source.resolve().parent / "harness" / f"{name}{SUFFIX[verifier]}"


def wrap(block: Block, verifier: str) -> str:
    """The block inside its harness (the harness line `/* SNIPPET */` replaced), or the block alone."""
    name = block.harness
    if not name:
        return block.text + "\n"
    path = harness_path(block, verifier, name)
    if not path.is_file():
        raise FileNotFoundError(f"harness '{name}' not found: expected {path}")
    harness = path.read_text()
    if not PLACEHOLDER.search(harness):
        raise ValueError(f"harness {path} has no /* SNIPPET */ line")
    return PLACEHOLDER.sub(lambda _: block.text, harness, count=1)


def _first_error(output: str) -> str:
    lines = [ln for ln in output.splitlines() if "error" in ln.lower()] or output.splitlines()
    return (lines[0] if lines else "").strip()[:300]


def _compile(ctx: Context, verifier: str, source: str, run: bool) -> tuple[bool, str, str]:
    """Compile one translation unit; with `run`, link it and run it. Returns (ok, message, stdout)."""
    with tempfile.TemporaryDirectory(dir=ctx.out / "scratch") as tmp:
        src = Path(tmp) / f"snippet{SUFFIX[verifier]}"
        src.write_text(source)
        cmd = ctx.command(verifier)
        if verifier == "cuda" and not shutil.which(cmd[0]):
            return False, "nvcc is not on PATH, so this CUDA block could not be compiled", ""
        if run:
            cmd = cmd + [str(src), "-o", str(Path(tmp) / "a.out")] + ctx.command("link")
        else:
            cmd = cmd + ["-c", str(src), "-o", str(Path(tmp) / "snippet.o")]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            return False, f"does not compile: {_first_error(done.stderr)}", done.stderr
        if not run:
            return True, "compiled", ""
        ran = subprocess.run([str(Path(tmp) / "a.out")], capture_output=True, text=True, timeout=120)
        if ran.returncode != 0:
            return False, f"runs but exits with status {ran.returncode}: {ran.stderr.strip()[:300]}", ran.stdout
        return True, "compiled and ran", ran.stdout


def _batch_source(units: list[str]) -> str:
    """Several C++ translation units as one: #include lines hoisted, each unit in its own namespace."""
    includes: dict[str, None] = {}
    bodies = []
    for i, unit in enumerate(units):
        for line in INCLUDE.findall(unit):
            includes[line.strip()] = None
        bodies.append(f"namespace snippet_{i} {{\n{INCLUDE.sub('', unit)}\n}}  // namespace snippet_{i}\n")
    return "\n".join(includes) + "\n" + "\n".join(bodies)


def verify_compiled(ctx: Context, jobs: list[tuple[Block, str]]) -> None:
    """Compile every (block, verifier) pair: C++/CUDA compile-only blocks in one batch per
    language, falling back to one compile per block to name the failing one; the rest in parallel."""
    units: dict[int, str] = {}
    for block, verifier in jobs:
        try:
            units[id(block)] = wrap(block, verifier)
        except (FileNotFoundError, ValueError) as err:
            block.fail(str(err))
    todo = [(b, v) for b, v in jobs if id(b) in units]
    pending = []
    for b, v in todo:
        key = ctx.cached(v, ctx.command(v), units[id(b)], b.run, b.expected_output, ctx.fingerprint())
        if key.exists():
            b.ok(f"{'compiled and ran' if b.run else 'compiled'} ({v}, cached)")
        else:
            pending.append((b, v, key))

    def single(item):
        block, verifier, key = item
        ok, message, stdout = _compile(ctx, verifier, units[id(block)], block.run)
        if ok and block.expected_output is not None and stdout.strip() != block.expected_output.strip():
            ok, message = False, f"output differs from the page: got {stdout.strip()[:200]!r}"
        if ok:
            key.touch()
            block.ok(f"{message} ({verifier})")
        else:
            block.fail(message)

    batches: dict[str, list] = {}
    singles = []
    for item in pending:
        block, verifier, _ = item
        (batches.setdefault(verifier, []) if verifier in ("cpp", "cuda") and not block.run
         else singles).append(item)
    with ThreadPoolExecutor(max_workers=os.cpu_count()) as pool:
        def batch(items):
            if len(items) > 1:
                ok, _, _ = _compile(ctx, items[0][1], _batch_source([units[id(b)] for b, _, _ in items]), False)
                if ok:
                    for block, verifier, key in items:
                        key.touch()
                        block.ok(f"compiled ({verifier}, batch of {len(items)})")
                    return
            list(pool.map(single, items))
        list(pool.map(single, singles))
        for items in batches.values():
            batch(items)


def verify_cmake(ctx: Context, block: Block) -> None:
    """Configure the block (or its harness) as a scratch CMake project."""
    try:
        text = wrap(block, "cmake")
    except (FileNotFoundError, ValueError) as err:
        return block.fail(str(err))
    key = ctx.cached("cmake", text, ctx.fingerprint())
    if key.exists():
        return block.ok("configured in a scratch project (cached)")
    with tempfile.TemporaryDirectory(dir=ctx.out / "scratch") as tmp:
        (Path(tmp) / "CMakeLists.txt").write_text(text)
        done = subprocess.run(["cmake", "-S", tmp, "-B", f"{tmp}/build",
                               f"-DPython_EXECUTABLE={ctx.paths['python']}"],
                              capture_output=True, text=True)
    if done.returncode != 0:
        return block.fail(f"CMake configure fails: {_first_error(done.stderr)}")
    key.touch()
    block.ok("configured in a scratch project")
