"""Python, NumPy, PyTorch and JAX names in prose link to their documentation, offline.

docs/_ext/links_out.py turns on intersphinx with the inventory files kept in conf/inventories:
Python's own objects.inv (from Debian's python3.11-doc) and small inventories of the NumPy,
PyTorch and JAX names our prose uses, written by tools/inventories.py from sources.toml. Here:
the files load with Sphinx's reader and hold what they should, every {py:...} target used in a
page exists in them, and a small Sphinx project with links_out builds with -W -n, links to the
projects' pages and never touches the network.
"""

from __future__ import annotations

import importlib.util
import posixpath
import re
import subprocess
import sys
from pathlib import Path

import pytest
from sphinx.util.inventory import InventoryFile

ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "conf" / "inventories"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "docs" / "_ext"))

import links_out  # noqa: E402
from tools import jupyter  # noqa: E402
from tools import inventories  # noqa: E402

# A role and the object types it may link to (as Sphinx's Python domain has them).
ROLE_TYPES = {
    "func": {"function", "method", "classmethod", "staticmethod"},
    "class": {"class", "exception"},
    "exc": {"exception", "class"},
    "mod": {"module"},
    "meth": {"method", "classmethod", "staticmethod"},
    "attr": {"attribute", "property"},
    "data": {"data"},
    "obj": None,  # any type
}
PY_ROLE = re.compile(r"\{py:(\w+)\}`([^`]+)`")
TITLED = re.compile(r"^(?P<title>.+?)\s*<(?P<target>[^<>]+)>$", re.S)


def load(name: str) -> dict:
    """The inventory `name` as intersphinx reads it: {"py:function": {name: item}, ...}."""
    base, path = links_out.MAPPING[name]
    with open(path, "rb") as stream:
        return InventoryFile.load(stream, base, posixpath.join)


def pages() -> list[Path]:
    return sorted(ROOT.glob("cookbook/**/*.md")) + sorted(ROOT.glob("docs/**/*.md"))


def role_uses() -> list[tuple[str, str, str]]:
    """(where, role, target) of every {py:role}`...` in the site's Markdown pages."""
    uses = []
    for page in pages():
        if "build" in page.relative_to(ROOT).parts:
            continue
        for number, line in enumerate(page.read_text().splitlines(), 1):
            for match in PY_ROLE.finditer(line):
                titled = TITLED.match(match.group(2))
                target = titled["target"] if titled else match.group(2).lstrip("~!")
                uses.append((f"{page.relative_to(ROOT)}:{number}", match.group(1), target))
    return uses


# -- the inventory files ---------------------------------------------------------------------

def test_python_inventory_is_pythons_own():
    inventory = load("python")
    modules, exceptions = inventory["py:module"], inventory["py:exception"]
    assert len(modules) > 300 and len(exceptions) > 100  # the whole standard library, not a subset
    item = modules["ctypes"]
    assert (item.project_name, item.project_version) == ("Python", "3.11")
    assert item.uri == "https://docs.python.org/3.11/library/ctypes.html#module-ctypes"
    assert exceptions["ValueError"].uri == "https://docs.python.org/3.11/library/exceptions.html#ValueError"
    assert {"faulthandler", "timeit", "venv", "subprocess"} <= set(modules)


def test_small_inventories_are_what_the_table_says():
    table = inventories.table()
    assert set(table) == {"numpy", "torch", "jax", "tvm_ffi"}
    assert inventories.main(["--check"]) == 0, "run python tools/inventories.py"
    for name, project in table.items():
        if name == "tvm_ffi":  # read by links_out's own transform, not by intersphinx
            assert name not in links_out.MAPPING
            names = links_out.tvm_ffi_names()
            assert names == {alias: e["url"] for e in project["entries"] for alias in [e["name"], *e.get("also", [])]}
            continue
        assert links_out.MAPPING[name][0] == project["base"].rstrip("/")
        inventory = load(name)
        found = {(key.removeprefix("py:"), entry, item.uri) for key, items in inventory.items()
                 for entry, item in items.items()}
        assert found == {(e["role"], e["name"], e["url"]) for e in project["entries"]}
        assert all(item.project_name == project["project"] for items in inventory.values()
                   for item in items.values())


def test_table_holds_the_names_the_prose_is_about():
    names = {e["name"] for project in inventories.table().values() for e in project["entries"]}
    assert {"torch.compile", "torch.Tensor", "torch.library.custom_op", "torch.library.opcheck",
            "torch.from_dlpack", "torch.utils.cpp_extension.load_inline", "torch.cuda.graph",
            "torch.nn.functional.rms_norm", "numpy.from_dlpack", "jax.jit", "jax.ffi.ffi_call"} <= names


def test_table_rejects_a_url_outside_its_project(tmp_path):
    bad = tmp_path / "sources.toml"
    bad.write_text('[projects.jax]\nproject = "JAX"\nversion = "latest"\nbase = "https://docs.jax.dev/en/latest/"\n'
                   '[[jax]]\nname = "jax.jit"\nrole = "function"\nurl = "https://example.org/jit.html"\nseen = "x"\n')
    with pytest.raises(ValueError, match="is not under"):
        inventories.table(bad)


