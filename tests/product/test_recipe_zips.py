"""Every recipe leaves the site as a zip that builds and passes its tests alone.

The zip is the one the built site offers (``<build>/html/downloads``) when the
site was built, else the generator's (``tools.takeaway``, which the site
uses too): the recipe folder as tracked, its notebook as ``.ipynb`` and the helper
headers its sources include, nothing rewritten. The recipe pipeline
(tools/recipe_runs.py) unzips it into an empty folder and runs the README's ```bash
block there in one fresh venv without ``ffi_cookbook`` (tools/takeaway_venv.py).
`make test` takes every recipe through it first (``<build>/recipe-runs/<name>``); the
slow test here asserts on that run's record when it is of this very zip and such a
venv, and takes the zip through the pipeline itself (``<build>/zip-tests/<name>``)
when it is not. The site executes each notebook in the recipe's own folder, whose
files are the zip's. The quick tests check what the zips hold.
"""

from __future__ import annotations

import ast
import io
import json
import os
import re
import stat
import subprocess
import sys
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import jupytext
import pytest

from docs._ext import recipe_downloads  # the page-code zips are the site's alone
from docs._ext.recipe_gallery import declared
from ffi_cookbook import catalog
from tools import takeaway
from tools import recipe_runs
from tools.snippets.markers import regions

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("FFI_COOKBOOK_BUILD_DIR") or ROOT / "_build")
SITE_DOWNLOADS = BUILD / "html" / "downloads"
ZIP_TESTS = "zip-tests"  # where each zip test unzips its recipe, in the build root
RECIPE_NAMES = [r.name for r in catalog.recipes()]
#: Recipe folders; the snippet checker links a page's ```bash lines to their READMEs' blocks, run here.
RECIPES = [r.folder for r in catalog.recipes()]
REQUIRED = {"CMakeLists.txt", "README.md", "requirements.txt", "notebook.ipynb"}
DISTRIBUTION = {"tvm_ffi": "apache-tvm-ffi", "jax_tvm_ffi": "jax-tvm-ffi", "functorch": "torch"}
IMPORT_OF_PACKAGE = re.compile(r"^[ \t]*(?:from|import)[ \t]+ffi_cookbook\b", re.M)
HELPER_INCLUDE = re.compile(r'#\s*include\s*[<"]ffi_cookbook/(\w+\.h)[>"]')

def zip_for(name: str) -> bytes:
    """The zip the site offers for recipe ``name``; the generator's when no site was built."""
    generated = takeaway.zip_bytes(takeaway.recipe_files(name), name)
    site = SITE_DOWNLOADS / f"{name}.zip"
    if site.is_file():
        assert site.read_bytes() == generated, f"{site} is stale: rebuild the site (make docs)"
    return generated


def readme_commands(readme: Path) -> str:
    """The first ```bash block of a recipe README: exactly what a reader runs."""
    return recipe_runs.readme_commands(readme)


# -- what the zips hold (quick) ---------------------------------------------------------

