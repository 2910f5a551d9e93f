"""clamp_config: the config object's defaults, keys and JSON, and the kernel that reads it."""

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import tvm_ffi
from tvm_ffi.serialization import from_json_graph_str, to_json_graph_str

HERE = Path(__file__).resolve().parent
# The README's build: cmake -S . -B build, in this folder.
LIBRARY = HERE / "build" / "libclamp_config.so"


@pytest.fixture(scope="module")
def mod():
    return tvm_ffi.load_module(str(LIBRARY))


@pytest.fixture(scope="module")
def ClampConfig(mod):  # noqa: N802 (a class)
    sys.path.insert(0, str(HERE))
    try:
        from clamp_config import ClampConfig
    finally:
        sys.path.remove(str(HERE))
    return ClampConfig


def reference(x, scale=1.0, low=None, high=None):
    return x * scale if low is None and high is None else torch.clamp(x * scale, low, high)


@pytest.mark.parametrize("options", [{}, {"scale": 2.0}, {"low": -0.5}, {"high": 0.25},
                                     {"scale": -3.0, "low": -1.0, "high": 2.0}, {"low": 0.5, "high": 0.5}],
                         ids=repr)
@pytest.mark.parametrize("shape", [(0,), (1,), (7,), (3, 5)], ids=str)
def test_kernel_matches_torch(mod, ClampConfig, options, shape):
    x = torch.randn(shape, generator=torch.Generator().manual_seed(0))
    y = torch.empty_like(x)
    assert mod.scaled_clamp(x, y, ClampConfig(**options)) is None
    torch.testing.assert_close(y, reference(x, **options), rtol=0, atol=0)


def test_numpy_arrays_work_too(mod, ClampConfig):
    x = np.linspace(-2, 2, 9, dtype=np.float32)
    y = np.empty_like(x)
    mod.scaled_clamp(x, y, ClampConfig(low=-1.0, high=1.0))
    np.testing.assert_array_equal(y, np.clip(x, -1, 1))


def test_defaults_and_keyword_only_fields(ClampConfig):
    config = ClampConfig()
    assert (config.scale, config.low, config.high) == (1.0, None, None)
    with pytest.raises(TypeError, match="positional"):
        ClampConfig(2.0)
    with pytest.raises(AttributeError):
        config.scale = 2.0  # frozen


def test_equal_configs_are_one_key(ClampConfig):
    a, b = ClampConfig(scale=2.0, high=1.0), ClampConfig(scale=2.0, high=1.0)
    assert a is not b and a == b and hash(a) == hash(b)
    assert tvm_ffi.structural_equal(a, b) and tvm_ffi.structural_hash(a) == tvm_ffi.structural_hash(b)
    cache = {a: "built once"}
    assert cache[b] == "built once"
    for other in [ClampConfig(scale=2.0), ClampConfig(scale=2.0, high=1.5), ClampConfig(scale=2.0, low=1.0)]:
        assert other != a and other not in cache


def test_structural_hash_is_the_same_in_another_process(ClampConfig):
    script = (f"import sys, tvm_ffi; tvm_ffi.load_module({str(LIBRARY)!r}); sys.path.insert(0, {str(HERE)!r})\n"
              "from clamp_config import ClampConfig\n"
              "print(tvm_ffi.structural_hash(ClampConfig(scale=2.0, high=1.0)))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert int(done.stdout) == tvm_ffi.structural_hash(ClampConfig(scale=2.0, high=1.0))


def test_json_round_trip(ClampConfig):
    for config in [ClampConfig(), ClampConfig(scale=-2.5, low=-1.0), ClampConfig(high=1e30)]:
        text = to_json_graph_str(config)
        back = from_json_graph_str(text)
        assert type(back) is ClampConfig and back == config and back is not config
        assert (back.scale, back.low, back.high) == (config.scale, config.low, config.high)


def test_a_config_that_is_not_one_is_a_type_error(mod):
    x = torch.zeros(3)
    for bad in [2.0, None, "scale=2", {"scale": 2.0}]:
        with pytest.raises(TypeError, match="argument #2.*Expected `cookbook.ClampConfig`"):
            mod.scaled_clamp(x, torch.empty_like(x), bad)


@pytest.mark.parametrize("options", [{"low": 1.0, "high": 0.0}, {"low": math.nan}, {"high": math.nan},
                                     {"scale": math.nan}], ids=repr)
def test_bounds_that_mean_nothing_are_a_value_error(mod, ClampConfig, options):
    x = torch.zeros(3)
    with pytest.raises(ValueError, match="argument 'config': expected numbers with low <= high"):
        mod.scaled_clamp(x, torch.empty_like(x), ClampConfig(**options))


def test_bad_tensors_name_the_argument(mod, ClampConfig):
    config, x = ClampConfig(), torch.zeros(4)
    cases = [
        ((x.double(), x), TypeError, "argument 'x': expected dtype float32"),
        ((x, x.to(torch.int32)), TypeError, "argument 'y': expected dtype float32"),
        ((x, torch.zeros(5)), ValueError, "argument 'y': expected the shape of 'x'"),
        ((torch.zeros(4, 4).T, torch.zeros(4, 4)), ValueError, "argument 'x': expected a contiguous tensor"),
    ]
    misaligned = np.frombuffer(np.zeros(17, np.uint8).data, np.float32, count=4, offset=1)
    cases.append(((misaligned, np.zeros(4, np.float32)), ValueError,
                  "argument 'x': expected data aligned to 4-byte elements"))
    for (a, b), kind, message in cases:
        with pytest.raises(kind, match=message):
            mod.scaled_clamp(a, b, config)
