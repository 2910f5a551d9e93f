"""GPU measurements for the GPU runs page: run by hand on a GPU box, output kept.

    python tools/gpu_bench.py --rmsnorm-json cookbook/10-rmsnorm/gpu_run.json > docs/gpu-runs/data/bench.txt

- recipe 10's ``rms_norm_cuda`` against a torch copy of the same bytes (the
  device's own memory roofline) and against ``F.rms_norm``, float32, float16 and
  bfloat16, x from 8 KiB to 1 GiB (``--rmsnorm-json``: the stamped result, for the
  recipe page's plot);
- recipe 09's no-op call with CUDA tensors next to the same call with CPU tensors;
- a small CUDA kernel end to end (launch + synchronize) next to torch's.
Everything is measured in one run; read the ratios, not the absolute times.
"""
import argparse
import sys
import timeit
from pathlib import Path

import torch
import tvm_ffi

import ffi_cookbook

parser = argparse.ArgumentParser(description="GPU measurements for the GPU runs page")
parser.add_argument("--rmsnorm-json", help="write recipe 10's stamped sweep here (cookbook/10-rmsnorm/gpu_run.json)")
ARGS = parser.parse_args()
mod = ffi_cookbook.load()
ROOT = Path(__file__).resolve().parents[1]
RECIPE = ROOT / "cookbook" / "10-rmsnorm"
print("device:", torch.cuda.get_device_name(), "| torch", torch.__version__, "| tvm_ffi", tvm_ffi.__version__)


def rmsnorm_run(rows: list[dict]) -> str:
    """Recipe 10's sweep as its page reads it (gpu_run.json): a stamp and one line per row."""
    import datetime
    import hashlib
    import json
    import subprocess

    smi = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    stamp = {"device": torch.cuda.get_device_name(), "driver": smi.stdout.strip() or None, "cuda": torch.version.cuda,
             "torch": torch.__version__, "apache_tvm_ffi": tvm_ffi.__version__,
             "date": datetime.date.today().isoformat(), "commit": commit.stdout.strip() or None,
             "rmsnorm_cuda_sha256": hashlib.sha256((RECIPE / "rmsnorm_cuda.cu").read_bytes()).hexdigest(),
             "measured_by": "tools/gpu_bench.py"}
    lines = ",\n".join("  " + json.dumps({k: round(v, 1) if isinstance(v, float) else v for k, v in r.items()})
                       for r in rows)
    return f'{{\n "stamp": {json.dumps(stamp)},\n "hidden": 1024,\n "rows": [\n{lines}\n ]\n}}\n'


print("\n## RMSNorm (CUDA, hidden=1024) vs torch copy of the same bytes, GB/s counting bytes read + written")
# The sweep is the one recipe 10's GPU timing test runs (test_rmsnorm.gpu_sweep); --rmsnorm-json
# keeps it where the recipe's page plots it from.
sys.path.insert(0, str(RECIPE))
import test_rmsnorm  # noqa: E402

rmsnorm_rows = test_rmsnorm.gpu_sweep(mod.rms_norm_cuda)
print(f"{'dtype':>9} {'x size':>12} {'ours GB/s':>10} {'torch GB/s':>11} {'copy GB/s':>10} {'ours/copy':>10} {'ours/torch':>11}")
for r in rmsnorm_rows:
    print(f"{r['dtype']:>9} {r['x_bytes'] / 2**10:>8.0f} KiB {r['ours']:>10.1f} {r['torch']:>11.1f} {r['copy']:>10.1f} "
          f"{r['ours'] / r['copy']:>10.2f} {r['ours'] / r['torch']:>11.2f}")
if ARGS.rmsnorm_json:
    Path(ARGS.rmsnorm_json).write_text(rmsnorm_run(rmsnorm_rows))
    print("wrote", ARGS.rmsnorm_json)


def ns_per_call(fn, args, repeat=7, seconds=0.02):
    names = [f"a{i}" for i in range(len(args))]
    timer = timeit.Timer(f"fn({', '.join(names)})", globals={"fn": fn, **dict(zip(names, args))})
    number = max(50, int(seconds / max(timer.timeit(50) / 50, 1e-9)))
    return min(timer.repeat(repeat=repeat, number=number)) / number * 1e9


print("\n## Call overhead, no-op taking 3 tensors (ns per call, min of 7): CPU vs CUDA tensors, same run")
cpu = [torch.zeros(4) for _ in range(3)]
gpu = [torch.zeros(4, device="cuda") for _ in range(3)]
rows = {
    "python no-op": (lambda a, b, c: None, cpu, gpu),
    "tvm_ffi + torch.Tensor": (mod.overhead_noop3_cpu, cpu, gpu),
    "tvm_ffi + tvm_ffi.Tensor": (mod.overhead_noop3_cpu, [tvm_ffi.from_dlpack(t) for t in cpu], [tvm_ffi.from_dlpack(t) for t in gpu]),
}
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cookbook" / "09-call-overhead"))
try:
    import overhead_callers as oc
    ext = oc.build_torch_extension()
    rows["pybind11 extension (at::Tensor)"] = (ext.noop3, cpu, gpu)
    rows["TORCH_LIBRARY via torch.ops"] = (torch.ops.cookbook_overhead.noop3, cpu, gpu)
except Exception as err:  # report, keep measuring the rest
    print("pybind11/torch.ops callers unavailable:", type(err).__name__, err)
print(f"{'caller':34} {'CPU ns':>8} {'CUDA ns':>8} {'CUDA/CPU':>9}")
for name, (fn, c, g) in rows.items():
    try:
        tc, tg = ns_per_call(fn, c), ns_per_call(fn, g)
    except Exception as err:
        print(f"{name:34} failed: {type(err).__name__}: {str(err).splitlines()[0][:120]}")
        continue
    print(f"{name:34} {tc:>8.0f} {tg:>8.0f} {tg / tc:>9.2f}")
print("\n## A small CUDA kernel end to end: add_one_cuda on 1024 floats, launch + sync, us per call")
if hasattr(mod, "add_one_cuda"):
    x = torch.randn(1024, device="cuda"); y = torch.empty_like(x)
    def step():
        mod.add_one_cuda(x, y); torch.cuda.synchronize()
    def step_torch():
        torch.add(x, 1, out=y); torch.cuda.synchronize()
    print(f"tvm_ffi add_one_cuda: {ns_per_call(step, [], seconds=0.05)/1e3:.2f} us; torch.add: {ns_per_call(step_torch, [], seconds=0.05)/1e3:.2f} us")
