"""A new recipe is its folder alone: CONTRIBUTING's commands add one, and nothing else is edited.

The test copies the checkout (the files git lists, as they are now) into a temporary folder,
commits the copy, runs the ```bash block of CONTRIBUTING.md's "Add a recipe" (it copies the
template recipe into the next free number and renames its exports), and shows that

- ``git status`` of the copy names the new folder and nothing else;
- the site builds from the copy with ``-W -n`` (notebooks not executed: the pages and their
  links, the gallery and the table of contents), the new page placed where its front matter
  says (after the template, among the basics);
- its zip goes through the recipe pipeline (its README's build and tests, in the take-away
  venv) and the checks of tests/one_recipe.py that concern it pass in the
  copy, as ``make recipe`` runs them (the checks of every built page need the executed site);
- with ``FFI_COOKBOOK_NEW_RECIPE_RUN=make``: ``make recipe R=<new>`` itself runs in the copy,
  with a build folder of its own (it builds the runtime and the whole site: about as long as
  a cold ``make docs``, so it is not part of ``make test``).

The copy uses this checkout's venv, with the copy's ``python/`` first on the path.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("FFI_COOKBOOK_BUILD_DIR") or ROOT / "_build")
XML = BUILD / "doxygen" / "xml"
#: The extensions of the site that read and render pages; those that execute notebooks or
#: need the snippet report are left out, and the notebooks are not executed.
EXTENSIONS = "myst_nb,breathe,sphinx_copybutton,sphinx_design,snippet_blocks,recipe_gallery,site_polish,links_out,gpu_runs"


def add_recipe_commands() -> tuple[str, str]:
    """CONTRIBUTING.md's "Add a recipe" ```bash block, and the folder it makes (``new=...``)."""
    text = (ROOT / "CONTRIBUTING.md").read_text()
    section = text.split("\n## Add a recipe", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    return block, re.search(r"\bnew=(\S+)", block).group(1)


def copy_checkout(dest: Path) -> None:
    """The files git lists (tracked and new, not ignored) as they are now, committed in ``dest``."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout.split("\0")
    for rel in filter(None, listed):
        source = ROOT / rel
        if not os.path.lexists(source):  # deleted in the working tree, not yet in git
            continue
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, dest / rel, follow_symlinks=False)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q", "."], cwd=dest, check=True)
    subprocess.run(["git", "add", "-A"], cwd=dest, check=True)
    subprocess.run([*git, "commit", "-qm", "copy"], cwd=dest, check=True)


def env_for(copy: Path, build: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env.update(PYTHONPATH=f"{copy / 'python'}{os.pathsep}{copy}", FFI_COOKBOOK_BUILD_DIR=str(build),
               PYTHONPYCACHEPREFIX=str(build / "pycache"))
    return env


@pytest.fixture(scope="module")
def added(tmp_path_factory):
    """(the copy, the new recipe's folder name, the copy's build root) after CONTRIBUTING's commands."""
    copy = tmp_path_factory.mktemp("checkout")
    copy_checkout(copy)
    commands, new = add_recipe_commands()
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", commands], cwd=copy, capture_output=True, text=True)
    assert done.returncode == 0, f"CONTRIBUTING's commands failed:\n{commands}\n{done.stderr}"
    return copy, new, tmp_path_factory.mktemp("build")


def test_a_new_recipe_touches_its_folder_alone(added):
    copy, new, _ = added
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=copy,
                            capture_output=True, text=True, check=True).stdout.splitlines()
    assert status and all(line.startswith(f"?? cookbook/{new}/") for line in status), status
    template = re.search(r"cp -r cookbook/(\S+) ", add_recipe_commands()[0]).group(1)
    assert {p.suffix for p in (copy / "cookbook" / new).iterdir()} == {
        p.suffix for p in (copy / "cookbook" / template).iterdir()}


def test_the_site_builds_with_the_new_recipe_where_it_declares(added):
    copy, new, build = added
    build = build / "site"  # not the build root of the other tests: a site there counts as built
    if not (XML / "index.xml").is_file():
        pytest.skip("no Doxygen XML for the API page (make docs builds it)")
    out = build / "html"
    cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-c", str(copy / "conf"), str(copy / "docs"), str(out),
           "-W", "--keep-going", "-n", "-q", "-d", str(build / "doctrees"),
           "-D", "nb_execution_mode=off", "-D", f"extensions={EXTENSIONS}",
           "-D", f"breathe_projects.ffi_cookbook={XML}",
           "-D", "suppress_warnings=mystnb.unknown_mime_type,mystnb.glue"]  # glue: values of cells not run
    done = subprocess.run(cmd, cwd=copy, env=env_for(copy, build), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-5000:]
    index = (out / "cookbook" / "index.html").read_text()
    toctree = index.split('class="toctree-wrapper', 1)[1]
    pages = re.findall(r'href="([\w-]+)/notebook.html"', toctree)
    template = re.search(r"cp -r cookbook/(\S+) ", add_recipe_commands()[0]).group(1)
    assert pages[pages.index(template) + 1] == new, pages  # its declared order: right after the template
    assert re.search(rf'sd-stretched-link[^"]*"[^>]*href="{new}/notebook.html"', index), "no card for it"
    page = (out / "cookbook" / new / "notebook.html").read_text()
    assert f'href="../{template}/notebook.html"' in page.split('class="prev-next-area', 1)[1]


def test_the_new_recipe_s_own_checks_pass(added):
    """What ``make recipe`` runs for the recipe, but the site and the checks of every page
    (the test above builds the site): its zip through the recipe pipeline (build, notebook,
    README tests, in the site build's take-away venv), then the tests of tests/one_recipe.py
    that concern it. ``FFI_COOKBOOK_NEW_RECIPE_RUN=make``: ``make recipe`` itself instead."""
    copy, new, build = added
    env = env_for(copy, build)
    if os.environ.get("FFI_COOKBOOK_NEW_RECIPE_RUN") == "make":
        # This checkout's venv, never installed into from the copy: its stamp is a fresh file.
        stamp = build / "venv-installed"
        stamp.touch()
        done = subprocess.run(["make", "recipe", f"R={new.split('-')[0]}", f"VENV={ROOT / '.venv'}",
                               f"STAMP={stamp}", f"BUILD={build / 'make'}"], cwd=copy, env=env,
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-5000:]
        return
    selected = ["-p", "tests.one_recipe", "--recipe", new, "-p", "no:cacheprovider", "-m", "not timing"]
    if (BUILD / "takeaway-venv" / "ready.json").is_file():  # made by the site build
        env["FFI_COOKBOOK_TAKEAWAY_VENV"] = str(BUILD / "takeaway-venv")
        run = subprocess.run([sys.executable, "-m", "tools.recipe_runs", new], cwd=copy, env=env,
                             capture_output=True, text=True)
        assert run.returncode == 0, run.stdout[-5000:] + run.stderr[-5000:]
    else:
        selected += ["-k", "not passes_its_tests_alone"]  # no take-away venv to run it in
    files = ["tests/product/test_recipe_zips.py", "tests/product/test_recipe_cmake.py",
             "tests/product/test_zip_contents.py", "tests/site/test_page_prose.py", "tests/site/test_api_links.py"]
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", *selected, *files], cwd=copy, env=env,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-3000:]
    assert int(re.search(r"(\d+) passed", done.stdout).group(1)) >= 8, done.stdout[-2000:]
