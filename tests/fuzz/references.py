"""What a correct call returns, for the exports whose result can be recomputed.

Each reference gets the tensor arguments as they were before the call and
after it (torch tensors; other arguments as passed) and the call's result, and
raises AssertionError when the result is wrong. Exports without an entry are
only required not to crash.

An entry is optional: a new recipe's exports are fuzzed without one (the fuzz finds them in
the libraries its folder builds). Add one, keyed by the export's name, to have the fuzz also
check what it computes; this is the one file outside a recipe's folder that adding a recipe
may touch (CONTRIBUTING.md, "Add a recipe").
"""

from __future__ import annotations

import numpy as np
import torch

#: (rtol, atol) by output dtype: a few rounding steps of that dtype.
_TOL = {torch.float32: (1e-5, 1e-5), torch.float16: (2e-3, 2e-3), torch.bfloat16: (1.6e-2, 1.6e-2),
        torch.float64: (1e-12, 1e-12)}


def as_torch(value):
    """A torch view of a numpy array, torch tensor or tvm_ffi tensor; other values unchanged."""
    if isinstance(value, torch.Tensor):
        return value
    if isinstance(value, np.ndarray):
        return torch.from_numpy(value)
    if hasattr(value, "__dlpack__") and not isinstance(value, (int, float)):
        return torch.from_dlpack(value)
    return value


def _close(actual, expected64, dtype):
    rtol, atol = _TOL.get(dtype, (0, 0))
    expected = expected64.to(dtype).double()
    torch.testing.assert_close(actual.double(), expected, rtol=rtol, atol=atol, equal_nan=True)


def _unary(fn):
    """out = fn(x) for f(x, out, ...) kernels, computed in float64 and rounded once."""
    def check(before, after, result):
        _close(after[1], fn(before[0].double(), *before[2:]), after[1].dtype)
    return check


def _binary(before, after, result):
    _close(after[2], before[0].double() + before[1].double(), after[2].dtype)


def _affine(before, after, result):
    x, _, a, b = before
    wide = (a * x.double() + b).float()  # the kernel rounds to float, then to the dtype
    _close(after[1], wide.double(), after[1].dtype)


def _scale(before, after, result):
    x, alpha = before[0], before[1]
    _close(after[2], (torch.tensor(alpha).float() * x.float()).double(), after[2].dtype)


def _rms_norm(before, after, result):
    x, w, _, eps = before
    x64 = x.double()
    ref = x64 / torch.sqrt((x64 * x64).mean(-1, keepdim=True) + eps) * w.double()
    _close(after[2], ref, after[2].dtype)


def _sum(before, after, result, weight=1.0):
    x = before[0].double()
    expected = weight * float(x.sum())
    scale = abs(weight) * float(x.abs().sum()) if x.numel() else 0.0
    assert result == expected or abs(result - expected) <= 1e-5 * scale + 1e-30 or (  # inf == inf
        np.isnan(result) and np.isnan(expected)), (
        f"got {result}, expected {expected}")


def _ring(before, after, result):
    x, y_before = before[0], before[1]
    expected = y_before if x.ndim == 0 or x.shape[0] == 0 else torch.roll(x, 1, 0)
    assert torch.equal(after[1].view(torch.uint8) if after[1].dtype != torch.bool else after[1],
                       expected.contiguous().view(torch.uint8) if expected.dtype != torch.bool else expected)


def _twice(before, after, result):
    _close(as_torch(result), 2 * before[0].double(), before[0].dtype)


def _silu(before, after, result):
    x = before[0].double()
    _close(as_torch(result), x * torch.sigmoid(x), before[0].dtype)


def _address_into(before, after, result):
    assert int(after[1][0]) == after[0].data_ptr()


REFERENCES = {
    "add_one_cpu": _unary(lambda x: x + 1),
    "affine_cpu": _affine,
    "relu_squared_cpu": _unary(lambda x: torch.clamp(x.float(), min=0).double() ** 2),
    "scale_cpu": _scale,
    "checked_add_cpu": _binary,
    "overhead_add_cpu": _binary,
    "rms_norm_cpu": _rms_norm,
    "view_sum_cpu": _sum,
    "weighted_sum_cpu": lambda before, after, result: _sum(before, after, result, before[1]),
    "ring_shift_cpu": _ring,
    "alloc_twice_env_cpu": _twice,
    "alloc_twice_raw_env_cpu": _twice,
    "alloc_twice_nd_cpu": _twice,
    "silu_ffi_cpu": _silu,
    "scale_into_cpu": _unary(lambda x, alpha: torch.tensor(alpha).float().double() * x),
    "tensor_data_address": lambda before, after, result: _check(result == after[0].data_ptr(), result),
    "tensor_data_address_into_cpu": _address_into,
    "overhead_noop1_cpu": lambda before, after, result: _check(result is None, result),
    "overhead_noop3_cpu": lambda before, after, result: _check(result is None, result),
    "overhead_noop8_cpu": lambda before, after, result: _check(result is None, result),
    "icheck_demo_cpu": lambda before, after, result: _check(result == before[0] >= 0, result),
    "ffi_cookbook_variants": lambda before, after, result: _check("cpu" in str(result).split(","), result),
    # The guide pages' kernels (docs/guides/code).
    "guide_twice": _unary(lambda x: 2 * x),
    "guide_scale_into": _unary(lambda x, alpha: torch.tensor(alpha).float().double() * x),
    "guide_copy_owned": _unary(lambda x: x),
    "guide_scaled_nd": lambda before, after, result: _close(
        as_torch(result), torch.tensor(before[1]).float().double() * before[0].double(), before[0].dtype),
    "guide_add_bias": lambda before, after, result: _close(
        after[2], before[0].double() + (0 if before[1] is None else before[1].double()), after[2].dtype),
}


def _check(ok, result):
    assert ok, f"unexpected result {result!r}"
