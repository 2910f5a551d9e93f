"""`make gpu-check` plans every GPU check, and the GPU run's failures stay fixed.

The plan (tools/gpu_check.py) is made from pytest's collection; the tests here check it
against an independent reading of the sources: every test function that a GPU skip
decorator marks (``needs_cuda``, ``needs_nvshmem``, a ``skipif`` on a missing GPU whose
reason names it) must be in the plan, and so must every notebook with a GPU cell.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.needs import cuda_available

GPU_WORDS = re.compile(r"\bGPUs?\b|\bCUDA\b|NVSHMEM")
LAST_LINE = re.compile(r"gpu-check: (\d+) tests, (\d+) notebooks, (\d+) benchmarks, (\d+) sanitizer runs planned; "
                       r"no GPU here")


@pytest.fixture(scope="module")
def dry_run(root):
    """`make gpu-check`'s command on this machine (no GPU): its output and exit status."""
    if cuda_available():
        pytest.skip("a GPU is here: make gpu-check would run the plan, not print it")
    env = {**os.environ, "PYTHONPATH": ""}
    done = subprocess.run([sys.executable, str(root / "tools" / "gpu_check.py")], cwd=root, env=env,
                          capture_output=True, text=True, timeout=1200)
    return done


@pytest.fixture(scope="module")
def planned_tests(dry_run):
    return {line.strip().split("  [timing:")[0] for line in dry_run.stdout.splitlines()
            if "::" in line}


def test_the_dry_run_prints_the_plan_and_its_counts_and_exits_0(dry_run, planned_tests):
    assert dry_run.returncode == 0, dry_run.stderr[-3000:]
    assert "NOT COLLECTED" not in dry_run.stdout
    last = dry_run.stdout.strip().splitlines()[-1]
    match = LAST_LINE.fullmatch(last)
    assert match, last
    tests, notebooks, benchmarks, sanitized = map(int, match.groups())
    assert tests == len(planned_tests) > 0
    assert notebooks == sum(1 for line in dry_run.stdout.splitlines() if line.rstrip().endswith(".md")
                            or ".md  [timing" in line)
    assert benchmarks >= 3
    assert sanitized > 0


def test_the_plan_runs_the_recipes_cuda_tests_under_compute_sanitizer(dry_run, planned_tests):
    text = dry_run.stdout
    part = text[text.index("compute-sanitizer (last"):text.rindex("gpu-check:")]
    assert "--tool memcheck:" in part and "--tool racecheck:" in part
    files = {line.strip() for line in part.splitlines() if line.startswith("    ")}
    assert files and all(f.startswith("cookbook/") for f in files)
    assert not any(f.startswith("cookbook/19-") for f in files), "recipe 19's planted bugs would report"
    # racecheck: the recipes whose kernels use shared memory (recipe 10's row reduction)
    race = part[part.index("--tool racecheck:"):]
    assert "cookbook/10-rmsnorm/test_rmsnorm.py" in race


def gpu_skip_decorator(node: ast.expr) -> bool:
    """A decorator that skips the test where there is no GPU (read from the source)."""
    if isinstance(node, ast.Name):
        return node.id in ("needs_cuda", "needs_nvshmem")
    if not (isinstance(node, ast.Call) and ast.unparse(node.func).endswith("mark.skipif") and node.args):
        return False
    reason = next((k.value for k in node.keywords if k.arg == "reason"), None)
    reason = ast.literal_eval(reason) if isinstance(reason, ast.Constant) else ""
    condition = node.args[0]
    missing_gpu = (isinstance(condition, ast.UnaryOp) and isinstance(condition.op, ast.Not)) or (
        isinstance(condition, ast.Compare) and "device_count" in ast.unparse(condition.left))
    return missing_gpu and bool(GPU_WORDS.search(reason))


def gpu_skipped_functions(root: Path) -> set[str]:
    """``path::test_name`` for every test function a GPU skip decorator marks."""
    found = set()
    files = sorted(root.glob("cookbook/*/test_*.py")) + sorted(root.glob("tests/*/test_*.py"))
    for path in files:
        tree = ast.parse(path.read_text())
        module_skip = any(isinstance(n, ast.Assign) and any(getattr(t, "id", "") == "pytestmark" for t in n.targets)
                          and gpu_skip_decorator(n.value) for n in tree.body)
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
                if module_skip or any(gpu_skip_decorator(d) for d in node.decorator_list):
                    found.add(f"{path.relative_to(root)}::{node.name}")
    return found


