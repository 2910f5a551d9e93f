"""tools/rmsnorm_sweep.py on a machine without a GPU: its --dry-run (the plan, the shapes, the
peers found or why not, the json it writes), and the parts of the GPU run that are plain
Python (the medians and ratios of the rounds, the Nsight Compute CSV)."""

from __future__ import annotations

import json

import pytest

from tools import rmsnorm_lab, rmsnorm_sweep as sweep


@pytest.fixture(scope="module")
def dry_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("sweep") / "rmsnorm.json"
    assert sweep.main(["--dry-run", "--ncu", "--out", str(out)]) == 0
    return json.loads(out.read_text()), out


def test_dry_run_writes_a_stamp_and_one_row_per_dtype_hidden_and_size(dry_run):
    record, _ = dry_run
    assert record["stamp"]["dry_run"] is True and record["stamp"]["measured_by"] == "tools/rmsnorm_sweep.py"
    assert record["stamp"]["date"] and record["stamp"]["commit"]
    rows = record["rows"]
    assert [(r["dtype"], r["hidden"], r["x_mib"]) for r in rows] == [
        (d, h, m) for d in sweep.DTYPES for h in sweep.HIDDEN for m in sweep.X_MIB]
    for r in rows:
        itemsize = 4 if r["dtype"] == "float32" else 2
        assert r["rows"] * r["hidden"] * itemsize == r["x_bytes"] == r["x_mib"] << 20
        assert r["gbps"] == {} and r["rounds"] == 0  # nothing timed
    assert min(r["x_mib"] for r in rows) == 16 and max(r["x_mib"] for r in rows) == 1024
    assert record["decode"] == []
    assert {(p["dtype"], p["hidden"], p["rows"]) for p in sweep.decode_points()} == {
        (d, h, n) for d in sweep.DTYPES for h in sweep.HIDDEN for n in (1, 4, 16, 32)}


def test_dry_run_names_every_contestant_and_why_a_peer_is_missing(dry_run):
    contestants = dry_run[0]["contestants"]
    assert set(contestants) == {"ours", *rmsnorm_lab.CANDIDATES, "torch", "torch_compile", "liger", "quack"}
    assert {n for n, c in contestants.items() if c["kind"] == "candidate"} == set(rmsnorm_lab.CANDIDATES)
    for name, c in contestants.items():
        assert c["status"] in ("planned", "missing"), (name, c)
        if c["status"] == "missing":
            assert c["why"], name  # a reason, e.g. "ModuleNotFoundError: No module named 'quack'"
    assert contestants["torch"]["status"] == "planned"


def test_the_plan_fits_the_gpu_check_slot(dry_run):
    """The estimate for the box, with every contestant present (quack too), stays within ~3 min."""
    plan = dry_run[0]["plan_seconds"]
    assert set(plan) == {"setup", "check", "sweep", "decode", "ncu", "total"}
    everyone = [sweep.Contestant(n, "peer", "") for n in ["ours", *rmsnorm_lab.CANDIDATES, "torch",
                                                          "torch_compile", "liger", "quack"]]
    assert sweep.estimate(everyone, ncu=True)["total"] <= 200
    for part in ("setup", "check", "sweep", "decode", "ncu"):
        assert part in sweep.__doc__


def test_the_json_has_one_row_per_line(dry_run):
    _, out = dry_run
    lines = out.read_text().splitlines()
    assert sum(line.startswith('  {"dtype"') for line in lines) == len(sweep.sweep_points())


def test_medians_and_ratios_of_the_rounds():
    point = {"dtype": "bfloat16", "hidden": 1024, "x_mib": 16, "rows": 8192,
             "rounds": {"copy": [4000.0, 3000.0, 4100.0], "ours": [3600.0, 3000.0, 2000.0], "late": [1.0]}}
    row, = sweep.summarise([point])
    assert row["gbps"] == {"copy": 4000.0, "ours": 3000.0, "late": 1.0}
    assert row["of_copy"] == {"ours": 0.9}  # per-round ratios 0.9, 1.0, 0.488: their median
    assert row["of_copy_range"]["ours"] == [0.488, 1.0]
    assert "late" not in row["of_copy"] and row["rounds"] == 3  # a name without every round has no ratio


def test_best_picks_the_highest_median_of_a_kind():
    rows = [{"dtype": "bfloat16", "of_copy": {"torch": 0.8, "liger": 0.9, "rows2": 0.95}},
            {"dtype": "bfloat16", "of_copy": {"torch": 0.85, "liger": 0.7, "rows2": 0.9}}]
    contestants = {"torch": {"kind": "peer", "status": "timed"}, "liger": {"kind": "peer", "status": "timed"},
                   "rows2": {"kind": "candidate", "status": "timed"}}
    assert sweep.best(rows, {"peer"}, contestants, "bfloat16") == "torch"  # medians 0.825 and 0.8
    assert sweep.best(rows, {"candidate"}, contestants, "bfloat16") == "rows2"
    assert sweep.best(rows, {"peer"}, contestants, "float32") is None


NCU_CSV = '''==PROF== Connected to process 1
"ID","Kernel Name","dram__throughput.avg.pct_of_peak_sustained_elapsed","dram__bytes.sum.peak_sustained",\
"dram__cycles_elapsed.avg.per_second","l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum",\
"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum","launch__registers_per_thread"
"","","%","byte/cycle","cycle/second","byte","",""
"0","LabKernel","91.5","1,024","4,687,500,000","1,073,741,824","8,388,608","48"
==PROF== Disconnected
'''


def test_ncu_csv_gives_bytes_per_request_and_the_peak():
    kernel, = sweep.parse_ncu_csv(NCU_CSV)
    assert kernel["kernel"] == "LabKernel"
    assert kernel["dram__throughput.avg.pct_of_peak_sustained_elapsed"] == 91.5
    assert kernel["bytes_per_load_request"] == 128.0
    assert kernel["bytes_per_store_request"] is None  # not in this CSV
    assert kernel["dram_peak_gbps"] == pytest.approx(4800.0)
    assert kernel["launch__registers_per_thread"] == 48
    assert sweep.parse_ncu_csv("==PROF== no kernels profiled\n") == []
