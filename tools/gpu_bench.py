"""GPU measurements for the GPU runs page: run by hand on a GPU box, output kept.

    python tools/gpu_bench.py > docs/gpu-runs/data/bench.txt

- recipe 10's ``rms_norm_cuda`` against a torch copy of the same bytes (the
  device's own memory roofline) and against ``F.rms_norm``, over the sizes of
  the CPU sweep on the recipe page and beyond;
- recipe 09's no-op call with CUDA tensors next to the same call with CPU tensors;
- a small CUDA kernel end to end (launch + synchronize) next to torch's.
Everything is measured in one run; read the ratios, not the absolute times.
"""
import sys
import timeit
from pathlib import Path

import torch
import torch.nn.functional as F
import tvm_ffi

import ffi_cookbook

mod = ffi_cookbook.load()
EPS = 1e-6
print("device:", torch.cuda.get_device_name(), "| torch", torch.__version__, "| tvm_ffi", tvm_ffi.__version__)


def gpu_seconds(fn, rounds=5):
    """Best mean seconds per call over rounds, each round >= ~2 ms of back-to-back launches."""
    fn(); torch.cuda.synchronize()
    calls = 8
    while True:
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(calls):
            fn()
        e.record(); e.synchronize()
        if s.elapsed_time(e) > 2.0 or calls > 1 << 16:
            break
        calls *= 2
    best = float("inf")
    for _ in range(rounds):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(calls):
            fn()
        e.record(); e.synchronize()
        best = min(best, s.elapsed_time(e) / 1e3 / calls)
    return best


hidden = 1024
print("\n## RMSNorm (CUDA, hidden=1024) vs torch copy of the same bytes, GB/s counting bytes read + written")
for dtype in (torch.float32, torch.bfloat16):
    print(f"\ndtype {dtype}")
    print(f"{'x size':>12} {'ours GB/s':>10} {'torch GB/s':>11} {'copy GB/s':>10} {'ours/torch':>11} {'ours/copy':>10}")
    for rows in [4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144]:
        x = torch.randn(rows, hidden, device="cuda", dtype=dtype)
        w = torch.randn(hidden, device="cuda", dtype=dtype)
        y = torch.empty_like(x)
        moved = 2 * x.nbytes + w.nbytes
        t_ours = gpu_seconds(lambda: mod.rms_norm_cuda(x, w, y, EPS))
        t_torch = gpu_seconds(lambda: F.rms_norm(x, (hidden,), w, EPS))
        t_copy = gpu_seconds(lambda: y.copy_(x))
        ours, theirs, copy = moved / t_ours / 1e9, moved / t_torch / 1e9, 2 * x.nbytes / t_copy / 1e9
        tag = "" if rows <= 4096 else "  (beyond the CPU sweep)"
        print(f"{x.nbytes / 2**10:>8.0f} KiB {ours:>10.1f} {theirs:>11.1f} {copy:>10.1f} {ours / theirs:>11.2f} {ours / copy:>10.2f}{tag}")
        mod.rms_norm_cuda(x, w, y, EPS)  # y held the copy's result
        torch.testing.assert_close(y, F.rms_norm(x, (hidden,), w, EPS), rtol=2e-2, atol=2e-2)


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
