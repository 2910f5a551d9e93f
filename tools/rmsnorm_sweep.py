"""RMSNorm against the memory roofline on a GPU: recipe 10's kernel, every candidate of
tools/rmsnorm_lab and the peers, each against a copy of the same bytes timed in the same round.

    python tools/rmsnorm_sweep.py                  # on a GPU box: measure, write docs/gpu-runs/data/rmsnorm.json
    python tools/rmsnorm_sweep.py --ncu            # and Nsight Compute metrics at 512 MiB
    python tools/rmsnorm_sweep.py --dry-run        # anywhere: the plan, the peers found (or why not),
                                                   # the json writer on empty numbers; times nothing

Contestants: ``ours`` (cookbook/10-rmsnorm/rmsnorm_cuda.cu, built here with the candidates' flags),
the candidates of tools/rmsnorm_lab (``packed``, ``remat``, ...), and the peers where importable:
``torch`` (``F.rms_norm``), ``torch_compile`` (the recipe's float32 formula through
``torch.compile``, rows dynamic), ``liger`` (liger-kernel's Triton forward, ``casting_mode="gemma"``:
float32 throughout, rounded once, as ours) and ``quack`` (quack-kernels' CuTe DSL ``rmsnorm_fwd``).
Each is first checked against the recipe's float32 formula at every dtype and hidden size (and two
odd shapes); one that differs by more than the dtype's rounding step is reported and not timed.

What is measured:

- **bandwidth**: hidden 1024, 4096 and 8192, x of 16, 64, 256 and 1024 MiB, float32, float16 and
  bfloat16 (36 points). In each round every contestant and ``copy`` (``y.copy_(x)``) is timed at
  every point with ``triton.testing.do_bench`` (L2 flushed before each call; the median of the
  calls); GB/s counts x read, y written and the weight read once (the copy: x and y). A point's
  figure is the median of its rounds; ``of_copy`` is the median of the per-round ratios to the
  copy of the same round, with their range.
- **decode**: 1, 4, 16 and 32 rows at the same hidden sizes and dtypes, microseconds per call of
  back-to-back calls (``torch.utils.benchmark``, which synchronises): where launch and per-call
  costs rule, not memory.
- **ncu** (``--ncu``, where ``ncu`` is found): ours, the best candidate and the best peer, bfloat16,
  x of 512 MiB, hidden 1024 and 4096: DRAM throughput as a share of peak, the peak itself,
  achieved occupancy, registers, bytes per global load and store request, DRAM bytes moved.

Plan and expected seconds on the H200 box (16 cores; 11 contestants without quack, which cannot
be carried there: see tools/gpu_check.py's wheel list; 12 timed with the copy), in the order run:

    setup   imports 8, ours and the lab built with nvcc (ninja, in parallel) 20          ~28 s
    check   torch.compile 9 graphs ~40, Liger's Triton 9 kernels ~9, the checks ~3       ~52 s
    sweep   36 points x 12 timed x 3 rounds x ~12 ms (warmup 2 ms + rep 8 ms + overhead) ~16 s
    decode  36 points x 12 timed x 3 rounds x ~15 ms                                     ~19 s
    ncu     6 child processes (3 contestants x 2 hidden), ~6 s each                      ~36 s
                                                                                 total ~151 s

The estimates of compile and start-up times are guesses (nothing here has run on a GPU yet);
the json keeps the run's own seconds, so the next plan can use them.

``--budget-s`` (default 200; tools/gpu_bench.py passes 170) bounds the run: a part that would start past it is skipped (a
round of the sweep, the decode, the profiler) and the json says what was left out; what ran is
kept. ``--dry-run`` prints this plan with the estimate made from the contestants found.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import io
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
RECIPE = ROOT / "cookbook" / "10-rmsnorm"
OUT = ROOT / "docs" / "gpu-runs" / "data" / "rmsnorm.json"
sys.path.insert(0, str(ROOT))

DTYPES = ("float32", "float16", "bfloat16")
HIDDEN = (1024, 4096, 8192)
X_MIB = (16, 64, 256, 1024)
DECODE_ROWS = (1, 4, 16, 32)
ROUNDS = 3
WARMUP_MS, REP_MS = 2, 8  # do_bench's warm-up and repetition time per call
DECODE_MIN_S = 0.01  # torch.utils.benchmark's min_run_time per decode timing
NCU_MIB, NCU_HIDDEN, NCU_DTYPE = 512, (1024, 4096), "bfloat16"
EPS = 1e-6
TOLERANCE = {"float32": (1.3e-6, 1e-5), "float16": (1e-3, 1e-3), "bfloat16": (8e-3, 8e-3)}  # the recipes' (one rounding step)
#: Seconds per (point, contestant) and fixed costs, for the plan (estimates for the H200 box).
EST = {"imports": 8, "build": 20, "compile_graph": 4.5, "liger_kernel": 1.0, "checks": 3,
       "bench": (WARMUP_MS + REP_MS) / 1e3 + 0.002, "decode": DECODE_MIN_S * 1.5, "ncu_child": 6}
NCU_METRICS = [
    "gpu__time_duration.sum",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "dram__bytes_read.sum", "dram__bytes_write.sum",
    "dram__bytes.sum.peak_sustained", "dram__cycles_elapsed.avg.per_second",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "sm__maximum_warps_per_active_cycle_pct",
    "launch__registers_per_thread", "launch__grid_size", "launch__block_size",
    "l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_bytes_pipe_lsu_mem_global_op_st.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
]


# ------------------------------------------------------------------------------- contestants

@dataclass
class Contestant:
    """One RMSNorm: ``make(x, w, y)`` returns a call of it with no arguments that returns y."""
    name: str
    kind: str  # "ours", "candidate" or "peer"
    what: str
    make: Callable | None = None
    missing: str | None = None  # why it is not in the run
    wrong: str | None = None  # why its result was not accepted
    info: dict = field(default_factory=dict)


def reference(x, w, eps=EPS):
    """The recipe's formula: in float32, rounded once to x's dtype."""
    import torch

    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * w.float()).to(x.dtype)


def build_ours_and_lab(build: Path, dry_run: bool) -> list[Contestant]:
    from tools import rmsnorm_lab

    found = [Contestant("ours", "ours", "recipe 10's rms_norm_cuda (rmsnorm_cuda.cu)")]
    found += [Contestant(name, "candidate", what) for name, what in rmsnorm_lab.CANDIDATES.items()]
    if rmsnorm_lab.cuda_home() is None:
        for c in found:
            c.missing = "no CUDA toolkit (nvcc) to build it"
        return found
    exporters = {name: f"tools/rmsnorm_lab/{source.name}" for source in rmsnorm_lab.SOURCES
                 for name in rmsnorm_lab.CANDIDATES if f"rms_norm_lab_{name}," in source.read_text()}
    for c in found:
        c.info["source"] = "cookbook/10-rmsnorm/rmsnorm_cuda.cu" if c.kind == "ours" else exporters.get(c.name)
    if dry_run:
        return found
    import tvm_ffi
    import tvm_ffi.cpp

    lab = tvm_ffi.load_module(rmsnorm_lab.build(build / "lab"))
    (build / "ours").mkdir(parents=True, exist_ok=True)
    ours = tvm_ffi.load_module(tvm_ffi.cpp.build(
        "rmsnorm_ours", sources=[str(RECIPE / "rmsnorm_cuda.cu")], extra_cuda_cflags=["-O3"],
        extra_include_paths=[str(RECIPE), str(ROOT / "include")], build_directory=str(build / "ours")))
    for c in found:
        fn = ours.rms_norm_cuda if c.kind == "ours" else getattr(lab, f"rms_norm_lab_{c.name}")
        c.make = lambda x, w, y, fn=fn: (lambda: (fn(x, w, y, EPS), y)[1])
    return found


def find_peers(dry_run: bool) -> list[Contestant]:
    """The peers, each with ``make`` or with ``missing`` saying why not."""
    peers = [Contestant("torch", "peer", "torch.nn.functional.rms_norm"),
             Contestant("torch_compile", "peer", "the float32 formula through torch.compile (rows dynamic)"),
             Contestant("liger", "peer", "liger-kernel rms_norm_forward, Triton, casting_mode='gemma'"),
             Contestant("quack", "peer", "quack-kernels rmsnorm_fwd, CuTe DSL")]
    torch_, compile_, liger, quack = peers
    try:
        import torch
        import torch.nn.functional as F
    except ImportError as err:
        for p in peers:
            p.missing = f"torch not importable ({err})"
        return peers
    torch_.info["version"] = torch.__version__
    torch_.make = lambda x, w, y: (lambda: F.rms_norm(x, (x.shape[-1],), w, EPS))
    gpu = torch.cuda.is_available()
    try:
        import triton

        compile_.info["triton"] = triton.__version__
    except ImportError as err:
        compile_.missing = f"triton not importable ({err}): torch.compile's CUDA code is Triton"
    if compile_.missing is None:
        compiled: dict = {}

        def make_compiled(x, w, y):
            key = (x.dtype, x.shape[-1])
            if key not in compiled:
                # One graph per dtype and hidden size; rows stay symbolic (1 included).
                compiled[key] = torch.compile(lambda a, b: reference(a, b), dynamic=False)
            fn = compiled[key]
            torch._dynamo.maybe_mark_dynamic(x, 0)
            return lambda: fn(x, w)

        compile_.make = make_compiled
    try:
        from liger_kernel.ops.rms_norm import rms_norm_forward
        from importlib import metadata

        liger.info["version"] = metadata.version("liger-kernel")
        liger.make = lambda x, w, y: (lambda: rms_norm_forward(x, w, EPS, 0.0, "gemma", None)[0])
    except Exception as err:  # noqa: BLE001  (any import failure is a reason to report)
        liger.missing = f"{type(err).__name__}: {err}"
    try:
        from quack.rmsnorm import rmsnorm_fwd
        from importlib import metadata

        quack.info["version"] = metadata.version("quack-kernels")
        quack.make = lambda x, w, y: (lambda: rmsnorm_fwd(x, w, eps=EPS)[0])
    except Exception as err:  # noqa: BLE001
        quack.missing = f"{type(err).__name__}: {err}"
    if not gpu and not dry_run:
        for p in peers:
            p.missing = p.missing or "no CUDA GPU"
    return peers


def configure_compile() -> None:
    """Room for one graph per dtype and hidden size, and size-1 rows not specialised."""
    import torch

    for name in ("recompile_limit", "cache_size_limit"):
        if hasattr(torch._dynamo.config, name):
            setattr(torch._dynamo.config, name, 64)
    try:
        import torch.fx.experimental._config as fx_config

        fx_config.backed_size_oblivious = True
    except (ImportError, AttributeError):
        pass


# ------------------------------------------------------------------------------------ shapes

def sweep_points() -> list[dict]:
    points = []
    for dtype in DTYPES:
        itemsize = 4 if dtype == "float32" else 2
        for hidden in HIDDEN:
            for mib in X_MIB:
                points.append({"dtype": dtype, "hidden": hidden, "x_mib": mib,
                               "rows": (mib << 20) // itemsize // hidden})
    return points


def decode_points() -> list[dict]:
    return [{"dtype": d, "hidden": h, "rows": r} for d in DTYPES for h in HIDDEN for r in DECODE_ROWS]


def check_shapes(kind: str, hidden: int) -> list[tuple[int, int]]:
    """Rows as timed (many, and one); for our kernels also rows no multiple of a 16-byte pack
    (their fallback), which the peers are spared (each new length would compile again)."""
    timed = [(257, hidden), (1, hidden)]
    return timed + [(3, hidden + 8), (5, 33)] if kind in ("ours", "candidate") else timed


def estimate(contestants: list[Contestant], ncu: bool) -> dict[str, float]:
    """Seconds per part, from EST and the contestants that will run (plus the copy)."""
    live = [c for c in contestants if c.missing is None]
    timed = len(live) + 1
    graphs = len(DTYPES) * len(HIDDEN)
    check = EST["checks"]
    check += graphs * EST["compile_graph"] if any(c.name == "torch_compile" for c in live) else 0
    check += graphs * EST["liger_kernel"] if any(c.name == "liger" for c in live) else 0
    check += graphs * 3 if any(c.name == "quack" for c in live) else 0
    parts = {"setup": EST["imports"] + EST["build"], "check": check,
             "sweep": len(sweep_points()) * timed * ROUNDS * EST["bench"],
             "decode": len(decode_points()) * timed * ROUNDS * EST["decode"],
             "ncu": 3 * len(NCU_HIDDEN) * EST["ncu_child"] if ncu else 0.0}
    parts["total"] = sum(parts.values())
    return parts


# ------------------------------------------------------------------------------------ checks

def check_all(contestants: list[Contestant]) -> None:
    """Each live contestant against the formula, at every dtype and hidden size; also compiles
    (torch.compile, Triton, CuTe DSL) before anything is timed."""
    import torch

    gen = torch.Generator(device="cuda").manual_seed(0)
    for dtype in DTYPES:
        rtol, atol = TOLERANCE[dtype]
        for hidden in HIDDEN:
            for shape in check_shapes("ours", hidden):
                x = torch.randn(shape, device="cuda", generator=gen).to(getattr(torch, dtype))
                w = torch.randn(shape[-1], device="cuda", generator=gen).to(x.dtype)
                expected = reference(x, w)
                for c in contestants:
                    if c.missing or c.wrong or shape not in check_shapes(c.kind, hidden):
                        continue
                    y = torch.full_like(x, float("nan"))
                    try:
                        got = c.make(x, w, y)()
                        torch.cuda.synchronize()
                        torch.testing.assert_close(got, expected, rtol=rtol, atol=atol)
                    except Exception as err:  # noqa: BLE001  (reported, and the contestant not timed)
                        c.wrong = f"{dtype} {tuple(shape)}: {type(err).__name__}: {str(err).strip().splitlines()[0][:200]}"
    for c in contestants:
        if c.wrong:
            print(f"  not timed, wrong result: {c.name}: {c.wrong}", flush=True)


# ------------------------------------------------------------------------------------ timing

def bandwidth_round(points: list[dict], tensors: dict, contestants: list[Contestant], round_no: int) -> None:
    """One round: at each point, the copy and every live contestant, in an order that turns
    with the round (so no one always follows the copy)."""
    import torch
    from triton.testing import do_bench

    live = [c for c in contestants if not (c.missing or c.wrong)]
    for i, p in enumerate(points):
        key = (p["dtype"], p["hidden"], p["x_mib"])
        if key not in tensors:
            x = torch.randn(p["rows"], p["hidden"], device="cuda", dtype=getattr(torch, p["dtype"]))
            tensors[key] = (x, torch.randn(p["hidden"], device="cuda", dtype=x.dtype), torch.empty_like(x))
        x, w, y = tensors[key]
        calls = [("copy", lambda: y.copy_(x), 2 * x.nbytes)] + [
            (c.name, c.make(x, w, y), 2 * x.nbytes + w.nbytes) for c in live]
        shift = (round_no + i) % len(calls)
        for name, fn, moved in calls[shift:] + calls[:shift]:
            ms = do_bench(fn, warmup=WARMUP_MS, rep=REP_MS, return_mode="median")
            p.setdefault("rounds", {}).setdefault(name, []).append(moved / ms / 1e6)


def summarise(points: list[dict]) -> list[dict]:
    rows = []
    for p in points:
        rounds = p.get("rounds", {})
        copy = rounds.get("copy", [])
        row = {k: p[k] for k in ("dtype", "hidden", "x_mib", "rows")}
        row["x_bytes"] = p["x_mib"] << 20
        row["gbps"] = {name: round(statistics.median(v), 1) for name, v in rounds.items()}
        row["of_copy"], row["of_copy_range"] = {}, {}
        for name, v in rounds.items():
            if name == "copy" or len(v) != len(copy):
                continue
            ratios = [a / b for a, b in zip(v, copy)]
            row["of_copy"][name] = round(statistics.median(ratios), 3)
            row["of_copy_range"][name] = [round(min(ratios), 3), round(max(ratios), 3)]
        row["rounds"] = len(copy)
        rows.append(row)
    return rows


def decode_part(contestants: list[Contestant]) -> list[dict]:
    """Microseconds per call, median of ROUNDS rounds, each a torch.utils.benchmark median."""
    import torch
    from torch.utils import benchmark

    live = [c for c in contestants if not (c.missing or c.wrong)]
    rows = []
    for p in decode_points():
        x = torch.randn(p["rows"], p["hidden"], device="cuda", dtype=getattr(torch, p["dtype"]))
        w, y = torch.randn(p["hidden"], device="cuda", dtype=x.dtype), torch.empty_like(x)
        calls = [("copy", lambda: y.copy_(x))] + [(c.name, c.make(x, w, y)) for c in live]
        us: dict[str, list[float]] = {}
        for _ in range(ROUNDS):
            for name, fn in calls:
                fn()
                timer = benchmark.Timer("fn()", globals={"fn": fn})
                us.setdefault(name, []).append(timer.blocked_autorange(min_run_time=DECODE_MIN_S).median * 1e6)
        rows.append(dict(p, us={name: round(statistics.median(v), 2) for name, v in us.items()}))
    return rows


# --------------------------------------------------------------------------------------- ncu

def ncu_path() -> str | None:
    found = shutil.which("ncu")
    if found:
        return found
    for pattern in ("/opt/nvidia/nsight-compute/*/ncu", "/usr/local/cuda*/bin/ncu", "/usr/local/cuda*/nsight-compute*/ncu"):
        hits = sorted(Path("/").glob(pattern.lstrip("/")), reverse=True)
        if hits:
            return str(hits[0])
    return None


def ncu_child(args) -> int:
    """In the process ncu runs: one call of one contestant between cudaProfilerStart and Stop
    (a call before it compiles and warms up, unprofiled)."""
    import torch

    contestants = {c.name: c for c in build_ours_and_lab(args.build, False) + find_peers(False)}
    c = contestants[args.ncu_child]
    x = torch.randn((NCU_MIB << 20) // 2 // args.hidden, args.hidden, device="cuda", dtype=getattr(torch, NCU_DTYPE))
    w, y = torch.randn(args.hidden, device="cuda", dtype=x.dtype), torch.empty_like(x)
    if c.name == "torch_compile":
        configure_compile()
    fn = c.make(x, w, y)
    fn()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    fn()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()
    return 0


def ncu_part(names: list[str], build: Path) -> dict:
    """Metrics of each named contestant's kernels at NCU_MIB of NCU_DTYPE, per hidden size."""
    ncu = ncu_path()
    if ncu is None:
        return {"missing": "ncu not found on PATH or under /opt/nvidia/nsight-compute"}
    result: dict = {"dtype": NCU_DTYPE, "x_mib": NCU_MIB, "metrics": NCU_METRICS, "runs": []}
    for hidden in NCU_HIDDEN:
        for name in names:
            cmd = [ncu, "--clock-control", "none", "--profile-from-start", "off", "--target-processes",
                   "application-only", "--csv", "--page", "raw",
                   "--metrics", ",".join(NCU_METRICS), sys.executable, str(Path(__file__).resolve()),
                   "--ncu-child", name, "--hidden", str(hidden), "--build", str(build)]
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
            run = {"contestant": name, "hidden": hidden, "kernels": parse_ncu_csv(done.stdout)}
            if done.returncode or not run["kernels"]:
                run["error"] = (done.stderr.strip() or done.stdout.strip())[-600:]
            result["runs"].append(run)
            print(f"  ncu {name} hidden {hidden}: {len(run['kernels'])} kernels"
                  + (f", error: {run['error'][-200:]}" if run.get("error") else ""), flush=True)
    return result


