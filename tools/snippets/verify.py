"""Verify inline blocks by running the tools on them: compile C, C++ and CUDA (batched, cached),
configure CMake, execute Python (pycon as a doctest), run shell or match it to commands CI runs."""

from __future__ import annotations

import doctest
import hashlib
import importlib.util
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import traceback
from concurrent.futures import ThreadPoolExecutor
from contextlib import redirect_stdout
from functools import cached_property
from pathlib import Path

from .collect import Block

SUFFIX = {"c": ".c", "cpp": ".cc", "cuda": ".cu", "cmake": ".cmake", "python": ".py", "shell": ".sh"}
PLACEHOLDER = re.compile(r"^[ \t]*(?:/\*|#)[ \t]*SNIPPET[ \t]*(?:\*/)?[ \t]*$", re.M)
INCLUDE = re.compile(r"^[ \t]*#[ \t]*include\b.*$", re.M)
REPO = Path(__file__).resolve().parents[2]


def tvm_ffi_libinfo():
    """tvm_ffi.libinfo, read without running tvm_ffi/__init__.py (which imports torch: 2.5 s)."""
    package = Path(importlib.util.find_spec("tvm_ffi").submodule_search_locations[0])
    spec = importlib.util.spec_from_file_location("tvm_ffi_libinfo", package / "libinfo.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Context:
    """The repository (or fixture) root, the output folder (report, cache, scratch builds), the
    config, and the toolchain paths the compile commands name."""

    def __init__(self, root: Path, out: Path, config: dict):
        libinfo = tvm_ffi_libinfo()
        self.root, self.out, self.config = root, out, config
        try:
            import nvidia.nvshmem as nvshmem
            nvshmem_include = str(Path(list(nvshmem.__path__)[0]) / "include")
        except ImportError:
            nvshmem_include = ""
        self.paths = {"tvm_ffi_include": str(libinfo.find_include_path()),
                      "dlpack_include": str(libinfo.find_dlpack_include_path()),
                      "tvm_ffi_libdir": str(Path(libinfo.find_libtvm_ffi()).parent),
                      "cookbook_include": str(root / "include"), "nvshmem_include": nvshmem_include}
        (out / "cache").mkdir(parents=True, exist_ok=True)
        (out / "scratch").mkdir(parents=True, exist_ok=True)

    def command(self, key: str) -> list[str]:
        """A compiler command line from the config; an include dir left empty is dropped."""
        cmd = [arg.format(**self.paths) for arg in self.config["compile"][key]]
        return [arg for arg in cmd if arg not in ("-I", "-L")]

    @cached_property
    def fingerprint(self) -> str:
        """Changes when any header a snippet may include changes."""
        digest = hashlib.sha256()
        for folder in (Path(self.paths["tvm_ffi_include"]), self.root / "include"):
            for path in sorted(folder.rglob("*.h")):
                digest.update(path.as_posix().encode())
                digest.update(path.read_bytes())
        return digest.hexdigest()

    def cached(self, *parts: object) -> Path:
        """The cache entry of a job: it exists when the same job passed before."""
        return self.out / "cache" / hashlib.sha256(json.dumps([str(p) for p in parts]).encode()).hexdigest()


def _wrapped(block: Block, verifier: str) -> str | None:
    """The block in its harness (whose `/* SNIPPET */` line it replaces), or the block alone;
    None, the block failed, when the harness is missing or has no such line."""
    if not block.harness:
        return block.text + "\n"
    path = block.source.parent / "harness" / f"{block.harness}{SUFFIX[verifier]}"
    harness = path.read_text() if path.is_file() else None
    if harness is None:
        block.fail(f"harness '{block.harness}' not found: expected {path}")
    elif not PLACEHOLDER.search(harness):
        block.fail(f"harness {path} has no /* SNIPPET */ line")
    else:
        return PLACEHOLDER.sub(lambda _: block.text, harness, count=1)
    return None


def _first_error(output: str) -> str:
    lines = [ln for ln in output.splitlines() if "error" in ln.lower()] or output.splitlines()
    return (lines[0] if lines else "").strip()[:300]


def _differs(stdout: str, block: Block) -> str | None:
    if block.expected_output is not None and stdout.strip() != block.expected_output.strip():
        return f"output differs from the page: got {stdout.strip()[:200]!r}"
    return None


def _compile(ctx: Context, verifier: str, source: str, block: Block | None = None) -> str | None:
    """Why one translation unit fails to compile (with a `:run:` block: to link, run and print
    the output the page shows), or None."""
    with tempfile.TemporaryDirectory(dir=ctx.out / "scratch") as tmp:
        src, exe = Path(tmp) / f"snippet{SUFFIX[verifier]}", Path(tmp) / "a.out"
        src.write_text(source)
        cmd, run = ctx.command(verifier), block is not None and block.run
        if verifier == "cuda" and not shutil.which(cmd[0]):
            return "nvcc is not on PATH, so this CUDA block could not be compiled"
        cmd += [str(src), "-o", str(exe), *ctx.command("link")] if run else \
            ["-c", str(src), "-o", str(Path(tmp) / "snippet.o")]
        if (done := subprocess.run(cmd, capture_output=True, text=True)).returncode != 0:
            return f"does not compile: {_first_error(done.stderr)}"
        if not run:
            return None
        if (ran := subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)).returncode != 0:
            return f"runs but exits with status {ran.returncode}: {ran.stderr.strip()[:300]}"
        return _differs(ran.stdout, block)