# -- the pages -------------------------------------------------------------------------------

def test_pages_use_python_roles():
    roles = {role for _, role, _ in role_uses()}
    assert {"func", "class", "mod", "exc"} <= roles


def test_every_python_role_target_is_in_an_inventory():
    known = {}  # target -> object types over all inventories
    for name in links_out.MAPPING:
        for key, items in load(name).items():
            if key.startswith("py:"):
                for entry in items:
                    known.setdefault(entry, set()).add(key.removeprefix("py:"))
    missing = [f"{where}: {{py:{role}}}`{target}`" for where, role, target in role_uses()
               if target not in known or (ROLE_TYPES.get(role) is not None and not known[target] & ROLE_TYPES[role])]
    assert not missing, ("not in conf/inventories (add it to sources.toml with the page address, "
                         "or keep it plain inline code): " + "; ".join(missing))


def test_downloaded_notebooks_keep_python_names_as_code():
    text = ("Use {py:func}`torch.compile`, {py:func}`np.from_dlpack(t) <numpy.from_dlpack>`,\n"
            "{py:exc}`ValueError` and {py:mod}`ctypes`; {cpp:func}`CheckLaunch <CheckLaunch>` too.")
    plain = jupyter.markdown_for_jupyter(text, ROOT / "cookbook" / "01-add-one", "test", {})
    assert plain == ("Use `torch.compile`, `np.from_dlpack(t)`,\n"
                     "`ValueError` and `ctypes`; `CheckLaunch` too.")


# -- a small site with links_out ---------------------------------------------------------------

CONF = f"""
import sys
sys.path.insert(0, {str(ROOT / "docs" / "_ext")!r})
extensions = ["myst_parser", "links_out"]
"""
PAGE = """# Links out

{py:func}`torch.compile` compiles, a {py:class}`torch.Tensor` goes in, {py:func}`np.from_dlpack(t) <numpy.from_dlpack>`
reads the result, {py:func}`jax.jit` traces, {py:mod}`ctypes` loads and {py:exc}`ValueError` is raised.

A `TensorView` argument, `TVM_FFI_THROW(ValueError)`, `tvm_ffi.load_module` and
`tvm_ffi_configure_target` are tvm_ffi's; `Tensor` alone and `x.size(0)` are not linked.

```cpp
TensorView in_a_code_block_stays_plain;
```
"""
# Any attempt to reach a network fails loudly, so a build that passes used only local files.
NO_NETWORK = """
import socket, sys
def refuse(*args, **kwargs):
    raise OSError("no network in this test")
socket.socket.connect = socket.socket.connect_ex = refuse
socket.create_connection = socket.getaddrinfo = refuse
from sphinx.cmd.build import main
sys.exit(main(sys.argv[1:]))
"""


def build(tmp_path: Path, page: str) -> subprocess.CompletedProcess:
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text(CONF)
    (src / "index.md").write_text(page)
    return subprocess.run([sys.executable, "-c", NO_NETWORK, "-q", "-b", "html", "-W", "-n", "-E",
                           str(src), str(tmp_path / "html")], capture_output=True, text=True, timeout=300)


def test_links_out_builds_offline_and_links_to_the_projects(tmp_path):
    assert importlib.util.find_spec("myst_parser")
    done = build(tmp_path, PAGE)
    assert done.returncode == 0, done.stderr[-3000:]
    html = (tmp_path / "html" / "index.html").read_text()
    links = set(re.findall(r'href="(https://[^"]+)"', html))
    assert {"https://docs.pytorch.org/docs/stable/generated/torch.compile.html#torch.compile",
            "https://docs.pytorch.org/docs/stable/tensors.html#torch.Tensor",
            "https://numpy.org/doc/stable/reference/generated/numpy.from_dlpack.html#numpy.from_dlpack",
            "https://docs.jax.dev/en/latest/_autosummary/jax.jit.html#jax.jit",
            "https://docs.python.org/3.11/library/ctypes.html#module-ctypes",
            "https://docs.python.org/3.11/library/exceptions.html#ValueError"} <= links
    assert ">np.from_dlpack(t)<" in html  # the explicit title is what the reader sees
    # tvm_ffi's names in inline code link to the upstream reference, without a role
    names = links_out.tvm_ffi_names()
    assert {names["TensorView"], names["TVM_FFI_THROW"], names["tvm_ffi.load_module"],
            names["tvm_ffi_configure_target"]} <= links
    assert html.count("tvm-ffi-ref reference external") == 4
    assert "in_a_code_block_stays_plain" in html and html.count(names["TensorView"]) == 1


def test_a_name_in_no_inventory_fails_the_build(tmp_path):
    done = build(tmp_path, "# Page\n\n{py:func}`torch.not_a_function` and {py:mod}`tvm_ffi`.\n")
    assert done.returncode != 0
    assert "torch.not_a_function" in done.stderr and "tvm_ffi" in done.stderr
