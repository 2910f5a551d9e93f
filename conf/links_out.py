"""Links out: Python, NumPy, PyTorch and JAX names in prose link to their documentation.

Turns on sphinx.ext.intersphinx with local inventory files kept in conf/inventories (the build is
offline: nothing is fetched). Prose writes {py:func}`torch.compile`, {py:class}`torch.Tensor`,
{py:mod}`ctypes`, {py:exc}`ValueError`, or {py:func}`np.from_dlpack <numpy.from_dlpack>`; a
target in none of the inventories fails the -n -W build like any unresolved reference.
python.inv is Python's own inventory; the others come from conf/inventories/sources.toml
(tools/inventories.py).
"""

from __future__ import annotations

from pathlib import Path

INVENTORIES = Path(__file__).resolve().parent / "inventories"

# name -> (where the pages are, the local inventory file)
MAPPING = {
    "python": ("https://docs.python.org/3.11", str(INVENTORIES / "python.inv")),
    "numpy": ("https://numpy.org/doc/stable", str(INVENTORIES / "numpy.inv")),
    "torch": ("https://docs.pytorch.org/docs/stable", str(INVENTORIES / "torch.inv")),
    "jax": ("https://docs.jax.dev/en/latest", str(INVENTORIES / "jax.inv")),
}


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
    return {"parallel_read_safe": True, "parallel_write_safe": True}