def parse_ncu_csv(text: str) -> list[dict]:
    """ncu --csv --page raw: a header row of metric names, a units row, one row per kernel."""
    lines = [line for line in text.splitlines() if line.startswith('"')]
    if len(lines) < 3:
        return []
    rows = list(csv.reader(io.StringIO("\n".join(lines))))
    header, kernels = rows[0], rows[2:]
    out = []
    for row in kernels:
        record = dict(zip(header, row))
        entry = {"kernel": record.get("Kernel Name", "")[:120]}
        for metric in NCU_METRICS:
            value = record.get(metric, "").replace(",", "")
            try:
                entry[metric] = float(value)
            except ValueError:
                entry[metric] = None
        ld_req = entry.get("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum")
        st_req = entry.get("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum")
        entry["bytes_per_load_request"] = (entry["l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum"] / ld_req
                                           if ld_req else None)
        entry["bytes_per_store_request"] = (entry["l1tex__t_bytes_pipe_lsu_mem_global_op_st.sum"] / st_req
                                            if st_req else None)
        peak, per_s = entry.get("dram__bytes.sum.peak_sustained"), entry.get("dram__cycles_elapsed.avg.per_second")
        entry["dram_peak_gbps"] = peak * per_s / 1e9 if peak and per_s else None
        out.append(entry)
    return out