@pytest.mark.parametrize("name", RECIPE_NAMES)
def test_zip_is_plain_complete_and_deterministic(name):
    data = zip_for(name)
    assert takeaway.zip_bytes(takeaway.recipe_files(name), name) == data  # same bytes every time
    archive = zipfile.ZipFile(io.BytesIO(data))
    files = {}
    for info in archive.infolist():
        parts = info.filename.split("/")
        assert parts[0] == name and len(parts) > 1, info.filename
        assert not info.filename.startswith("/") and ".." not in parts and "" not in parts[1:]
        mode = info.external_attr >> 16
        assert stat.S_ISREG(mode) and not stat.S_ISLNK(mode), f"{info.filename}: not a plain file"
        assert info.date_time == takeaway.ZIP_DATE
        files["/".join(parts[1:])] = archive.read(info)
    assert list(files) == sorted(files)
    required = REQUIRED if (catalog.recipe(name).folder / "CMakeLists.txt").is_file() else REQUIRED - {"CMakeLists.txt"}
    assert required <= set(files), required - set(files)
    for rel, content in files.items():
        assert str(ROOT).encode() not in content, f"{rel} names this checkout"
        if rel.endswith(".py"):
            assert not IMPORT_OF_PACKAGE.search(content.decode()), f"{rel} imports ffi_cookbook"
    cells = json.loads(files["notebook.ipynb"])["cells"]
    # The page shows the outputs of this notebook's run (tools/recipe_runs.py): same code, word for word.
    page_code = [c.source for c in jupytext.read(catalog.recipe(name).folder / "notebook.md").cells
                 if c.cell_type == "code"]
    assert [c["source"] for c in cells if c["cell_type"] == "code"] == page_code
    for cell in cells:
        assert not IMPORT_OF_PACKAGE.search(cell["source"]), cell["source"]
        if cell["cell_type"] == "markdown":  # plain Markdown: no MyST directive or role left
            assert not re.search(r"```\{|^:::|\{(doc|ref|literalinclude)\}", cell["source"], re.M), cell["source"]
    # Each literalinclude became a code block holding the region the page shows.
    markdown = "\n".join(c["source"] for c in cells if c["cell_type"] == "markdown")
    page = (catalog.recipe(name).folder / "notebook.md").read_text()
    for target, region in re.findall(r'\{literalinclude\} (\S+)\n(?::\S+:.*\n)*?:start-after: "\[(\w+)\.begin\]"', page):
        begin, end = regions(catalog.recipe(name).folder / target)[0][region]
        lines = (catalog.recipe(name).folder / target).read_text().splitlines()[begin:end - 1]
        assert "\n".join(lines).strip("\n") in markdown, (target, region)
    # Exactly the helper headers the sources include, directly or through each other.
    included = {h for rel, content in files.items() if Path(rel).suffix in takeaway.C_SUFFIXES
                for h in HELPER_INCLUDE.findall(content.decode())}
    shipped = {rel.split("/")[-1] for rel in files if re.match(r"(template/)?include/ffi_cookbook/", rel)}
    assert shipped == included


@pytest.mark.parametrize("name", RECIPE_NAMES)
def test_requirements_are_what_the_recipe_imports(name):
    folder = catalog.recipe(name).folder
    local = {p.stem for p in folder.glob("*.py")}
    sources = [p.read_text() for p in folder.glob("test_*.py")]
    sources += [c.source for c in jupytext.read(folder / "notebook.md").cells if c.cell_type == "code"]
    imported = set()
    for source in sources:
        tree = ast.parse("\n".join(line for line in source.splitlines() if not line.startswith(("%", "!"))))
        # Top-level imports only: one under `if`/`try` or in a function is optional (a GPU's).
        for node in tree.body:
            if isinstance(node, ast.Import):
                imported |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                imported.add(node.module.split(".")[0])
    assert "ffi_cookbook" not in imported, "a recipe imports nothing of the cookbook's package"
    third_party = {DISTRIBUTION.get(m, m) for m in imported if m not in sys.stdlib_module_names and m not in local}
    lines = (folder / "requirements.txt").read_text().splitlines()
    required = {re.split(r"[=<>!~ ;\[]", line, maxsplit=1)[0] for line in lines if line and not line.startswith("#")}
    # Tools the recipe runs rather than imports (ninja, auditwheel...) it declares in its
    # notebook's front matter (cookbook: tools: [...]).
    tools = set(declared(folder)["tools"])
    assert tools <= required, f"declared tools that requirements.txt does not name: {tools - required}"
    assert required - tools == third_party | {"apache-tvm-ffi", "pytest"}, (
        "requirements.txt should name exactly what the test and notebook import; a requirement "
        "the recipe runs as a tool goes in its notebook's front matter, cookbook: tools: [...]")
    assert "apache-tvm-ffi==0.1.15.post2" in lines
    assert all(not line.startswith("torch") or ">=" in line for line in lines), "torch needs a lower bound"


def test_site_offers_every_download():
    if not (BUILD / "html" / "index.html").is_file():
        pytest.skip("the site is not built (make docs)")
    for name in RECIPE_NAMES:
        page = (BUILD / "html" / "cookbook" / name / "notebook.html").read_text()
        for target, text in ((f"{name}.ipynb", "Download notebook (.ipynb)"), (f"{name}.zip", "Download recipe (.zip)")):
            assert f'download href="../../downloads/{target}">{text}</a>' in page, (name, target)
            assert (SITE_DOWNLOADS / target).is_file()
        assert (SITE_DOWNLOADS / f"{name}.ipynb").read_bytes() == takeaway.recipe_files(name)["notebook.ipynb"]
    code_pages = [p for section in ("guides", "concepts") for p in sorted((ROOT / "docs" / section).glob("*.md"))
                  if "{literalinclude} code/" in p.read_text()]
    assert code_pages
    for source in code_pages:
        folder = source.parent.name
        html = (BUILD / "html" / folder / f"{source.stem}.html").read_text()
        assert f'download href="../downloads/{folder}-code.zip">' in html, source
        names = zipfile.ZipFile(SITE_DOWNLOADS / f"{folder}-code.zip").namelist()
        assert f"{folder}-code/CMakeLists.txt" in names
        # Every helper header the shown sources include (directly) travels with them.
        included = {m for f in (ROOT / "docs" / folder / "code").iterdir() if f.suffix in (".c", ".cc", ".cu", ".h")
                    for m in takeaway.HELPER_INCLUDE.findall(f.read_text())}
        assert {f"{folder}-code/include/{h}" for h in included} <= set(names), folder


