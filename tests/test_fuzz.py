"""Nothing a caller passes may crash the process: a seeded fuzz of every export.

Exports are found in the built libraries, so a new export is fuzzed without
being listed here. ``FFI_COOKBOOK_FUZZ_CASES`` / ``FFI_COOKBOOK_FUZZ_SEED``
change the budget and the seed; ``make fuzz`` runs ten times the cases.
"""

from __future__ import annotations

import os
import signal

import pytest

import ffi_cookbook
from tests.fuzz.exports import MAY_ABORT
from tests.fuzz.pool import Pool
from tests.fuzz.run import default_libraries, describe, discover, fuzz, probe_library

CASES = int(os.environ.get("FFI_COOKBOOK_FUZZ_CASES", "10000"))
SEED = int(os.environ.get("FFI_COOKBOOK_FUZZ_SEED", "0"))


@pytest.fixture(scope="module")
def pool():
    pool = Pool(probe=str(probe_library()))
    yield pool
    pool.close()


def test_every_export_survives_the_fuzz():
    libraries = default_libraries() + [probe_library()]
    pool = Pool(probe=str(probe_library()))
    try:
        targets = discover(libraries, pool)
        names = {t.name for t in targets}
        expected = {"add_one_cpu", "rms_norm_cpu", "throw_int_demo", "make_tensor"}
        if "cuda" in ffi_cookbook.variants():  # not in the sanitizer run's build (CUDA off)
            expected.add("add_one_cuda")
        assert expected <= names
        report = fuzz(targets, pool, CASES, SEED)
    finally:
        exits = pool.close()
    print(f"fuzz: {len(targets)} exports in {len(libraries)} libraries; {report.summary()}")
    assert not report.failures, "\n\n".join(describe(f) for f in report.failures)
    assert report.cases >= CASES
    assert all(status == 0 for status, _ in exits), exits  # a sanitizer's exit report fails here


def test_only_the_throw_demonstration_may_abort():
    assert MAY_ABORT == {"throw_int_demo"}


def test_signatures_come_from_the_exports(pool):
    targets = {t.name: t.kinds for t in discover([probe_library()], pool)}
    assert targets["check_same_shape"] == ("tensor", "tensor")
    assert targets["dtype_name"] == ("int", "int", "int")
    assert targets["make_tensor"] == ("shape", "shape", "int", "int", "int", "int", "int", "int")


def test_fuzz_reports_a_planted_crash(pool):
    """A probe export that aborts on complex tensors only is found, named, and replayable."""
    crash = probe_library("libcrash_probe.so")
    report = fuzz(discover([crash], pool), pool, 300, SEED)
    assert report.failures, report.summary()
    job, specs, outcome = report.failures[0]
    assert job["name"] == "abort_on_complex" and outcome[:2] == ("died", "signal SIGABRT")
    assert "complex" in repr(specs) or "('raw', 5," in repr(specs), specs
    text = describe(report.failures[0])
    assert "abort_on_complex in libcrash_probe.so" in text and "--replay" in text
    replayed = pool.call(str(crash), "abort_on_complex", specs)
    assert replayed[:2] == ("died", f"signal {signal.SIGABRT.name}")
