"""Threads and repetition: every export called from 8 threads at once, and 100,000 calls of
each CPU kernel with resident memory steady.

tvm_ffi releases the GIL during a call, so the threads really run the kernels
at the same time. Each thread has its own arguments; every call must give what
one call alone gave with those arguments (a correct result where a reference
exists), or the same exception.
"""

from __future__ import annotations

import threading

import pytest
import tvm_ffi

from tests.fuzz.exports import exports, signature_of
from tests.fuzz.references import REFERENCES, as_torch
from tests.fuzz.run import default_libraries
from tests.fuzz.samples import comparable, find_shapes, sample_args

THREADS, CALLS_PER_THREAD, REPEAT = 8, 200, 100_000
#: Results that differ between calls by design: compared by type only.
#: (the guide's two allocation examples return fresh, uninitialised tensors)
NONDETERMINISTIC = {"shmem_unique_id_nvshmem", "guide_empty_env", "guide_empty_like"}


@pytest.fixture(scope="module")
def functions():
    """Each export once by name and signature, from the first library that has it (the recipe
    library, then the folders': the same source compiled twice is called once, as the fuzz's
    systematic pass does)."""
    found, seen = [], set()
    for library in default_libraries():
        module = tvm_ffi.load_module(str(library))
        for name in exports(library):
            func = getattr(module, name)
            kinds = signature_of(func)
            if (name, kinds) not in seen:
                seen.add((name, kinds))
                found.append((library.name, name, func, kinds, find_shapes(name, func, kinds)))
    return found


def outcome(name, func, args):
    """What one call gave, in a form two calls can be compared by."""
    before = [as_torch(a).clone() if hasattr(a, "__dlpack__") and not isinstance(a, tvm_ffi.Device) else a
              for a in args]
    try:
        result = func(*args)
    except Exception as e:
        return ("raised", type(e).__name__, str(e).split("\n")[0])
    if name in REFERENCES:
        REFERENCES[name](before, [as_torch(a) if hasattr(a, "__dlpack__") and not isinstance(a, tvm_ffi.Device)
                                  else a for a in args], result)
    return ("returned", type(result).__name__ if name in NONDETERMINISTIC else comparable(result))


def test_every_export_from_eight_threads(functions):
    assert len(functions) >= 40
    failures = []
    for library, name, func, kinds, shapes in functions:
        args = [sample_args(name, kinds, seed, shapes) for seed in range(THREADS)]
        expected = [outcome(name, func, a) for a in args]
        barrier = threading.Barrier(THREADS)

        def work(t):
            barrier.wait()
            for _ in range(CALLS_PER_THREAD):
                try:
                    got = outcome(name, func, args[t])
                except AssertionError as e:  # a reference saw a wrong result
                    got = ("wrong", str(e)[:200])
                if got != expected[t]:
                    failures.append(f"{name} ({library}), thread {t}: {got!r} != {expected[t]!r}")
                    return

        threads = [threading.Thread(target=work, args=(t,)) for t in range(THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert not failures, "\n".join(failures[:20])


def resident_kib() -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))


def test_cpu_kernels_keep_memory_steady(functions):
    """100,000 calls of each CPU kernel (from the recipe library) grow resident memory by < 8 MiB.

    Each kernel is called with arguments it accepts; one for which none was found
    is called with arguments it refuses (its validation and error path repeat).
    """
    import ffi_cookbook

    runtime = ffi_cookbook.library_path().name
    grown, refused = {}, []
    cpu = [(name, func, kinds, shapes) for library, name, func, kinds, shapes in functions
           if library == runtime and name.endswith("_cpu")]
    assert len(cpu) >= 15
    for name, func, kinds, shapes in cpu:
        args = sample_args(name, kinds, 0, shapes)
        if shapes is None:
            refused.append(name)
        for _ in range(1000):  # warm up: first-call allocations, free lists
            call(func, args)
        before = resident_kib()
        for _ in range(REPEAT):
            call(func, args)
        grown[name] = resident_kib() - before
    print(f"repetition: {len(cpu)} CPU kernels x {REPEAT} calls; refused samples: {refused}")
    assert len(refused) <= len(cpu) // 5, refused
    assert max(grown.values()) < 8 * 1024, {k: v for k, v in grown.items() if v >= 1024}


def call(func, args):
    try:
        func(*args)
    except Exception:
        pass
