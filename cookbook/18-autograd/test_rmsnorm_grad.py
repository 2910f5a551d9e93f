"""RMSNorm forward and backward kernels as a differentiable torch op: values, gradients
(gradcheck in float64), opcheck, and a compiled training step that matches eager."""

import copy
import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import tvm_ffi

HERE = Path(__file__).resolve().parent
LIBRARY = HERE / "build" / "librmsnorm_grad.so"  # the README's cmake commands build it
needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU (none visible to torch)")

TOLERANCE = {torch.float32: dict(rtol=1e-5, atol=1e-5), torch.float64: dict(rtol=1e-12, atol=1e-12)}


@pytest.fixture(scope="module")
def mod():
    return tvm_ffi.load_module(str(LIBRARY))


@pytest.fixture(scope="module")
def ops():
    """rmsnorm_op.py, loaded once the library is built (it loads the library)."""
    spec = importlib.util.spec_from_file_location("rmsnorm_op", HERE / "rmsnorm_op.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["rmsnorm_op"] = module  # torch.compile looks traced functions' modules up by name
    spec.loader.exec_module(module)
    return module


def sample_inputs(device, dtype, shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = (torch.randn(shape, generator=g, dtype=torch.float64) * 2).to(device=device, dtype=dtype)
    w = (torch.rand(shape[-1], generator=g, dtype=torch.float64) + 0.5).to(device=device, dtype=dtype)
    return x.requires_grad_(), w.requires_grad_()


def reference(x, w, eps=1e-6):
    return torch.nn.functional.rms_norm(x, (x.shape[-1],), w, eps)


def gradients(fn, x, w):
    x.grad = w.grad = None
    y = fn(x, w)
    (y * torch.linspace(-1, 1, y.numel(), dtype=y.dtype, device=y.device).view(y.shape)).sum().backward()
    return y.detach(), x.grad.clone(), w.grad.clone()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("shape", [(1, 1), (3, 8), (2, 5, 33), (0, 4)], ids=str)
def test_values_and_gradients_match_torch(ops, dtype, shape):
    x, w = sample_inputs("cpu", dtype, shape)
    ours = gradients(ops.rms_norm, x, w)
    theirs = gradients(reference, x, w)
    for a, b in zip(ours, theirs):
        torch.testing.assert_close(a, b, **TOLERANCE[dtype])


def test_gradcheck_float64(ops):
    x, w = sample_inputs("cpu", torch.float64, (4, 7))
    assert torch.autograd.gradcheck(lambda x, w: ops.rms_norm(x, w, 1e-3), (x, w))


def test_opcheck_including_autograd(ops):
    x, w = sample_inputs("cpu", torch.float32, (4, 16))
    results = torch.library.opcheck(ops.rms_norm_forward, (x, w, 1e-6))
    assert results["test_autograd_registration"] == "SUCCESS"
    assert all(value == "SUCCESS" for value in results.values()), results
    dy = torch.randn(4, 16)
    _, rstd = ops.rms_norm_forward(x, w, 1e-6)
    torch.library.opcheck(ops.rms_norm_backward, (dy, x.detach(), w.detach(), rstd))


def test_rstd_is_not_differentiable(ops):
    x, w = sample_inputs("cpu", torch.float32, (2, 4))
    y, rstd = ops.rms_norm_forward(x, w, 1e-6)
    assert y.requires_grad and not rstd.requires_grad


class Block(torch.nn.Module):
    def __init__(self, rms_norm):
        super().__init__()
        self.rms_norm = rms_norm
        self.up = torch.nn.Linear(16, 32)
        self.norm_weight = torch.nn.Parameter(torch.rand(32) + 0.5)
        self.down = torch.nn.Linear(32, 4)

    def forward(self, x):
        return self.down(torch.relu(self.rms_norm(self.up(x), self.norm_weight)))


def loss_fn(model, x, target):
    return torch.nn.functional.mse_loss(model(x), target)


def test_compiled_training_step_matches_eager(ops):
    torch.manual_seed(0)
    eager = Block(ops.rms_norm)
    compiled_model = copy.deepcopy(eager)
    initial = [p.detach().clone() for p in eager.parameters()]
    torch._dynamo.reset()
    step = torch.compile(loss_fn, fullgraph=True, backend="aot_eager")
    optimizers = [torch.optim.SGD(m.parameters(), lr=0.1) for m in (eager, compiled_model)]
    g = torch.Generator().manual_seed(1)
    for _ in range(3):
        x, target = torch.randn(8, 16, generator=g), torch.randn(8, 4, generator=g)
        for model, fn, optimizer in ((eager, loss_fn, optimizers[0]), (compiled_model, step, optimizers[1])):
            optimizer.zero_grad()
            fn(model, x, target).backward()
            optimizer.step()
    for a, b in zip(eager.parameters(), compiled_model.parameters()):
        torch.testing.assert_close(a, b)
    assert all((p - q).abs().max() > 0 for p, q in zip(initial, eager.parameters()))  # it trained


def test_backward_graph_holds_the_backward_kernel(ops):
    from functorch.compile import make_boxed_func
    from torch._dynamo.backends.common import aot_autograd

    graphs = {}

    def keep(name):
        def compiler(gm, example_inputs):
            graphs[name] = gm.code
            return make_boxed_func(gm.forward)
        return compiler

    torch._dynamo.reset()
    fn = torch.compile(ops.rms_norm, fullgraph=True,
                       backend=aot_autograd(fw_compiler=keep("forward"), bw_compiler=keep("backward")))
    x, w = sample_inputs("cpu", torch.float32, (3, 8))
    fn(x, w).sum().backward()
    assert "cookbook_autograd.rms_norm_forward" in graphs["forward"]
    assert "cookbook_autograd.rms_norm_backward" in graphs["backward"]


@pytest.mark.parametrize("call, error, message", [
    (lambda m: m.rmsnorm_forward_cpu(np.zeros((2, 3), np.float16), np.zeros(3, np.float16), np.zeros((2, 3), np.float16), np.zeros(2, np.float16), 1e-6),
     TypeError, "argument 'x': expected dtype float32 or float64, got float16"),
    (lambda m: m.rmsnorm_forward_cpu(np.zeros((2, 3), np.float32), np.zeros(4, np.float32), np.zeros((2, 3), np.float32), np.zeros(2, np.float32), 1e-6),
     ValueError, "argument 'weight': expected 3 elements, got 4"),
    (lambda m: m.rmsnorm_forward_cpu(np.zeros((2, 3), np.float32), np.zeros(3, np.float32), np.zeros((2, 3), np.float32), np.zeros(3, np.float32), 1e-6),
     ValueError, "argument 'rstd': expected 2 elements, got 3"),
    (lambda m: m.rmsnorm_forward_cpu(np.zeros((2, 3), np.float32), np.zeros(3, np.float32), np.zeros((2, 3), np.float32), np.zeros(2, np.float32), 0.0),
     ValueError, "argument 'eps': expected > 0, got 0"),
    (lambda m: m.rmsnorm_forward_cpu(np.zeros(3, np.float32), np.zeros(3, np.float32), np.zeros(3, np.float32), np.zeros(1, np.float32), 1e-6),
     ValueError, "argument 'x': expected a 2-d tensor"),
    (lambda m: m.rmsnorm_backward_cpu(np.zeros((2, 3), np.float64), np.zeros((2, 3), np.float32), np.zeros(3, np.float32), np.zeros(2, np.float32), np.zeros((2, 3), np.float32), np.zeros(3, np.float32)),
     TypeError, "argument 'dy': expected dtype float32 (the dtype of 'x'), got float64"),
    (lambda m: m.rmsnorm_backward_cpu(np.zeros((2, 3), np.float32), np.zeros((2, 3), np.float32), np.zeros(3, np.float32), np.zeros(2, np.float32), np.zeros((3, 2), np.float32).T, np.zeros(3, np.float32)),
     ValueError, "argument 'dx': expected a contiguous tensor"),
    (lambda m: m.rmsnorm_backward_cpu(np.zeros((2, 3), np.float32), np.zeros((2, 3), np.float32), np.zeros(3, np.float32), np.zeros(2, np.float32), np.zeros((2, 3), np.float32), np.zeros(2, np.float32)),
     ValueError, "argument 'dweight': expected 3 elements, got 2"),
])
def test_kernels_reject_bad_input(mod, call, error, message):
    with pytest.raises(error) as info:
        call(mod)
    assert message in str(info.value)


def test_cuda_entries_reject_cpu_tensors(mod):
    if not mod.implements_function("rmsnorm_forward_cuda"):
        pytest.skip("CUDA variant not built (no nvcc)")
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(ValueError, match="argument 'x': expected a tensor on cuda, got one on cpu:0"):
        mod.rmsnorm_forward_cuda(x, np.zeros(3, np.float32), x, np.zeros(2, np.float32), 1e-6)


@needs_cuda
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("shape", [(1, 1), (3, 1000), (65, 33)], ids=str)
def test_cuda_values_and_gradients_match_torch(ops, dtype, shape):
    x, w = sample_inputs("cuda", dtype, shape)
    for a, b in zip(gradients(ops.rms_norm, x, w), gradients(reference, x, w)):
        torch.testing.assert_close(a, b, rtol=1e-4 if dtype == torch.float32 else 1e-10,
                                   atol=1e-4 if dtype == torch.float32 else 1e-10)


@needs_cuda
def test_cuda_gradcheck_float64(ops):
    x, w = sample_inputs("cuda", torch.float64, (4, 7))
    assert torch.autograd.gradcheck(lambda x, w: ops.rms_norm(x, w, 1e-3), (x, w))
