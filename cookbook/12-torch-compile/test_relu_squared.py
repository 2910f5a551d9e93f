"""relu_squared: the kernel is right, and as a custom op it compiles without a graph break.

Compiled tests use backend="aot_eager": it traces the same graph as inductor
but skips C++ code generation, which the notebook measures as the slow part.
"""

import importlib.util
from pathlib import Path

import numpy as np
import pytest
import torch
import tvm_ffi

HERE = Path(__file__).resolve().parent
LIBRARY = HERE / "build" / "librelu_squared.so"  # the README's cmake commands build it
SHAPES = [(0,), (1,), (7,), (3, 5)]


@pytest.fixture(scope="module")
def mod():
    return tvm_ffi.load_module(str(LIBRARY))


@pytest.fixture(scope="module")
def ops():
    spec = importlib.util.spec_from_file_location("relu_squared_op", HERE / "relu_squared_op.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def reference(x):
    return torch.relu(x) ** 2


def sample_inputs(device, shape):
    return torch.randn(shape, generator=torch.Generator().manual_seed(0)).to(device)


def model_raw(mod):
    def f(x):
        y = torch.sin(x) * 2
        out = torch.empty_like(y)
        mod.relu_squared_cpu(y, out)
        return torch.cos(out) + 1
    return f


def model_reference(x):
    return torch.cos(reference(torch.sin(x) * 2)) + 1


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_kernel_matches_torch(mod, shape):
    x = sample_inputs("cpu", shape)
    out = torch.full_like(x, float("nan"))
    mod.relu_squared_cpu(x, out)
    torch.testing.assert_close(out, reference(x), rtol=0, atol=0)


def test_kernel_with_numpy(mod):
    x = np.array([-2.0, -0.5, 0.0, 0.5, 3.0], np.float32)
    out = np.empty_like(x)
    mod.relu_squared_cpu(x, out)
    np.testing.assert_array_equal(out, [0.0, 0.0, 0.0, 0.25, 9.0])


def test_bare_call_breaks_the_graph(mod):
    torch._dynamo.reset()
    report = torch._dynamo.explain(model_raw(mod))(sample_inputs("cpu", (8,)))
    assert report.graph_break_count >= 1
    assert "Function" in report.break_reasons[0].reason


def test_bare_call_fails_fullgraph(mod):
    torch._dynamo.reset()
    with pytest.raises(torch._dynamo.exc.Unsupported):
        torch.compile(model_raw(mod), fullgraph=True, backend="aot_eager")(sample_inputs("cpu", (8,)))


def test_opcheck(ops):
    x = sample_inputs("cpu", (3, 5))
    torch.library.opcheck(ops.relu_squared, (x,))
    torch.library.opcheck(ops.relu_squared_out, (x, torch.empty_like(x)))


def test_custom_op_is_one_graph(ops):
    torch._dynamo.reset()
    report = torch._dynamo.explain(lambda x: torch.cos(ops.relu_squared(torch.sin(x) * 2)) + 1)(
        sample_inputs("cpu", (8,)))
    assert (report.graph_count, report.graph_break_count) == (1, 0)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_functional_op_compiles_fullgraph(ops, shape):
    torch._dynamo.reset()
    compiled = torch.compile(lambda x: torch.cos(ops.relu_squared(torch.sin(x) * 2)) + 1,
                             fullgraph=True, backend="aot_eager")
    x = sample_inputs("cpu", shape)
    torch.testing.assert_close(compiled(x), model_reference(x))


def test_mutating_op_compiles_fullgraph(ops):
    def f(x):
        out = torch.empty_like(x)
        ops.relu_squared_out(torch.sin(x) * 2, out)
        return torch.cos(out) + 1

    torch._dynamo.reset()
    x = sample_inputs("cpu", (3, 5))
    torch.testing.assert_close(torch.compile(f, fullgraph=True, backend="aot_eager")(x), model_reference(x))


def test_dynamic_shapes_reuse_one_graph(ops):
    graphs = []

    def counting(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    torch._dynamo.reset()
    compiled = torch.compile(lambda x: ops.relu_squared(x) + 1, fullgraph=True, dynamic=True,
                             backend=counting)
    for n in (5, 9, 17):
        x = sample_inputs("cpu", (n,))
        torch.testing.assert_close(compiled(x), reference(x) + 1)
    assert len(graphs) == 1


def test_custom_op_reports_kernel_errors(ops):
    with pytest.raises(TypeError, match="argument 'x': expected dtype float32, got float64"):
        ops.relu_squared(torch.zeros(3, dtype=torch.float64))

#: (x, out, error, message): what CheckDtype(x, float32) then CheckElementwise(x, out) reject.
BAD_INPUTS = [
    (np.zeros(3, np.float64), np.zeros(3, np.float64), TypeError, "argument 'x': expected dtype float32, got float64"),
    (np.zeros(3, np.float32), np.zeros(3, np.int32), TypeError,
     "argument 'out': expected dtype float32 (the dtype of 'x'), got int32"),
    (np.zeros(3, np.float32), np.zeros(4, np.float32), ValueError,
     "argument 'out': expected shape [3] (the shape of 'x'), got [4]"),
    (np.zeros((3, 4), np.float32).T, np.zeros((4, 3), np.float32), ValueError, "argument 'x': expected a contiguous tensor"),
    (np.zeros((3, 4), np.float32), np.zeros((4, 3), np.float32).T, ValueError,
     "argument 'out': expected a contiguous tensor"),
]


@pytest.mark.parametrize("x, out, error, message", BAD_INPUTS)
def test_kernel_rejects_bad_input(mod, x, out, error, message):
    with pytest.raises(error) as info:
        mod.relu_squared_cpu(x, out)
    assert message in str(info.value)


def test_opcheck_catches_undeclared_mutation(mod):
    @torch.library.custom_op("cookbook_compile_test::relu_squared_undeclared", mutates_args=())
    def undeclared(x: torch.Tensor, out: torch.Tensor) -> None:
        mod.relu_squared_cpu(x, out)

    x = sample_inputs("cpu", (8,))
    with pytest.raises(Exception, match="out is not defined as mutable but was mutated"):
        torch.library.opcheck(undeclared, (x, torch.empty_like(x)))