# ----------------------------------------------------------------------------------- output

def stamp(seconds: float, contestants: list[Contestant], dry_run: bool) -> dict:
    def run(cmd):
        try:
            return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True).stdout.strip() or None
        except OSError:
            return None

    info = {"device": None, "driver": run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"]),
            "cuda": None, "torch": None, "apache_tvm_ffi": None,
            "commit": os.environ.get("FFI_COOKBOOK_COMMIT") or run(["git", "rev-parse", "--short", "HEAD"]),
            "date": datetime.date.today().isoformat(), "seconds": round(seconds, 1),
            "measured_by": "tools/rmsnorm_sweep.py", "dry_run": dry_run,
            "timer": f"triton.testing.do_bench(warmup={WARMUP_MS}, rep={REP_MS}, return_mode='median'), "
                     f"median of {ROUNDS} rounds; decode: torch.utils.benchmark blocked_autorange",
            "versions": {c.name: c.info for c in contestants if c.info}}
    try:
        import torch
        import tvm_ffi

        info.update(torch=torch.__version__, cuda=torch.version.cuda, apache_tvm_ffi=tvm_ffi.__version__,
                    device=torch.cuda.get_device_name() if torch.cuda.is_available() else None)
    except ImportError:
        pass
    return info


def write_json(path: Path, record: dict) -> None:
    """The record with one row per line under "rows" and "decode", so that a diff reads."""
    head = {k: v for k, v in record.items() if k not in ("rows", "decode")}
    body = json.dumps(head, indent=1)[:-2]
    for key in ("rows", "decode"):
        items = ",\n".join("  " + json.dumps(r) for r in record.get(key, []))
        body += f',\n "{key}": [\n{items}\n ]' if items else f',\n "{key}": []'
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body + "\n}\n")


