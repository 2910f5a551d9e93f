"""Lint marker regions (`// [name.begin]` ... `// [name.end]`) in sources, and the MyST pages using them:
a begin without an end (or the reverse), a name used twice in a file or not snake_case, and a
literalinclude of a region that does not exist or not by the marker syntax."""

from __future__ import annotations

import fnmatch
import re
import subprocess
from pathlib import Path
from typing import NamedTuple

MARKER = re.compile(r"\[([A-Za-z0-9_.-]+?)\.(begin|end)\]")
MARKER_LINE = re.compile(r"^\s*(?://|#|/\*)\s*(\[[^\]]+\])\s*(?:\*/)?\s*$")  # a comment line of its own
SNAKE = re.compile(r"^[a-z][a-z0-9_]*$")
TEXT_SUFFIXES = {".c", ".cc", ".cpp", ".cu", ".h", ".cuh", ".py", ".cmake", ".txt", ".toml", ".sh", ".in"}
INCLUDE = re.compile(r"^(?:`{3,}|:{3,})\{literalinclude\}\s+(\S+)\s*\n((?:\s*:[\w-]+:.*\n)*)", re.M)  # and options
OPTION = re.compile(r"^\s*:([\w-]+):\s*(.*?)\s*$", re.M)


class Problem(NamedTuple):
    where: str
    message: str


def regions(path: Path, shown: object = None) -> tuple[dict[str, tuple[int, int]], list[Problem]]:
    """name -> (begin line, end line) of the regions in a file, and the problems found."""
    found: dict[str, tuple[int, int]] = {}
    open_: dict[str, int] = {}
    problems = []
    for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
        comment = MARKER_LINE.match(line)
        for name, edge in MARKER.findall(comment.group(1)) if comment else []:
            where = f"{shown or path}:{number}"
            if not SNAKE.match(name):
                problems.append(Problem(where, f"marker name '{name}' is not snake_case"))
            if edge == "begin":
                if name in open_ or name in found:
                    problems.append(Problem(where, f"duplicate marker '[{name}.begin]'"))
                open_[name] = number
            elif name not in open_:
                problems.append(Problem(where, f"'[{name}.end]' has no matching '[{name}.begin]'"))
            else:
                found[name] = (open_.pop(name), number)
    problems += [Problem(f"{shown or path}:{number}", f"'[{name}.begin]' has no matching '[{name}.end]'")
                 for name, number in open_.items()]
    return found, problems


def lint(root: Path, srcdir: Path, exclude: list[str] = ()) -> list[Problem]:
    # Tracked and untracked-but-not-ignored files (all files when not a git checkout).
    done = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                          cwd=root, capture_output=True, text=True)
    names = done.stdout.splitlines() if done.returncode == 0 else [
        str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()]
    problems: list[Problem] = []
    for name in names:
        if Path(name).suffix in TEXT_SUFFIXES and (root / name).is_file() and \
                not any(fnmatch.fnmatch(Path(name).as_posix(), pattern) for pattern in exclude):
            problems += regions(root / name, name)[1]
    for page in sorted(srcdir.rglob("*.md")):
        if "build" in page.relative_to(srcdir).parts[:-1] or "_build" in page.parts:
            continue
        shown = page.resolve().relative_to(root) if page.resolve().is_relative_to(root) else page
        text = page.read_text()
        for match in INCLUDE.finditer(text):
            where = f"{shown}:{text.count(chr(10), 0, match.start()) + 1}"
            problems += _check_include(page, where, match.group(1), dict(OPTION.findall(match.group(2))))
    return problems


def _check_include(page: Path, where: str, target: str, options: dict[str, str]) -> list[Problem]:
    start, end = (options.get(k, "").strip("\"'") for k in ("start-after", "end-before"))
    if "lines" in options or "emphasize-lines" in options:
        return [Problem(where, "line-number options (:lines:, :emphasize-lines:) break silently; use marker regions")]
    if not start and not end:
        return []  # the whole file
    begin, finish = MARKER.fullmatch(start), MARKER.fullmatch(end)
    if not (begin and finish and begin.group(2) == "begin" and finish.group(2) == "end"
            and begin.group(1) == finish.group(1)):
        return [Problem(where, f"literalinclude of {target} must use ':start-after: \"[name.begin]\"' and "
                               f"':end-before: \"[name.end]\"' of one region (got {start!r}, {end!r})")]
    path = (page.parent / target).resolve()
    if not path.is_file():
        return [Problem(where, f"literalinclude of a missing file: {target}")]
    if begin.group(1) not in regions(path)[0]:
        return [Problem(where, f"region '{begin.group(1)}' does not exist in {target}")]
    return []