def function_of(nodeid: str) -> str:
    """``path::Class::test[params]`` -> ``path::test``."""
    parts = nodeid.split("::")
    return f"{parts[0]}::{parts[-1].split('[')[0]}"


def test_every_test_that_skips_without_a_gpu_is_planned(root, planned_tests):
    expected = gpu_skipped_functions(root)
    assert len(expected) > 20, "the scan found too few GPU tests: is it still reading the decorators?"
    planned_functions = {function_of(t) for t in planned_tests}
    missing = sorted(expected - planned_functions)
    assert not missing, f"tests that skip without a GPU but are not in make gpu-check's plan: {missing}"


def test_the_plan_holds_no_test_that_runs_without_a_gpu(root, planned_tests):
    expected = gpu_skipped_functions(root)
    extra = sorted({function_of(t) for t in planned_tests} - expected)
    assert not extra, f"planned, but no GPU skip decorator marks them: {extra}"


def test_every_notebook_with_a_gpu_cell_and_every_stored_run_is_planned(root, dry_run):
    planned = {m.group(1) for m in map(re.compile(r"(\S+\.md)\b").search, dry_run.stdout.splitlines()) if m}
    cell = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```", re.S | re.M)
    for path in sorted(root.glob("cookbook/*/notebook.md")):
        if any("cuda" in c.lower() for c in cell.findall(path.read_text())):
            assert str(path.relative_to(root)) in planned, path
    names = {Path(p).parent.name if p.endswith("notebook.md") else Path(p).stem for p in planned}
    stored = {p.stem for p in (root / "docs" / "gpu-runs" / "data").glob("*.ipynb")}
    assert stored <= names, stored - names


def test_the_timing_parts_run_alone(root, dry_run):
    lines = dry_run.stdout.splitlines()
    alone = {line.split("  [timing:")[0].split()[-1] for line in lines
             if line.endswith("[timing: cells from the first timed one run alone]")}
    tagged = {str(p.relative_to(root)) for p in root.glob("cookbook/*/notebook.md")
              if ":tags: [measures-time]" in p.read_text()}
    assert "cookbook/09-call-overhead/notebook.md" in alone
    assert tagged <= alone, tagged - alone
    assert any(line.startswith("benchmarks (") and "run alone" in line for line in lines)


# ------------------------------------------------------------ what the H100 run of c96b285 found

def test_a_cuda_entry_error_names_its_source_relative_to_the_folder(root):
    """On the GPU box (Python 3.12), IPython printed "Unexpected exception formatting exception"
    under error cells: tvm_ffi's traceback frames name C++ sources, IPython found the file and
    read it as Python, and Python 3.12's tokenizer raised on C++. IPython then falls back to a
    plain traceback, and the GPU runs page leaves its message out (tests/site/test_gpu_runs.py).
    What the frames name is tvm_ffi's doing: tvm_ffi_configure_target maps the source folder
    away, so recipe 06's CUDA entry (the cell that first showed it) names `stream_cuda.cu`,
    never the build machine's absolute path."""
    import torch
    import tvm_ffi

    from tools.cmake_build import cmake_build

    folder = root / "cookbook" / "06-cuda-streams"
    lib = cmake_build(folder, verbose=False) / "libcuda_streams.so"
    mod = tvm_ffi.load_module(str(lib))
    if not hasattr(mod, "scale_on_stream_cuda"):
        pytest.skip("nvcc was not found: recipe 06's CUDA entry was not built")
    with pytest.raises(ValueError) as info:
        mod.scale_on_stream_cuda(torch.zeros(3), torch.zeros(3), 2.0)
    names = []
    tb = info.value.__traceback__
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if name.endswith((".h", ".cc", ".cu", ".cuh")):
            names.append(name)
        tb = tb.tb_next
    assert "stream_cuda.cu" in names, names
    assert not [name for name in names if os.path.isabs(name)], names


# ------------------------------------------------------------ what the H200 run of 34fb164 found

def test_on_a_gpu_box_the_plan_is_made_with_the_gpus_hidden(monkeypatch):
    """With the GPU visible no GPU skip mark holds, and the plan found none of the GPU tests."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
    import gpu_check

    seen = {}

    def fake_run(cmd, env=None, **kwargs):
        seen.update(cmd=cmd, env=env)
        return subprocess.CompletedProcess(cmd, 0, stdout='{"tests": {}}', stderr="")

    monkeypatch.setattr(gpu_check.subprocess, "run", fake_run)
    assert gpu_check.plan_without_gpus() == {"tests": {}}
    assert seen["cmd"][-2:] == ["--plan", "--json"] and seen["env"]["CUDA_VISIBLE_DEVICES"] == ""

    planned = object()
    monkeypatch.setattr(gpu_check, "gpu_here", lambda: True)
    monkeypatch.setattr(gpu_check, "install_carried_wheels", lambda wheels: None)
    monkeypatch.setattr(gpu_check, "drop_missing_launchers", lambda: None)
    monkeypatch.setattr(gpu_check, "plan_without_gpus", lambda: planned)
    monkeypatch.setattr(gpu_check, "plan", lambda: pytest.fail("the plan was made with the GPU visible"))
    monkeypatch.setattr(gpu_check, "print_plan", lambda p: None)
    monkeypatch.setattr(gpu_check, "summary", lambda p, where: "")
    monkeypatch.setattr(gpu_check, "run_on_gpu", lambda p, args: 0 if p is planned else 1)
    monkeypatch.setenv("PYTHONPATH", "")
    monkeypatch.setattr(sys, "path", list(sys.path))
    assert gpu_check.main([]) == 0
    # the box has no install of this package: its tests and notebooks import it from the source,
    # the notebooks in threads of this process (the run of 587c9e5 stopped there: no ffi_cookbook)
    assert os.environ["PYTHONPATH"].split(os.pathsep)[0] == str(gpu_check.ROOT / "python")
    assert sys.path[0] == str(gpu_check.ROOT / "python")


def test_a_notebook_that_stops_keeps_its_cells_up_to_the_error(tmp_path):
    """The GPU run kept no output of the notebooks that stopped, so the failing cell was unknown."""
    import jupytext
    import nbformat

    from tools.gpu_notebooks import execute

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell('print("first cell ran")'),
                                         nbformat.v4.new_code_cell("assert 1 == 2, 'the second cell fails'"),
                                         nbformat.v4.new_code_cell('print("never")')])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    page = tmp_path / "page" / "notebook.md"
    page.parent.mkdir()
    jupytext.write(nb, page, fmt="md:myst")
    out = tmp_path / "out"
    out.mkdir()
    name, _, error = execute(page, out, {"device": "test"})
    assert "the second cell fails" in error
    cells = nbformat.read(out / f"{name}.ipynb", as_version=4).cells
    code = [c for c in cells if c.cell_type == "code"]
    assert code[0].outputs[0]["text"] == "first cell ran\n"
    assert code[1].outputs[0]["evalue"] == "the second cell fails"
    assert not code[2].outputs


# ------------------------------------------------------------ what the H200 run of 587c9e5 found

def test_stored_outputs_name_no_temporary_folder():
    """Recipe 13's notebook printed the library's path in a tempfile folder of the box."""
    import tempfile

    from tools.gpu_notebooks import scrub_text

    folder = tempfile.mkdtemp()
    try:
        assert scrub_text(f"{folder}/mykernels/libmykernels.so") == "<tmp>/mykernels/libmykernels.so"
    finally:
        os.rmdir(folder)
    assert scrub_text("/tmp/notes.txt") == "/tmp/notes.txt"  # a name tempfile did not make stays


def test_kernels_on_the_box_print_plain_tracebacks_through_a_cpp_frame(tmp_path):
    """IPython 9 on Python 3.12 crashed formatting a traceback through a frame whose file is a C++
    source on disk (it read it as Python); gpu-check's kernels use plain tracebacks, which only
    read the lines. Here (Python 3.11) the kernel shows that the setting reaches it."""
    import nbformat
    from nbclient import NotebookClient

    from tools import gpu_check

    config = gpu_check.plain_tracebacks(tmp_path / "build")
    assert "xmode = 'Plain'" in config.read_text()
    assert os.environ["IPYTHONDIR"] == str(config.parents[1])
    (tmp_path / "kernel.cc").write_text("// the caller's stream\nint x;\n")
    cell = nbformat.v4.new_code_cell('exec(compile("def TwiceCUDA():\\n    raise ValueError(\'bad x\')\\n", '
                                     '"kernel.cc", "exec"), ns := {})\nns["TwiceCUDA"]()')
    nb = nbformat.v4.new_notebook(cells=[cell])
    try:
        NotebookClient(nb, timeout=60, allow_errors=True, resources={"metadata": {"path": str(tmp_path)}}).execute()
    finally:
        del os.environ["IPYTHONDIR"]
    error = next(o for o in nb.cells[0].outputs if o["output_type"] == "error")
    text = re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(error["traceback"]))
    assert error["ename"] == "ValueError" and "File kernel.cc:2 in TwiceCUDA" in text, text
