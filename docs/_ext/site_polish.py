"""Small things every page of the site needs: a footer that says what the site was built with,
and element ids that are unique on their page.

- The footer names the versions of apache-tvm-ffi, torch and numpy installed where Sphinx runs
  (the notebooks run in the same environment) and the C++ (and CUDA) compiler found on PATH, read
  at build time: nothing is typed by hand. conf.py puts :func:`built_with` into the theme's
  ``extra_footer``.
- breathe gives every "Public Members"/"Public Functions" heading of the API page the same id;
  the second and later copies of an id on a page get a ``-2``, ``-3`` suffix.
- breathe puts each overload of a function in the page contents; one line per name is kept.
- ``FFI_COOKBOOK_REPOSITORY`` (a repository URL; ``FFI_COOKBOOK_BRANCH`` and, for a host other
  than GitHub, GitLab or Bitbucket, ``FFI_COOKBOOK_REPOSITORY_PROVIDER``) turns on the theme's
  repository and edit buttons and the ``{clone-command}`` block of the get-started page. Unset (as
  in CI), the site names no repository.
"""

from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
from importlib import metadata

from docutils import nodes
from sphinx.util.docutils import SphinxDirective


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def _first_line(cmd: list[str]) -> str:
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.splitlines()[0].strip() if out.strip() else ""


def cxx_compiler() -> str:
    """``g++ 12.2.0``-style name of the compiler CMake picks by default ($CXX, else c++)."""
    cxx = shutil.which(os.environ.get("CXX") or "c++")
    if not cxx:
        return "no C++ compiler found"
    line = _first_line([cxx, "--version"])
    version = re.search(r"(\d+\.\d+(\.\d+)?)\s*$", line) or re.search(r"version (\d+\.\d+(\.\d+)?)", line)
    name = "clang++" if "clang" in line else "g++" if ("g++" in line or "GCC" in line or "c++ (" in line) else os.path.basename(cxx)
    return f"{name} {version.group(1)}" if version else line


def cuda_compiler() -> str | None:
    """``nvcc 13.0`` when nvcc is on PATH (the CUDA code on the pages is compiled with it)."""
    nvcc = shutil.which("nvcc")
    if not nvcc:
        return None
    try:
        out = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.search(r"release (\d+\.\d+)", out)
    return f"nvcc {found.group(1)}" if found else None


# The license of the cookbook's code and text: LICENSE at the root of the source, and pyproject.toml.
LICENSE_LINE = "The cookbook's code and text are under the Apache License, Version 2.0 (the LICENSE file of its source)."


def built_with() -> str:
    """The footer line, as HTML."""
    packages = ", ".join(f"{name} {_version(name)}" for name in ("apache-tvm-ffi", "torch", "numpy"))
    compilers = " and ".join(c for c in (cxx_compiler(), cuda_compiler()) if c)
    return (f'<p class="cookbook-built-with">Built and executed with {html.escape(packages)}; '
            f"compiled with {html.escape(compilers)}.</p>"
            f'<p class="cookbook-license">{LICENSE_LINE}</p>')


def _unique_ids(app, doctree, docname):
    seen: set[str] = set()
    for node in doctree.findall(nodes.Element):
        ids = node.get("ids")
        if not ids:
            continue
        unique = []
        for ident in ids:
            candidate, n = ident, 1
            while candidate in seen:
                n += 1
                candidate = f"{ident}-{n}"
            seen.add(candidate)
            unique.append(candidate)
        node["ids"] = unique


def _one_contents_line_per_name(app, doctree):
    """breathe names every overload in the page contents ("ToFloat()" three times in a row): keep
    the first of each name among the entries of one section or one class."""
    from sphinx import addnodes

    seen: set[tuple[int, str]] = set()
    for sig in doctree.findall(addnodes.desc_signature):
        name = sig.get("_toc_name")
        if not name:
            continue
        parent = sig.parent.parent  # desc -> the desc_content or section that holds it
        while parent is not None and not isinstance(parent, (addnodes.desc_content, nodes.section)):
            parent = parent.parent
        key = (id(parent), name)
        if key in seen:
            sig["_toc_name"] = ""  # the contents skip a signature without a name
        seen.add(key)


REPOSITORY_ENV = "FFI_COOKBOOK_REPOSITORY"


def repository() -> dict[str, str]:
    """The configured repository: url, branch and provider (empty when none is configured)."""
    url = os.environ.get(REPOSITORY_ENV, "").strip().rstrip("/")
    if not url:
        return {}
    return {"url": url, "branch": os.environ.get("FFI_COOKBOOK_BRANCH", "main"),
            "provider": os.environ.get("FFI_COOKBOOK_REPOSITORY_PROVIDER", "")}


def repository_theme_options() -> dict:
    """sphinx-book-theme options for the repository and edit buttons (none without a repository)."""
    repo = repository()
    if not repo:
        return {}
    # The theme reads the last two parts of the URL as owner and name; "name.git" would end up in
    # the edit links.
    options = {"repository_url": re.sub(r"\.git$", "", repo["url"]), "repository_branch": repo["branch"],
               "path_to_docs": "docs", "use_repository_button": True, "use_edit_page_button": True}
    if repo["provider"]:
        options["repository_provider"] = repo["provider"]
    return options


def clone_commands() -> str:
    """The get-started page's clone command for the configured repository ('' without one)."""
    repo = repository()
    if not repo:
        return ""
    folder = re.sub(r"\.git$", "", repo["url"].rsplit("/", 1)[-1]) or "ffi-cookbook"
    return f"git clone --branch {repo['branch']} {repo['url']}\ncd {folder}"


class CloneCommand(SphinxDirective):
    """``{clone-command}``: the clone command for FFI_COOKBOOK_REPOSITORY, or nothing."""

    def run(self) -> list[nodes.Node]:
        self.env.note_dependency(__file__)
        commands = clone_commands()
        if not commands:
            return []
        block = nodes.literal_block(commands, commands, language="bash")
        # The snippet checker runs shell blocks offline; a clone needs the network.
        block["snippet_pseudo"] = "needs the network: it clones the repository this site was built from"
        return [block]


def _theme_options(app, config):
    config.html_theme_options = {**config.html_theme_options, **repository_theme_options()}


def setup(app):
    # A config value, so that a change of the repository rebuilds every page (environment variables
    # alone are not part of Sphinx's saved state).
    app.add_config_value("ffi_cookbook_repository", repr(sorted(repository().items())), "env")
    app.connect("config-inited", _theme_options)
    app.add_directive("clone-command", CloneCommand)
    # Before Sphinx's own doctree-read handler (priority 500) builds the page contents.
    app.connect("doctree-read", _one_contents_line_per_name, priority=400)
    app.connect("doctree-resolved", _unique_ids)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
