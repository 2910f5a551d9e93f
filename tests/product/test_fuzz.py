"""Nothing a caller passes may crash the process: two passes over every export.

First the systematic pass: every bad value of every kind in every parameter, the
other arguments valid; then a seeded random search. Exports are found in the
built libraries, so a new export is fuzzed without being listed here, and a test
below fails when an export in the sources is in no library the fuzz calls.
``FFI_COOKBOOK_FUZZ_CASES`` / ``FFI_COOKBOOK_FUZZ_SEED`` change the random
search's budget and seed; ``make fuzz`` runs ten times the cases.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
from pathlib import Path

import pytest

from tests.fuzz.cases import BAD_VALUES, TENSOR_FAULTS, systematic_cases
from tests.fuzz.exports import MAY_ABORT, Target
from tests.fuzz.pool import Pool
from tests.fuzz.run import (NEW_LIBRARY, built_variants, default_libraries, describe, discover, fuzz,
                            probe_library, sanitized_run, systematic, systematic_targets)

ROOT = Path(__file__).resolve().parents[2]

CASES = int(os.environ.get("FFI_COOKBOOK_FUZZ_CASES", "10000"))
SEED = int(os.environ.get("FFI_COOKBOOK_FUZZ_SEED", "0"))


@pytest.fixture(scope="module")
def pool():
    pool = Pool(probe=str(probe_library()))
    yield pool
    pool.close()


@pytest.fixture(scope="module")
def libraries():
    return default_libraries() + [probe_library()]


def _run(libraries, run):
    """Discover the exports and run one pass in a fresh pool; (targets, report, exit statuses)."""
    pool = Pool(probe=str(probe_library()))
    try:
        targets = discover(libraries, pool)
        report = run(targets, pool)
    finally:
        exits = pool.close()
    print(f"fuzz: {len(targets)} exports in {len(libraries)} libraries; {report.summary()}")
    return targets, report, exits


def test_every_export_survives_the_systematic_pass(libraries):
    targets, report, exits = _run(libraries, systematic)
    assert not report.failures, "\n\n".join(describe(f) for f in report.failures)
    expected = sum(len(systematic_cases(t.kinds)) for t in systematic_targets(targets))
    assert report.cases == expected > 0
    assert all(status == 0 for status, _ in exits), exits  # a sanitizer's exit report fails here


def test_every_export_survives_the_fuzz(libraries):
    targets, report, exits = _run(libraries, lambda targets, pool: fuzz(targets, pool, CASES, SEED))
    names = {t.name for t in targets}
    expected = {"add_one_cpu", "rms_norm_cpu", "throw_int_demo", "make_tensor", "nonzero_indices_cpu"}
    if "cuda" in built_variants():  # not in the sanitizer run's build (CUDA off)
        expected.add("add_one_cuda")
    assert expected <= names
    assert not report.failures, "\n\n".join(describe(f) for f in report.failures)
    assert report.cases >= CASES
    assert all(status == 0 for status, _ in exits), exits  # a sanitizer's exit report fails here


def test_the_systematic_pass_puts_every_bad_value_in_every_parameter():
    kinds = ("tensor", "function", "int")
    cases = systematic_cases(kinds)
    assert cases == systematic_cases(kinds)  # the same in every run
    every = [v for values in BAD_VALUES.values() for v in values]
    for i, kind in enumerate(kinds):
        here = [c[i] for c in cases if len(c) == 3 and sum(a[0] != "valid" for a in c) == 1
                and c[i][0] != "valid"]
        assert all(v in here for v in every), kind
        assert (("bad", i, "float64") in here) == (kind == "tensor")
        assert len(here) == len(every) + (len(TENSOR_FAULTS) if kind == "tensor" else 0)
    assert (("valid", 0), ("none",), ("valid", 2)) in cases  # the case of issue 29
    assert (("valid", 0), ("valid", 1)) in cases and (("valid", 0), ("valid", 1), ("valid", 2), ("int", 1)) in cases


def test_the_byte_offset_fault_puts_the_values_one_element_past_the_data_pointer():
    """What the fault relies on: DLPack readers (torch here, the references) find the values at
    data + byte_offset, so a kernel reading from data_ptr() alone gets them shifted by one and
    the export's reference reports a wrong answer."""
    import torch
    import tvm_ffi

    from tests.fuzz.materialize import fault

    probe = tvm_ffi.load_module(str(probe_library()))
    values = torch.arange(1.0, 9.0)
    shifted = fault(values, "byte_offset", probe)
    seen = torch.from_dlpack(shifted)
    assert torch.equal(seen, values)
    assert seen.data_ptr() == probe.data_address(shifted) + values.element_size()