def print_tables(record: dict) -> None:
    names = [n for n, c in record["contestants"].items() if c["status"] == "timed"]
    for name, c in record["contestants"].items():
        if c["status"] not in ("timed", "planned"):
            print(f"{name}: {c['status']}: {c['why']}")
    if not any(r["rounds"] for r in record["rows"]):
        return
    print(f"\nGB/s over the copy's (median of rounds); the copy's own GB/s in the first column")
    print(f"{'dtype':>9} {'hidden':>6} {'x MiB':>6} {'copy':>7} " + " ".join(f"{n[:10]:>10}" for n in names))
    for r in record["rows"]:
        cells = [f"{r['of_copy'][n]:>10.3f}" if n in r["of_copy"] else f"{'-':>10}" for n in names]
        copy = r["gbps"].get("copy")
        print(f"{r['dtype']:>9} {r['hidden']:>6} {r['x_mib']:>6} {copy if copy is not None else '-':>7} " + " ".join(cells))
    print("\nPer dtype, from 16 MiB: the lowest of_copy of ours, and the best candidate and peer (median of points)")
    for dtype in DTYPES:
        mine = [r["of_copy"]["ours"] for r in record["rows"] if r["dtype"] == dtype and "ours" in r["of_copy"]]
        picks = []
        for kind in ("candidate", "peer"):
            name = best(record["rows"], {kind}, record["contestants"], dtype)
            if name:
                values = [r["of_copy"][name] for r in record["rows"] if r["dtype"] == dtype and name in r["of_copy"]]
                picks.append(f"best {kind} {name} {statistics.median(values):.3f} (lowest {min(values):.3f})")
        print(f"{dtype:>9}: ours lowest {min(mine):.3f}; " + "; ".join(picks) if mine else f"{dtype:>9}: -")
    if record.get("decode"):
        print(f"\nDecode: microseconds per call (median of rounds)")
        print(f"{'dtype':>9} {'hidden':>6} {'rows':>5} {'copy':>7} " + " ".join(f"{n[:10]:>10}" for n in names))
        for r in record["decode"]:
            cells = [f"{r['us'][n]:>10.2f}" if n in r["us"] else f"{'-':>10}" for n in names]
            print(f"{r['dtype']:>9} {r['hidden']:>6} {r['rows']:>5} {r['us'].get('copy', '-'):>7} " + " ".join(cells))