def _batch_source(units: list[str]) -> str:
    """Translation units as one: #include lines hoisted, each unit in its own namespace."""
    includes = dict.fromkeys(line.strip() for unit in units for line in INCLUDE.findall(unit))
    bodies = [f"namespace snippet_{i} {{\n{INCLUDE.sub('', unit)}\n}}  // namespace snippet_{i}\n"
              for i, unit in enumerate(units)]
    return "\n".join(includes) + "\n" + "\n".join(bodies)


def verify_compiled(ctx: Context, jobs: list[tuple[Block, str]]) -> None:
    """Compile each (block, verifier), in parallel: compile-only C++ and CUDA in one batch per
    language, each block alone when its batch fails (to name the one that broke)."""
    groups: dict[object, list] = {}
    for block, verifier in jobs:
        if (source := _wrapped(block, verifier)) is None:
            continue
        key = ctx.cached(verifier, ctx.command(verifier), source, block.run, block.expected_output, ctx.fingerprint)
        if key.exists():
            block.ok(f"{'compiled and ran' if block.run else 'compiled'} ({verifier}, cached)")
        else:
            batch = verifier in ("cpp", "cuda") and not block.run
            groups.setdefault(verifier if batch else id(block), []).append((block, verifier, source, key))

    def compile_group(jobs):
        verifier = jobs[0][1]
        together = len(jobs) > 1 and not _compile(ctx, verifier, _batch_source([job[2] for job in jobs]))
        for block, _, source, key in jobs:
            if not together and (failure := _compile(ctx, verifier, source, block)):
                block.fail(failure)
                continue
            key.touch()
            how = "compiled and ran" if block.run else "compiled"
            block.ok(f"{how} ({verifier}, batch of {len(jobs)})" if together else f"{how} ({verifier})")

    with ThreadPoolExecutor(max_workers=os.cpu_count()) as pool:
        list(pool.map(compile_group, groups.values()))


def _in_scratch(ctx: Context, block: Block, verifier: str, did: str, run, failure, *key: object) -> None:
    """`run(text, folder)` on the wrapped block in a scratch folder, unless the same job passed before."""
    if (text := _wrapped(block, verifier)) is None:
        return
    cached = ctx.cached(verifier, text, *key)
    if cached.exists():
        return block.ok(f"{did} (cached)")
    with tempfile.TemporaryDirectory(dir=ctx.out / "scratch") as tmp:
        done = run(text, tmp)
    if done.returncode != 0:
        return block.fail(failure(done))
    if verifier == "shell" and (differs := _differs(done.stdout, block)):
        return block.fail(differs)
    cached.touch()
    block.ok(did)


def verify_cmake(ctx: Context, block: Block) -> None:
    """Configure the block (or its harness) as a scratch CMake project."""
    def configure(text: str, tmp: str) -> subprocess.CompletedProcess:
        (Path(tmp) / "CMakeLists.txt").write_text(text)
        return subprocess.run(["cmake", "-S", tmp, "-B", f"{tmp}/build", f"-DPython_EXECUTABLE={sys.executable}"],
                              capture_output=True, text=True)

    _in_scratch(ctx, block, "cmake", "configured in a scratch project", configure,
                lambda done: f"CMake configure fails: {_first_error(done.stderr)}", ctx.fingerprint)


