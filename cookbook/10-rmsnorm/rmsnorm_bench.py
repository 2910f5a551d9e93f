"""The timing harness of this recipe: an RMSNorm, torch's and a plain copy, timed alike.

The notebook and the test both import this file, so what the page measures is
what the test checks.
"""

from __future__ import annotations

import time

import torch
import torch.nn.functional as F


# [timing_harness.begin]
def calls_for(fn, min_round):
    """How many back-to-back calls of fn take at least min_round seconds."""
    calls = 1
    while True:
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        if time.perf_counter() - start >= min_round:
            return calls
        calls *= 2


def best_seconds(fns, min_round=0.01, rounds=15):
    """Best mean time per call of each function; rounds interleave the functions,
    so a burst of load on a shared machine hits all of them alike."""
    counts = [calls_for(fn, min_round) for fn in fns]
    best = [float("inf")] * len(fns)
    for _ in range(rounds):
        for i, (fn, calls) in enumerate(zip(fns, counts)):
            start = time.perf_counter()
            for _ in range(calls):
                fn()
            best[i] = min(best[i], (time.perf_counter() - start) / calls)
    return best


def roofline_point(rms_norm, rows, hidden, eps, rounds=15):
    """(bytes of x, GB/s of rms_norm(x, w, y, eps), of F.rms_norm, of y.copy_(x)) for a
    float32 x of rows × hidden, all on one thread. RMSNorm moves x and w in and y out;
    the copy moves x in and y out."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        x = torch.randn(rows, hidden)
        w = torch.randn(hidden)
        y = torch.empty_like(x)
        moved = 2 * x.nbytes + w.nbytes
        t_ours, t_torch, t_copy = best_seconds([
            lambda: rms_norm(x, w, y, eps),
            lambda: F.rms_norm(x, (hidden,), w, eps),
            lambda: y.copy_(x),
        ], rounds=rounds)
    finally:
        torch.set_num_threads(threads)
    return x.nbytes, moved / t_ours / 1e9, moved / t_torch / 1e9, 2 * x.nbytes / t_copy / 1e9
# [timing_harness.end]