def test_a_record_is_of_one_zip_and_one_venv(tmp_path):
    data = zip_for("01-add-one")
    runs = tmp_path / recipe_runs.RUNS
    runs.mkdir()
    record = {"version": recipe_runs.VERSION, "zip": recipe_runs.zip_digest(data), "venv": recipe_runs.inputs_key(),
              "seconds": 1.0, "readme": {"ok": True}}
    (runs / "01-add-one.json").write_text(json.dumps(record))
    assert recipe_runs.record_for("01-add-one", data, tmp_path) == record
    assert recipe_runs.record_for("01-add-one", data + b"changed", tmp_path) is None
    assert recipe_runs.record_for("02-tensor-and-view", data, tmp_path) is None
    assert recipe_runs.passed("01-add-one", data, tmp_path)
    # A failed README is a record too, but not a pass: `--all` runs it again, the site refuses it.
    (runs / "01-add-one.json").write_text(json.dumps({**record, "readme": {"ok": False}}))
    assert recipe_runs.record_for("01-add-one", data, tmp_path) and not recipe_runs.passed("01-add-one", data, tmp_path)
    for other in ({**record, "venv": "another"}, {**record, "version": recipe_runs.VERSION - 1}):
        (runs / "01-add-one.json").write_text(json.dumps(other))
        assert recipe_runs.record_for("01-add-one", data, tmp_path) is None


def test_a_run_s_build_serves_only_today_s_files(tmp_path):
    """tools/recipe_runs.build_of_run: the fuzz, the threads and the RPATH scan load a zip run's
    build instead of building the checkout's folder, only while it is of today's files."""
    name, key = "01-add-one", "venv key"
    files = takeaway.recipe_files(name)
    data = takeaway.zip_bytes(files, name)
    runs = tmp_path / recipe_runs.RUNS
    zipfile.ZipFile(io.BytesIO(data)).extractall(runs)
    build = runs / name / "build"
    build.mkdir()
    (build / "CMakeCache.txt").write_text("")
    assert recipe_runs.build_of_run(name, files, tmp_path, key) is None  # no record of a run
    (runs / f"{name}.json").write_text(json.dumps({"version": recipe_runs.VERSION, "zip": recipe_runs.zip_digest(data),
                                                   "venv": key, "readme": {"ok": True}}))
    assert recipe_runs.build_of_run(name, files, tmp_path, key) == build
    assert recipe_runs.build_of_run(name, files, tmp_path, "another venv") is None
    record = json.loads((runs / f"{name}.json").read_text())
    (runs / f"{name}.json").write_text(json.dumps({**record, "readme": {"ok": False}}))
    assert recipe_runs.build_of_run(name, files, tmp_path, key) is None  # its README failed
    (runs / f"{name}.json").write_text(json.dumps(record))
    changed = {**files, "add_one_cpu.cc": files["add_one_cpu.cc"] + b"\n"}
    assert recipe_runs.build_of_run(name, changed, tmp_path, key) is None  # the recipe changed since
    (runs / name / "add_one_cpu.cc").write_bytes(b"edited after the run")
    assert recipe_runs.build_of_run(name, files, tmp_path, key) is None
    (runs / name / "add_one_cpu.cc").write_bytes(files["add_one_cpu.cc"])
    (build / "CMakeCache.txt").unlink()
    assert recipe_runs.build_of_run(name, files, tmp_path, key) is None  # not configured


# -- each zip, alone, in a fresh venv (slow) ------------------------------------------------

