"""scale_into three ways: tvm_ffi, TORCH_LIBRARY and STABLE_TORCH_LIBRARY give the same
answers and refuse bad input; what each library links and imports; torch.compile; NumPy and JAX."""

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import tvm_ffi

HERE = Path(__file__).resolve().parent
# The README's build: cmake -S . -B build, in this folder. The two torch libraries sit beside it.
LIBRARY = HERE / "build" / "libscale_into.so"
WAYS = ["tvm_ffi", "TORCH_LIBRARY", "STABLE_TORCH_LIBRARY"]
SHAPES = [(), (0,), (1,), (7,), (3, 5), (2, 3, 4)]


def library(way: str) -> Path:
    suffix = {"tvm_ffi": "", "TORCH_LIBRARY": "_torch", "STABLE_TORCH_LIBRARY": "_stable"}[way]
    return LIBRARY.parent / f"libscale_into{suffix}.so"


@pytest.fixture(scope="module")
def ops():
    """way -> the callable scale_into(x, out, alpha)."""
    torch.ops.load_library(str(library("TORCH_LIBRARY")))
    torch.ops.load_library(str(library("STABLE_TORCH_LIBRARY")))
    mod = tvm_ffi.load_module(str(library("tvm_ffi")))
    return {"tvm_ffi": mod.scale_into_cpu, "TORCH_LIBRARY": torch.ops.cookbook_torch.scale_into,
            "STABLE_TORCH_LIBRARY": torch.ops.cookbook_stable.scale_into}


def sample_inputs(device, shape=(3, 5)):
    x = torch.randn(shape, generator=torch.Generator().manual_seed(0)).to(device)
    return x, torch.empty_like(x), 2.5


def reference(x, alpha):
    return x * alpha


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("way", WAYS)
def test_same_answer(ops, way, shape):
    x, out, alpha = sample_inputs("cpu", shape)
    assert ops[way](x, out, alpha) is None
    torch.testing.assert_close(out, reference(x, alpha), rtol=0, atol=0)


def test_in_place(ops):
    for way in WAYS:
        x, _, alpha = sample_inputs("cpu")
        expected = reference(x, alpha)
        ops[way](x, x, alpha)
        torch.testing.assert_close(x, expected, rtol=0, atol=0)


BAD = {  # label -> (x, out, the argument named)
    "int32 x": (torch.zeros(3, dtype=torch.int32), torch.zeros(3), "x"),
    "float64 out": (torch.zeros(3), torch.zeros(3, dtype=torch.float64), "out"),
    "transposed x": (torch.zeros(3, 4).T, torch.zeros(4, 3), "x"),
    "out of another shape": (torch.zeros(3), torch.zeros(4), "out"),
}
# What each way raises for a wrong dtype, and for anything else it refuses.
ERRORS = {"tvm_ffi": (TypeError, ValueError), "TORCH_LIBRARY": (TypeError, ValueError),
          "STABLE_TORCH_LIBRARY": (RuntimeError, RuntimeError)}


@pytest.mark.parametrize("label", BAD)
@pytest.mark.parametrize("way", WAYS)
def test_bad_input_raises_naming_the_argument(ops, way, label):
    x, out, name = BAD[label]
    wrong_dtype, other = ERRORS[way]
    expected = wrong_dtype if "int32" in label or "float64" in label else other
    with pytest.raises(expected, match=f"argument '{name}': expected"):
        ops[way](x, out, 1.0)


def dynamic(path: Path, tag: str) -> list[str]:
    out = subprocess.run(["readelf", "-d", str(path)], capture_output=True, text=True, check=True).stdout
    return re.findall(rf"\({tag}\)\s+.*\[(.*)\]", out)


def imports(path: Path) -> list[str]:
    """The undefined dynamic symbols of a library: what it imports."""
    out = subprocess.run(["nm", "-D", "--undefined-only", str(path)], capture_output=True, text=True,
                         check=True).stdout
    return [line.split()[-1] for line in out.splitlines() if line.strip()]


