"""FFI_COOKBOOK_REPOSITORY turns on the repository and edit buttons and the clone command.

A small Sphinx project with the site's theme and docs/_ext/site_polish.py is built twice, with and
without the variable; the clone command the page shows is then run against a local repository.
"""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

CONF = f"""
import sys
sys.path.insert(0, {str(ROOT / "docs" / "_ext")!r})
extensions = ["myst_parser", "site_polish"]
html_theme = "sphinx_book_theme"
html_theme_options = {{"show_toc_level": 2}}
"""
PAGE = """# Get started

```{clone-command}
```
"""


def build(tmp_path: Path, name: str, repository: str | None, provider: str = "") -> str:
    src = tmp_path / name
    src.mkdir()
    (src / "conf.py").write_text(CONF)
    (src / "index.md").write_text(PAGE)
    env = {k: v for k, v in os.environ.items() if not k.startswith("FFI_COOKBOOK_REPOSITORY")}
    if repository:
        env["FFI_COOKBOOK_REPOSITORY"] = repository
        env["FFI_COOKBOOK_BRANCH"] = "trunk"
    if provider:
        env["FFI_COOKBOOK_REPOSITORY_PROVIDER"] = provider
    done = subprocess.run([sys.executable, "-m", "sphinx", "-q", "-b", "html", "-W", str(src), str(src / "_html")],
                          env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    return (src / "_html" / "index.html").read_text()


def shown_text(page: str) -> str:
    """The page's text as a reader sees it (the highlighter splits code into spans)."""
    return html.unescape(re.sub(r"<[^>]+>", "", page))


def test_without_a_repository_the_site_names_none(tmp_path):
    page = build(tmp_path, "plain", None)
    assert "git clone" not in page and "edit/" not in page and "github.com" not in page


def test_a_repository_turns_on_buttons_and_the_clone_command(tmp_path):
    origin = tmp_path / "origin"
    subprocess.run(["git", "init", "-q", "-b", "trunk", str(origin)], check=True)
    (origin / "README.md").write_text("cookbook\n")
    git = ["git", "-C", str(origin), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run(git + ["add", "README.md"], check=True)
    subprocess.run(git + ["commit", "-q", "-m", "first"], check=True)

    page = build(tmp_path, "github", "https://github.com/example/ffi-cookbook.git")
    assert 'href="https://github.com/example/ffi-cookbook"' in page  # the repository button
    assert "https://github.com/example/ffi-cookbook/edit/trunk/docs/index.md" in page
    assert "git clone --branch trunk https://github.com/example/ffi-cookbook.git\ncd ffi-cookbook" in shown_text(page)

    # The command the page shows, run as shown, for a repository this test can reach offline.
    # A host the theme does not know needs its provider named (the URL pattern of its edit links).
    page = build(tmp_path, "local", f"file://{origin}", provider="gitlab")
    (shown,) = re.findall(r"git clone .*\ncd \S+", shown_text(page))
    assert shown == f"git clone --branch trunk file://{origin}\ncd origin"
    commands = shown + " && git log --format=%s"
    work = tmp_path / "reader"
    work.mkdir()
    done = subprocess.run(["bash", "-ec", commands], cwd=work, capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.strip() == "first", done.stderr


def test_an_unknown_host_needs_a_provider(tmp_path):
    with pytest.raises(AssertionError, match="Provider not recognized"):
        build(tmp_path, "unknown", "https://git.example.org/team/ffi-cookbook")
