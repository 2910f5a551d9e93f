"""`make test` keeps a test file on one pytest-xdist worker (tests/conftest.py), so that a
module fixture (a recipe build, the sanitized runtime) is made once, not once per worker.

The groups were lost in two ways at once: this conftest's hook ran after pytest-xdist's
(which reads the marks into the ids), and pytest 9.2 ignores pytest-xdist 3.8's rewrite of
an id. `--dist loadgroup` then spread one file's tests over both workers, and the sanitized
runtime was built twice at the same time.
"""

import os

import pytest


def test_a_file_is_one_group_of_the_parallel_run(request):
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        pytest.skip("checks the parallel run of `make test` (pytest -n ... --dist loadgroup)")
    assert request.config.getvalue("loadgroup")  # the worker's view of --dist loadgroup
    # pytest-xdist schedules by the part of the id after '@': this file's path, one group.
    assert request.node.nodeid.endswith("@tests/tooling/test_parallel_groups.py"), request.node.nodeid