@pytest.mark.skipif(sanitized_run(),
                    reason="a planted crash: under the sanitizers UBSan reports it first, as it should")
def test_the_systematic_pass_finds_a_none_callback_crash(pool):
    """The probe's export that calls its callback without checking it is found with None."""
    crash = probe_library("libcrash_probe.so")
    targets = [t for t in discover([crash], pool) if t.name == "call_unchecked"]
    assert [t.kinds for t in targets] == [("function",)]
    report = systematic(targets, pool)
    died = [(specs, outcome) for job, specs, outcome in report.failures if outcome[0] == "died"]
    assert died and died[0][0] == (("none",),), report.failures
    assert died[0][1][1] == f"signal {signal.SIGSEGV.name}", died[0][1]


#: Export sources the fuzz does not call, each with its reason; an export whose name is
#: in no library the fuzz calls, and that is not here, fails the test below.
NOT_FUZZED = {
    ("cookbook/19-debugging-crashes/broken_kernels.cc", "exclusive_scan_off_by_one"): "broken on purpose",
    ("cookbook/19-debugging-crashes/broken_kernels.cc", "gather_unchecked"): "broken on purpose",
    ("cookbook/19-debugging-crashes/broken_launches.cu", "fill_unchecked"): "broken on purpose",
    ("cookbook/19-debugging-crashes/broken_launches.cu", "fill_checked"): "in the crash demos, with the two above",
    ("cookbook/19-debugging-crashes/broken_launches.cu", "write_at"): "broken on purpose",
    ("tests/probe/crash_probe.cc", "abort_on_complex"): "the planted crashes of the tests above",
    ("tests/probe/crash_probe.cc", "call_unchecked"): "the planted crashes of the tests above",
    ("tests/tooling/test_sanitize.py", "leaky_add_one"): "a planted leak the sanitizer must report",
    ("cookbook/19-debugging-crashes/missing_symbol.cc", "twice"): "a library that cannot load, by design",
    ("cookbook/15-jit-kernels/row_norm_jit.py", "{name}"): "JIT: row_norm_cpu.cc holds instances",
    ("cookbook/15-jit-kernels/test_row_norm.py", "row_norm_float64_n96_u2_cpu"): "JIT: one more instance",
    ("tests/product/test_wheel.py", "twice"): "a test's own one-line wheel",
    ("tests/tooling/snippets_fixture/docs/good.md", "twice"): "a page the snippet checker's test reads",
    ("docs/_code/first-kernel/add_one.cc", "add_one"): "the home page's kernel, built by g++ in a page cell",
    ("tests/site/test_get_started.py", "add_one"): "Get started's kernel, built in a fresh venv by its test",
    ("tests/site/test_site.py", "add_one"): "a test's copy of Get started's kernel",
    **{(f"tools/rmsnorm_lab/{file}.cu", f"rms_norm_lab_{name}"):
       "a candidate of the GPU RMSNorm sweep, not a recipe: its argument checks are recipe 10's, tested "
       "for every candidate by tests/tooling/test_rmsnorm_lab.py; its kernels run on a GPU only"
       for file, names in {"packed": ("packed", "remat"), "persistent": ("persistent",), "rows": ("rows2", "rows4"),
                           "streaming": ("streaming",), "widerows": ("widerows",)}.items() for name in names},
}

