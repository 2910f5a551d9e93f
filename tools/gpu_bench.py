"""GPU measurements for the GPU runs page: run by `make gpu-check` (tools/gpu_check.py), output kept.

    python tools/gpu_bench.py > docs/gpu-runs/data/bench.txt

- recipe 09's no-op call with CUDA tensors next to the same call with CPU tensors;
- a small CUDA kernel end to end (launch + synchronize) next to torch's;
- last, recipe 10's RMSNorm sweep (tools/rmsnorm_sweep.py: ours, the candidates of
  tools/rmsnorm_lab and the peers against a copy timed in the same round, then Nsight Compute
  at 512 MiB), which writes docs/gpu-runs/data/rmsnorm.json; its plan and time estimate are in
  that file's docstring (about 150 s on the H200 box, bounded by its --budget-s).
Everything is measured in one run; read the ratios, not the absolute times.
"""
import os
import sys
import timeit
from pathlib import Path

import torch
import tvm_ffi

import ffi_cookbook

mod = ffi_cookbook.load()
ROOT = Path(__file__).resolve().parents[1]
print("device:", torch.cuda.get_device_name(), "| torch", torch.__version__, "| tvm_ffi", tvm_ffi.__version__)


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

print("\n## RMSNorm (CUDA): ours, the candidates and the peers against a copy, GB/s and us per call")
sys.path.insert(0, str(ROOT))
from tools import rmsnorm_sweep  # noqa: E402

sys.stdout.flush()
# make gpu-check passes what is left of its own deadline (FFI_COOKBOOK_SWEEP_BUDGET_S); alone, 170 s.
budget = os.environ.get("FFI_COOKBOOK_SWEEP_BUDGET_S", "170")
raise SystemExit(rmsnorm_sweep.main(["--ncu", "--budget-s", budget,
                                     "--out", str(ROOT / "docs" / "gpu-runs" / "data" / "rmsnorm.json")]))