def torch_cpp_imports(path: Path) -> list[str]:
    """The symbols of torch's C++ API (namespaces c10, at, torch) the library imports."""
    return [s for s in imports(path) if s.startswith(("_ZN3c10", "_ZNK3c10", "_ZN2at", "_ZNK2at", "_ZN5torch"))]


def test_only_the_torch_libraries_link_torch():
    needed = {way: dynamic(library(way), "NEEDED") for way in WAYS}
    assert "libtvm_ffi.so" in needed["tvm_ffi"]
    assert not [n for n in needed["tvm_ffi"] if "torch" in n or "c10" in n]
    for way in ("TORCH_LIBRARY", "STABLE_TORCH_LIBRARY"):
        assert {"libtorch_cpu.so", "libc10.so"} <= set(needed[way])


def test_the_stable_library_imports_no_cpp_symbol_of_torch():
    assert torch_cpp_imports(library("TORCH_LIBRARY"))
    assert torch_cpp_imports(library("STABLE_TORCH_LIBRARY")) == []
    assert "torch_get_mutable_data_ptr" in imports(library("STABLE_TORCH_LIBRARY"))  # a stable-ABI C function


def compiled(fn):
    def twice_plus_one(x):
        out = torch.empty_like(x)
        fn(x, out, 2.0)
        return out + 1
    return torch.compile(twice_plus_one, fullgraph=True, backend="aot_eager")


@pytest.mark.parametrize("way", ["TORCH_LIBRARY", "STABLE_TORCH_LIBRARY"])
def test_torch_ops_compile_in_one_graph(ops, way):
    torch._dynamo.reset()
    x = torch.randn(4, 3)
    torch.testing.assert_close(compiled(ops[way])(x), x * 2 + 1)


def test_tvm_ffi_function_compiles_once_wrapped_as_a_custom_op(ops):
    torch._dynamo.reset()
    x = torch.randn(4, 3)
    with pytest.raises(torch._dynamo.exc.Unsupported):
        compiled(ops["tvm_ffi"])(x)

    @torch.library.custom_op("cookbook_test::scale_into", mutates_args={"out"})
    def scale_into(x: torch.Tensor, out: torch.Tensor, alpha: float) -> None:
        ops["tvm_ffi"](x, out, alpha)

    torch._dynamo.reset()
    torch.testing.assert_close(compiled(scale_into)(x), x * 2 + 1)


def test_numpy_and_jax_reach_only_the_tvm_ffi_function(ops):
    jax = pytest.importorskip("jax")
    cpu = jax.devices("cpu")[0]  # with a GPU, JAX would put the array there
    for x in (np.arange(5, dtype=np.float32), jax.device_put(jax.numpy.arange(5, dtype=np.float32), cpu)):
        out = np.zeros(5, np.float32)
        ops["tvm_ffi"](x, out, 3.0)
        np.testing.assert_array_equal(out, 3.0 * np.arange(5, dtype=np.float32))
    for way in ("TORCH_LIBRARY", "STABLE_TORCH_LIBRARY"):
        with pytest.raises(RuntimeError, match="Expected a value of type 'Tensor'"):
            ops[way](np.zeros(3, np.float32), np.zeros(3, np.float32), 1.0)


def test_tvm_ffi_library_needs_no_torch():
    # tvm_ffi imports torch when it can (for its tensor exchange); here it cannot.
    script = ("import sys; sys.modules['torch'] = None\n"
              "import numpy as np, tvm_ffi\n"
              "f = tvm_ffi.load_module(sys.argv[1]).scale_into_cpu\n"
              "out = np.zeros(3, np.float32); f(np.ones(3, np.float32), out, 2.0)\n"
              "assert out.tolist() == [2.0] * 3\n")
    subprocess.run([sys.executable, "-c", script, str(library("tvm_ffi"))], check=True)
