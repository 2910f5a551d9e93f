"""Links out: Python, NumPy, PyTorch, JAX and tvm_ffi names in prose link to their documentation.

Turns on sphinx.ext.intersphinx with local inventory files kept in conf/inventories (the build is
offline: nothing is fetched). Prose writes {py:func}`torch.compile`, {py:class}`torch.Tensor`,
{py:mod}`ctypes`, {py:exc}`ValueError`, or {py:func}`np.from_dlpack <numpy.from_dlpack>`; a
target in none of the inventories fails the -n -W build like any unresolved reference.
python.inv is Python's own inventory; the others come from conf/inventories/sources.toml
(tools/inventories.py).

tvm_ffi's names need no role: inline code in prose whose text is one of the names in
conf/inventories/tvm_ffi.inv (``TensorView``, ``ffi::TensorView``, ``TVM_FFI_THROW(ValueError)``,
``tvm_ffi.load_module``, ``tvm_ffi_configure_target``; a call's arguments are ignored) becomes a
link to its page of the upstream reference (https://tvm.apache.org/ffi/). Code blocks, headings
and text that is already a link are left as they are.
"""

from __future__ import annotations

import re
import zlib
from pathlib import Path

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform

INVENTORIES = Path(__file__).resolve().parents[2] / "conf" / "inventories"

# name -> (where the pages are, the local inventory file)
MAPPING = {
    "python": ("https://docs.python.org/3.11", str(INVENTORIES / "python.inv")),
    "numpy": ("https://numpy.org/doc/stable", str(INVENTORIES / "numpy.inv")),
    "torch": ("https://docs.pytorch.org/docs/stable", str(INVENTORIES / "torch.inv")),
    "jax": ("https://docs.jax.dev/en/latest", str(INVENTORIES / "jax.inv")),
}


TVM_FFI = INVENTORIES / "tvm_ffi.inv"
_CALL = re.compile(r"^([A-Za-z_][\w:.]*)(?:\(.*\))?$", re.S)


def tvm_ffi_names(path: Path = TVM_FFI) -> dict[str, str]:
    """Name -> page address, from an objects.inv (v2) file."""
    lines = path.read_bytes().split(b"\n", 4)
    if not lines[0].startswith(b"# Sphinx inventory version 2"):
        raise ValueError(f"{path}: not a Sphinx v2 inventory")
    base = "https://tvm.apache.org/ffi/"
    names = {}
    for line in zlib.decompress(lines[4]).decode().splitlines():
        name, _kind, _prio, uri, _shown = line.split(" ", 4)
        if uri.endswith("$"):
            uri = uri[:-1] + name
        names[name] = base + uri
    return names


def target_of(text: str, names: dict[str, str]) -> str | None:
    """The page of an inline code text that names one of tvm_ffi's objects, or None."""
    found = _CALL.match(text.strip())
    return names.get(found.group(1)) if found else None


class TvmFfiLinks(SphinxPostTransform):
    """Inline code naming a tvm_ffi object links to its upstream page."""

    default_priority = 900
    formats = ("html",)

    def run(self, **kwargs) -> None:
        names = tvm_ffi_names()
        for literal in list(self.document.findall(nodes.literal)):
            if isinstance(literal.parent, (nodes.reference, nodes.title, nodes.literal_block)) \
                    or any(isinstance(a, (nodes.reference, nodes.title)) for a in _ancestors(literal)):
                continue
            uri = target_of(literal.astext(), names)
            if uri is None:
                continue
            link = nodes.reference("", "", internal=False, refuri=uri, classes=["tvm-ffi-ref"],
                                   reftitle="tvm_ffi reference")
            literal.replace_self(link)
            link += literal


def _ancestors(node: nodes.Node):
    parent = node.parent
    while parent is not None:
        yield parent
        parent = parent.parent


def _configure(app, config):
    config.intersphinx_mapping = dict(MAPPING)
    # Only Python objects resolve through the inventories: a missing page, label or C/C++ name
    # of our own must still fail the build instead of landing on docs.python.org.
    config.intersphinx_disabled_reftypes = ["std:*", "c:*", "cpp:*"]
    config.intersphinx_timeout = 1  # the files are local; never wait on a network


def setup(app):
    app.setup_extension("sphinx.ext.intersphinx")
    # Before intersphinx reads and checks its mapping (its own config-inited handler, priority 800).
    app.connect("config-inited", _configure, priority=100)
    app.add_post_transform(TvmFfiLinks)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
