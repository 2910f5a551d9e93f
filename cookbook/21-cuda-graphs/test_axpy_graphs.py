"""CUDA graphs with tvm_ffi kernels: the build, argument checks and torch.compile on any
machine; capture, replay, allocation under capture and launch times on a GPU."""

import importlib.util
import re
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

HERE = Path(__file__).resolve().parent
needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU (none visible to torch)")
CUDA_EXPORTS = ["graph_axpy_cuda", "graph_axpy_null_stream_cuda", "graph_axpy_env_alloc_cuda",
                "graph_axpy_nd_alloc_cuda"]


def _load(file_name):
    spec = importlib.util.spec_from_file_location(Path(file_name).stem, HERE / file_name)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # graph_demo.py imports axpy_op by name
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def axpy_op():
    return _load("axpy_op.py")


@pytest.fixture(scope="module")
def graph_demo(axpy_op):
    return _load("graph_demo.py")


@pytest.fixture(scope="module")
def cuda_built():
    cache = (HERE / "build" / "CMakeCache.txt").read_text()  # CMake's record of the CUDA compiler it found
    return bool(re.search(r"^CMAKE_CUDA_COMPILER:\w+=\S*nvcc$", cache, re.M))


def test_exports(axpy_op, cuda_built):
    names = ["graph_axpy_cpu"] + (CUDA_EXPORTS if cuda_built else [])
    assert all(axpy_op.mod.implements_function(n) for n in names)


@pytest.mark.parametrize("n", [0, 1, 1000])
def test_cpu_kernel(axpy_op, n):
    x, y = np.random.default_rng(n).standard_normal((2, n)).astype(np.float32)
    out = np.full(n, np.nan, np.float32)
    axpy_op.mod.graph_axpy_cpu(x, y, -3.0, out)
    np.testing.assert_allclose(out, -3.0 * x + y, rtol=1e-6)


@pytest.mark.parametrize("name", CUDA_EXPORTS)
def test_cuda_entries_refuse_cpu_tensors(axpy_op, cuda_built, name):
    if not cuda_built:
        pytest.skip("needs nvcc: the CUDA variants were not built")
    x = np.ones(4, np.float32)
    args = (x, x, 2.0, np.empty(4, np.float32)) if "alloc" not in name else (x, x, 2.0)
    with pytest.raises(ValueError, match="argument 'x': expected a tensor on cuda, got one on cpu:0"):
        getattr(axpy_op.mod, name)(*args)


def test_cpu_kernel_refuses_bad_input(axpy_op):
    with pytest.raises(TypeError, match="argument 'x': expected dtype float32, got float64"):
        axpy_op.mod.graph_axpy_cpu(np.ones(3), np.ones(3), 1.0, np.ones(3))
    with pytest.raises(ValueError, match="argument 'out'"):
        axpy_op.mod.graph_axpy_cpu(*(np.ones(3, np.float32),) * 2, 1.0, np.ones(4, np.float32))


def test_reduce_overhead_compile_matches_eager(axpy_op):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    compiled = torch.compile(lambda x, y: axpy_op.axpy(x, y, 0.5), mode="reduce-overhead", fullgraph=True)
    for _ in range(4):
        x, y = torch.randn(256, device=device), torch.randn(256, device=device)
        torch.testing.assert_close(compiled(x, y).clone(), 0.5 * x + y)
    torch.library.opcheck(axpy_op.axpy, (torch.randn(8, device=device), torch.randn(8, device=device), 2.0))


def test_unknown_variant_is_refused(graph_demo):
    with pytest.raises(ValueError, match="variant: expected one of"):
        graph_demo.capture("default_stream")


@needs_cuda
def test_kernel_sees_the_capturing_stream_and_replays(graph_demo):
    seen = graph_demo.capture("env_stream")
    assert "raised" not in seen, seen
    assert seen["kernel_stream"] == seen["capture_stream"] != 0
    assert seen["replay_computes"]


@needs_cuda
def test_stream_zero_under_capture_is_wrong(graph_demo):
    seen = graph_demo.capture("null_stream")
    assert "raised" in seen or not seen["replay_computes"], seen


@needs_cuda
def test_env_alloc_works_under_capture_and_cuda_malloc_does_not(graph_demo):
    env = graph_demo.capture("env_alloc")
    assert "raised" not in env and env["replay_computes"], env
    assert "raised" in graph_demo.capture("nd_alloc")


@needs_cuda
@pytest.mark.timing
def test_graph_replay_launches_faster(graph_demo):
    t = graph_demo.launch_time_us(launches=100, repeats=10)
    assert t["graph"] < t["eager"], t
