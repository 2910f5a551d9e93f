"""rms_norm_cuda against a copy of the same bytes and against torch's F.rms_norm, on a CUDA GPU.

    python rmsnorm_gpu_bench.py           # on a machine with a GPU, in this folder: builds, measures, prints
    python rmsnorm_gpu_bench.py --write   # and keeps the result in gpu_run.json, which the notebook plots

GB/s count the bytes a call must move: x read and y written (and the weight, for
RMSNorm). The copy (``y.copy_(x)``) is the device's own memory roofline, measured
in the same run. ``gpu_run.json`` holds the rows and a stamp: device, versions,
date, commit, and the SHA-256 of ``rmsnorm_cuda.cu``, so that a page can tell
whether the kernel changed since.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
RUN_FILE = HERE / "gpu_run.json"
KERNEL_SOURCE = HERE / "rmsnorm_cuda.cu"
HIDDEN = 1024
ROWS = [4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144]  # x from 8 KiB (16-bit) to 1 GiB (float32)
DTYPES = ["float32", "float16", "bfloat16"]
EPS = 1e-6


def kernel_digest() -> str:
    return hashlib.sha256(KERNEL_SOURCE.read_bytes()).hexdigest()


def gpu_seconds(fn, rounds: int = 5) -> float:
    """Best mean seconds per call over ``rounds``, each of back-to-back calls taking >= 2 ms."""
    import torch

    def timed(calls: int) -> float:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(calls):
            fn()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / 1e3

    fn()
    calls = 8
    while timed(calls) < 2e-3 and calls < 1 << 16:
        calls *= 2
    return min(timed(calls) for _ in range(rounds)) / calls


def measure(rms_norm_cuda, rows_list=ROWS, dtypes=DTYPES, hidden: int = HIDDEN) -> dict:
    """The sweep: a row per dtype and size, GB/s of ours, torch's F.rms_norm and the copy."""
    import torch
    import torch.nn.functional as F

    rows = []
    for dtype_name in dtypes:
        dtype = getattr(torch, dtype_name)
        for n_rows in rows_list:
            x = torch.randn(n_rows, hidden, device="cuda", dtype=dtype)
            w = torch.randn(hidden, device="cuda", dtype=dtype)
            y = torch.empty_like(x)
            rms_norm_cuda(x, w, y, EPS)
            torch.testing.assert_close(y, F.rms_norm(x, (hidden,), w, EPS), rtol=2e-2, atol=2e-2)
            t_ours = gpu_seconds(lambda: rms_norm_cuda(x, w, y, EPS))
            t_torch = gpu_seconds(lambda: F.rms_norm(x, (hidden,), w, EPS))
            t_copy = gpu_seconds(lambda: y.copy_(x))
            moved = 2 * x.nbytes + w.nbytes
            rows.append({"dtype": dtype_name, "x_bytes": x.nbytes, "ours": moved / t_ours / 1e9,
                         "torch": moved / t_torch / 1e9, "copy": 2 * x.nbytes / t_copy / 1e9})
            del x, y
    return {"stamp": stamp(), "hidden": hidden, "rows": rows}


def stamp() -> dict:
    """Where and with what the sweep ran."""
    import torch
    import tvm_ffi

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE, capture_output=True, text=True)
    return {"device": torch.cuda.get_device_name(), "cuda": torch.version.cuda, "torch": torch.__version__,
            "apache_tvm_ffi": tvm_ffi.__version__, "date": datetime.date.today().isoformat(),
            "commit": commit.stdout.strip() or None, "rmsnorm_cuda_sha256": kernel_digest(),
            "measured_by": Path(__file__).name}


def dumps(run: dict) -> str:
    """``run`` as JSON with one line per measured row."""
    rows = ",\n".join("  " + json.dumps(r) for r in run["rows"])
    head = json.dumps({k: v for k, v in run.items() if k != "rows"}, indent=1)[:-2]
    return f'{head},\n "rows": [\n{rows}\n ]\n}}\n'


def stored() -> dict:
    """The run kept in gpu_run.json."""
    return json.loads(RUN_FILE.read_text())


def table(run: dict) -> str:
    lines = [f"{'dtype':>9} {'x size':>11} {'ours GB/s':>10} {'torch GB/s':>11} {'copy GB/s':>10} "
             f"{'ours/copy':>10} {'ours/torch':>11}"]
    for r in run["rows"]:
        lines.append(f"{r['dtype']:>9} {r['x_bytes'] / 2**10:>7.0f} KiB {r['ours']:>10.1f} {r['torch']:>11.1f} "
                     f"{r['copy']:>10.1f} {r['ours'] / r['copy']:>10.2f} {r['ours'] / r['torch']:>11.2f}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"keep the result in {RUN_FILE.name}")
    args = parser.parse_args()
    import tvm_ffi
    from ffi_cookbook.build import cmake_build

    mod = tvm_ffi.load_module(str(cmake_build(HERE) / "librmsnorm.so"))
    run = measure(mod.rms_norm_cuda)
    print(json.dumps(run["stamp"]))
    print(table(run))
    if args.write:
        RUN_FILE.write_text(dumps(run))
        print("wrote", RUN_FILE)


if __name__ == "__main__":
    main()