_CUDA_HEADER = re.compile(r"#\s*include\s*<(cuda|cuda_runtime|cuda_runtime_api)\.h>")
_CUDA_PROJECT = re.compile(r"^\s*project\([^)]*\bLANGUAGES\b[^)]*\bCUDA\b", re.M)


def _needs_cuda(path: str) -> bool:
    """Whether a build compiles ``path`` only with CUDA: a ``.cu`` file, C++ that includes the
    CUDA runtime or driver API (built only where the toolkit is found), or a file of a CMake
    project that declares CUDA as a language (nvcc required). Read from the files, so a new
    recipe needs no entry here."""
    source = ROOT / path
    if source.suffix == ".cu" or _CUDA_HEADER.search(source.read_text(errors="replace")):
        return True
    for folder in source.parents:
        cmake = folder / "CMakeLists.txt"
        if cmake.is_file():
            return bool(_CUDA_PROJECT.search(cmake.read_text()))
        if folder == ROOT:
            break
    return False


def _excused(path: str, variants: list[str]) -> bool:
    """An export whose source this build compiles only with a toolkit it lacks."""
    if "nvshmem" in path and "nvshmem" not in variants:
        return True
    return "cuda" not in variants and _needs_cuda(path)

_EXPORT = re.compile(r"TVM_FFI_DLL_EXPORT_TYPED_FUNC\(\s*([\w@{}]+)\s*,|\b__tvm_ffi_(\w+)\s*\(")
_FENCE = re.compile(r"^(```|~~~)[^\n]*\n(.*?)^\1", re.M | re.S)


def source_exports() -> dict[tuple[str, str], str]:
    """Every export the tracked sources define: (path, name) -> the line."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True,
                           text=True).stdout.split("\0")
    found = {}
    for rel in files:
        if not rel.endswith((".cc", ".cu", ".cpp", ".c", ".h", ".py", ".md")) or rel.startswith("tests/fuzz/"):
            continue
        text = (ROOT / rel).read_text(errors="replace")
        if rel.endswith(".md"):  # code on a page, not prose that names the macro
            text = "\n".join(m.group(2) for m in _FENCE.finditer(text))
        for m in _EXPORT.finditer(text):
            name = (m.group(1) or m.group(2)).replace("@name@", NEW_LIBRARY)
            if name not in ("name", "NAME"):  # the macro's own parameter, in a comment
                found[rel, name] = m.group(0)
    return found


def test_every_export_in_the_sources_is_fuzzed(libraries, pool):
    """An export of any library the site or the tests build is called by both passes: its
    library is one the fuzz finds, or it is listed in NOT_FUZZED with its reason."""
    fuzzed = {t.name for t in discover(libraries, pool)}
    exports = source_exports()
    variants = built_variants()
    missing = sorted(k for k in exports if k[1] not in fuzzed and k not in NOT_FUZZED
                     and not _excused(k[0], variants))
    assert not missing, (f"exports in no library the fuzz calls: {missing}; build them in a project "
                         "tests/fuzz/run.py finds (projects()), or list them in NOT_FUZZED with a reason")
    stale = sorted(k for k in NOT_FUZZED if k not in exports or k[1] in fuzzed)
    assert not stale, f"NOT_FUZZED entries that are gone or fuzzed now: {stale}"
    assert ("cookbook/16-objects-and-callbacks/nonzero_callback_cpu.cc", "nonzero_indices_cpu") in exports


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
    targets = [t for t in discover([crash], pool) if t.name == "abort_on_complex"]
    report = fuzz(targets, pool, 300, SEED)
    assert report.failures, report.summary()
    job, specs, outcome = report.failures[0]
    assert job["name"] == "abort_on_complex" and outcome[:2] == ("died", "signal SIGABRT")
    assert "complex" in repr(specs) or "('raw', 5," in repr(specs), specs
    text = describe(report.failures[0])
    assert "abort_on_complex in libcrash_probe.so" in text and "--replay" in text
    replayed = pool.call(str(crash), "abort_on_complex", specs)
    assert replayed[:2] == ("died", f"signal {signal.SIGABRT.name}")