def verify_python_page(ctx: Context, blocks: list[Block]) -> None:
    """Run a page's python/pycon blocks in order in one fresh interpreter, in the page's folder."""
    payload = [{"language": b.language, "text": b.text, "where": b.where} for b in blocks]
    key = ctx.cached("python", payload)
    if key.exists():
        for b in blocks:
            b.ok("executed (cached)")
        return
    done = subprocess.run([sys.executable, "-c", "from tools.snippets.verify import run_python; run_python()"],
                          input=json.dumps(payload), capture_output=True, text=True, cwd=blocks[0].source.parent,
                          env=dict(os.environ, PYTHONPATH=str(REPO)))
    try:
        errors = json.loads(done.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        errors = [f"the Python runner crashed: {done.stderr.strip()[-300:]}"] * len(blocks)
    for block, error in zip(blocks, errors):
        if error:
            block.fail(error)
        else:
            block.ok("executed" + (", shown output compared" if block.language == "pycon" else ""))
    if not any(errors):
        key.touch()


def run_python() -> None:
    """In the child interpreter: run the blocks read from stdin in one namespace, print each one's error."""
    namespace: dict = {"__name__": "__snippet__"}
    errors = []
    for block in json.load(sys.stdin):
        try:
            if block["language"] == "pycon":
                test = doctest.DocTestParser().get_doctest(block["text"], namespace, block["where"],
                                                           block["where"], 0)
                report = io.StringIO()
                runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
                runner.run(test, out=report.write, clear_globs=False)
                if runner.failures:
                    raise AssertionError("shown output differs:\n" + report.getvalue()[-1500:])
            else:
                with redirect_stdout(io.StringIO()):
                    exec(compile(block["text"], block["where"], "exec"), namespace)
            errors.append(None)
        except BaseException as err:  # SystemExit too
            errors.append("raises: " + "".join(traceback.format_exception_only(type(err), err)).strip()[-1500:])
    print(json.dumps(errors))


def _commands(text: str) -> list[str]:
    """Command lines of a shell block: prompts, comments and blank lines dropped."""
    lines = [raw.strip().removeprefix("$ ").split(" #", 1)[0].strip() for raw in text.splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(f"_snippets_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def linked_commands(ctx: Context) -> dict[str, str]:
    """Command line -> the file that CI or a test runs it from (read with the tests' own functions)."""
    shell, known = ctx.config["shell"], {}

    def add(text: str, source: str) -> None:
        for line in _commands(text):
            known.setdefault(line, source)

    if (ctx.root / shell["ci_script"]).is_file():
        add((ctx.root / shell["ci_script"]).read_text(), shell["ci_script"])
    if (ctx.root / shell["standalone_test"]).is_file():
        test = _load(ctx.root / shell["standalone_test"])
        for folder in test.RECIPES:
            readme = folder / "README.md"
            add(test.readme_commands(readme), f"{readme.relative_to(ctx.root)} (run by {shell['standalone_test']})")
    for name in shell.get("page_tests", []):
        if (ctx.root / name).is_file():
            for page, lines in _load(ctx.root / name).shown_commands().items():
                add("\n".join(lines), f"{page} (run by {name})")
    return known


def verify_shell(ctx: Context, block: Block, known: dict[str, str]) -> None:
    """A `:run:` block runs in a scratch folder; any other must be commands that CI or a test runs."""
    if not block.run:
        commands = _commands(block.text)
        missing = [c for c in commands if c not in known]
        if not commands or missing:
            return block.fail("not run: mark it `:run:` (scratch folder) or use only commands that CI or "
                              f"a test runs; unknown: {missing[0] if missing else '(empty block)'!r}")
        return block.ok("same commands as " + ", ".join(sorted({known[c] for c in commands})))
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    _in_scratch(ctx, block, "shell", "ran in a scratch folder",
                lambda script, tmp: subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=tmp, env=env,
                                                   capture_output=True, text=True, timeout=600),
                lambda done: f"exits with status {done.returncode}: {done.stderr.strip()[-300:]}",
                block.expected_output)