def contestants_record(contestants: list[Contestant], dry_run: bool) -> dict:
    return {c.name: {"kind": c.kind, "what": c.what,
                     "status": "missing" if c.missing else "wrong result" if c.wrong else
                               "planned" if dry_run else "timed",
                     "why": c.missing or c.wrong} for c in contestants}


def best(rows: list[dict], kind: set[str], contestants: dict, dtype: str) -> str | None:
    """The contestant of ``kind`` with the highest median of_copy over dtype's points."""
    scores = {}
    for name, c in contestants.items():
        if c["kind"] in kind and c["status"] == "timed":
            values = [r["of_copy"][name] for r in rows if r["dtype"] == dtype and name in r["of_copy"]]
            if values:
                scores[name] = statistics.median(values)
    return max(scores, key=scores.get) if scores else None


# ------------------------------------------------------------------------------------- main

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT, help="where the json goes")
    parser.add_argument("--build", type=Path,
                        default=Path(os.environ.get("FFI_COOKBOOK_BUILD_DIR", ROOT / "_build")) / "rmsnorm-sweep")
    parser.add_argument("--dry-run", "--cpu", action="store_true", dest="dry_run",
                        help="time nothing: the plan, the peers found, the json writer (any machine)")
    parser.add_argument("--ncu", action="store_true", help="also Nsight Compute metrics at 512 MiB")
    parser.add_argument("--budget-s", type=float, default=200.0, help="skip parts that would start past this")
    parser.add_argument("--ncu-child", help=argparse.SUPPRESS)
    parser.add_argument("--hidden", type=int, default=1024, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.ncu_child:
        return ncu_child(args)
    start = time.perf_counter()
    gpu = False
    if not args.dry_run:
        import torch

        gpu = torch.cuda.is_available()
        if not gpu:
            print("rmsnorm sweep: no CUDA GPU here; --dry-run shows the plan")
            return 0
    contestants = build_ours_and_lab(args.build, args.dry_run) + find_peers(args.dry_run)
    plan = estimate(contestants, args.ncu)
    print("rmsnorm sweep plan (seconds, estimated for the H200 box): "
          + ", ".join(f"{k} {v:.0f}" for k, v in plan.items()), flush=True)
    for c in contestants:
        print(f"  {c.name:14} {c.kind:9} {'MISSING: ' + c.missing if c.missing else c.what}")
    points = sweep_points()
    print(f"  sweep: {len(points)} points ({len(DTYPES)} dtypes x hidden {HIDDEN} x x {X_MIB} MiB), "
          f"{ROUNDS} rounds; decode: {len(decode_points())} points (rows {DECODE_ROWS})", flush=True)
    skipped: list[str] = []
    decode: list[dict] = []
    ncu: dict | None = None
    if gpu:
        if any(c.name == "torch_compile" and not c.missing for c in contestants):
            configure_compile()
        check_all(contestants)
        print(f"checked: {time.perf_counter() - start:.0f} s", flush=True)
        tensors: dict = {}
        per_round = plan["sweep"] / ROUNDS
        for round_no in range(ROUNDS):
            if round_no and time.perf_counter() - start + per_round > args.budget_s:
                skipped.append(f"sweep rounds {round_no + 1} to {ROUNDS} (budget)")
                break
            bandwidth_round(points, tensors, contestants, round_no)
            print(f"round {round_no + 1}: {time.perf_counter() - start:.0f} s", flush=True)
        tensors.clear()
        import torch

        torch.cuda.empty_cache()
        if time.perf_counter() - start + plan["decode"] <= args.budget_s:
            decode = decode_part(contestants)
            print(f"decode: {time.perf_counter() - start:.0f} s", flush=True)
        else:
            skipped.append("decode (budget)")
    rows = summarise(points)
    record = {"stamp": stamp(time.perf_counter() - start, contestants, args.dry_run),
              "plan_seconds": {k: round(v) for k, v in plan.items()},
              "contestants": contestants_record(contestants, args.dry_run), "skipped": skipped,
              "ncu": None, "rows": rows, "decode": decode}
    write_json(args.out, record)  # kept even if the profiler below fails
    if args.ncu and gpu:
        if time.perf_counter() - start + plan["ncu"] <= args.budget_s:
            names = ["ours"] + [n for n in (best(rows, {"candidate"}, record["contestants"], NCU_DTYPE),
                                             best(rows, {"peer"}, record["contestants"], NCU_DTYPE)) if n]
            ncu = ncu_part(names, args.build)
        else:
            skipped.append("ncu (budget)")
            ncu = {"missing": "skipped: the run's time budget"}
        record["ncu"] = ncu
        record["stamp"]["seconds"] = round(time.perf_counter() - start, 1)
        write_json(args.out, record)
    print_tables(record)
    print(f"wrote {args.out} ({time.perf_counter() - start:.0f} s)" + (f"; skipped: {', '.join(skipped)}" if skipped else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
