"""Registers the ``timing`` mark of this folder's tests.

A test marked ``timing`` compares two timings, so its answer is fair only when nothing
else keeps the machine busy: run those alone with ``python -m pytest -m timing`` and the
others, in parallel if you like, with ``-m "not timing"``.
"""


def pytest_configure(config):
    config.addinivalue_line("markers", "timing: compares two timings; run it with nothing else busy")