def test_fresh_venv_has_no_ffi_cookbook(takeaway_venv):
    done = subprocess.run([str(takeaway_venv.python), "-c", "import ffi_cookbook"], cwd=takeaway_venv.path,
                          env=takeaway_venv.env(), capture_output=True, text=True)
    assert done.returncode != 0 and "No module named 'ffi_cookbook'" in done.stderr


CODE_FOLDERS = [ROOT / "docs" / section / "code" for section in ("guides", "concepts")]


@pytest.mark.parametrize("folder", CODE_FOLDERS, ids=lambda p: p.parent.name)
def test_page_code_zip_builds_alone(folder, takeaway_venv, tmp_path):
    name = recipe_downloads.code_folder_name(folder)
    generated = takeaway.zip_bytes(recipe_downloads.code_folder_files(folder), name)
    site = SITE_DOWNLOADS / f"{name}.zip"
    if site.is_file():
        assert site.read_bytes() == generated, f"{site} is stale: rebuild the site (make docs)"
    zipfile.ZipFile(io.BytesIO(generated)).extractall(tmp_path)
    takeaway_venv.run(readme_commands(tmp_path / name / "README.md"), cwd=tmp_path / name)


def recipe_junit(request, name: str) -> Path | None:
    """When this run writes a junit file (``make test``), where a copy of the recipe's own goes.

    ``make test`` runs each recipe's tests only through the pipeline (its pytest pass leaves
    cookbook/ out, and the run of recipe-zips serves here), so tools/bench_loop.py counts and
    times them from these copies."""
    ours = request.config.getoption("xmlpath", None)
    if not ours:
        return None
    path = Path(ours).resolve().parent / f"pytest-recipe-{name}.xml"
    path.unlink(missing_ok=True)
    return path


def name_recipe_tests(junit: Path, folder: Path, out: Path | None) -> None:
    """The README's pytest ran tests, with the recipe folder as its root dir; ``out`` (when
    given) gets a copy of its junit file that names the test files by their path in the checkout."""
    assert junit.is_file(), f"the README's pytest wrote no {junit.name}: does the README still run the tests?"
    tree = ET.parse(junit)
    assert any(True for _ in tree.iter("testcase")), f"{junit.name}: no tests ran"
    for case in tree.iter("testcase"):
        assert not {child.tag for child in case} & {"failure", "error"}, f"{junit}: {case.get('name')} failed"
        if case.get("file"):
            # relative to pytest's root dir, which for a reader is the recipe folder
            assert (folder / case.get("file")).is_file(), f"pytest's root dir was not {folder}: {case.get('file')}"
    if out:
        recipe_runs.checkout_junit(junit, folder.name, out)


@pytest.mark.parametrize("name", RECIPE_NAMES)
def test_zip_builds_and_passes_its_tests_alone(name, takeaway_venv, request):
    data = zip_for(name)
    runs, how = recipe_runs.RUNS, "by make test's recipe-zips"
    record = recipe_runs.record_for(name, data, BUILD)
    if record is None:  # this zip did not run in today's venv: take it through the pipeline here
        # In the build root, as deep as recipe-zips' runs: under make, ccache hashes the paths there
        # relative to the build folder, so this build reuses the objects of an earlier run.
        runs, how = ZIP_TESTS, "here"
        record = recipe_runs.run_from_zip(name, data, BUILD, takeaway_venv, runs=ZIP_TESTS)
    folder = BUILD / runs / name
    readme = record["readme"]
    assert readme["ok"], f"the README's commands failed in {folder} (run {how}):\n{readme['output']}"
    name_recipe_tests(BUILD / runs / readme["junit"], folder, recipe_junit(request, name))
    print(f"{name}: run {how}: README {readme['seconds']:.0f} s")


FORBIDDEN = re.compile(r"^[ \t]*(?:from|import)[ \t]+(?:ffi_cookbook|cookbook_build|cookbook_testing)\b", re.M)


@pytest.mark.parametrize("name", RECIPE_NAMES)
def test_recipe_folder_imports_nothing_of_ours(name):
    """What a reader copies is the folder as tracked: no file of it (sources, tests, pages)
    imports the cookbook's package, so nothing needs rewriting on the way out."""
    folder = catalog.recipe(name).folder
    found = [f"{p.relative_to(folder)}: {m.group(0).strip()}" for p in catalog.source_files(folder)
             if p.suffix in (".py", ".md") for m in FORBIDDEN.finditer(p.read_text())]
    assert not found, found
