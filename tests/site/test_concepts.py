"""The concept pages' claims, checked on a fresh build of docs/concepts/code.

The folder is copied to a temporary directory and built there with the two
CMake commands the pages run, so these tests do not depend on the site build.
"""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import tvm_ffi

CODE = Path(__file__).resolve().parents[2] / "docs" / "concepts" / "code"
INCLUDE = subprocess.run([sys.executable, "-m", "tvm_ffi.config", "--includedir"],
                         capture_output=True, text=True, check=True).stdout.strip()
CALLERS = ["CallDirect", "CallPacked", "CallThroughPointer"]


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    folder = tmp_path_factory.mktemp("concepts") / "code"
    shutil.copytree(CODE, folder, ignore=shutil.ignore_patterns("build"))
    # The pages' two commands (no helper headers: the folder includes only tvm_ffi's and dlpack's);
    # their output goes to pytest's capture, shown when a step fails.
    subprocess.run(["cmake", "-S", folder, "-B", folder / "build", f"-DPython_EXECUTABLE={sys.executable}"],
                   check=True)
    subprocess.run(["cmake", "--build", folder / "build"], check=True)
    return folder / "build"


def run(build, program):
    done = subprocess.run([str(build / program)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


# --- tensors-and-dlpack -----------------------------------------------------

def test_layout_facts(build):
    structs = {s["name"]: s for s in json.loads(run(build, "tensor_layout"))}
    fields = {name: {f["name"]: f for f in s["fields"]} for name, s in structs.items()}
    dl_tensor_size = structs["DLTensor"]["size"]
    # DLManagedTensor starts with its DLTensor; the versioned one ends with it.
    assert fields["DLManagedTensor"]["dl_tensor"]["offset"] == 0
    assert fields["DLManagedTensorVersioned"]["version"]["offset"] == 0
    versioned = fields["DLManagedTensorVersioned"]["dl_tensor"]
    assert versioned["offset"] + dl_tensor_size == structs["DLManagedTensorVersioned"]["size"]
    # TensorObj: the object header, then the DLTensor right after it, nothing else.
    header = structs["TVMFFIObject"]["size"]
    assert fields["TVMFFIObject"]["combined_ref_count"]["offset"] == 0
    assert fields["TensorObj"]["object header"] == {"name": "object header", "offset": 0,
                                                     "size": header}
    assert fields["TensorObj"]["data"]["offset"] == header
    assert structs["TensorObj"]["size"] == header + dl_tensor_size
    for name, f in fields["DLTensor"].items():
        assert fields["TensorObj"][name]["offset"] == header + f["offset"]
    # An Any: type index, padding, one 8-byte value.
    assert structs["TVMFFIAny"]["size"] == 16
    assert fields["TVMFFIAny"]["value (union)"]["offset"] == 8


def use_counts(output):
    return [int(n) for n in re.findall(r"use_count (\d+)", output)]


def test_cpp_handles(build):
    out = run(build, "tensor_handles")
    # FromNDAlloc, as<TensorObj>, GetRef, scope end, TensorView, Any + AnyView
    assert use_counts(out) == [1, 1, 2, 1, 1, 2]
    assert "owned 70 (kTVMFFITensor 70), seen 7 (kTVMFFIDLTensorPtr 7)" in out
    assert "seen.cast<Tensor>() throws TypeError: Cannot convert from type `DLTensor*`" in out


def test_c_conversions_and_ref_counts(build):
    out = run(build, "tensor_any_demo")
    counts = [int(n) for n in re.findall(r"strong count (\d+)", out)]
    assert counts == [1, 2, 2, 3, 1, 1, 2, 1]
    assert "TVMFFITensorToDLPack (manager_ctx == tensor) strong count 2" in out
    assert "OwnedTensorToAny   (type_index 70)" in out
    assert "TensorViewToAny    (type_index 7)" in out
    assert ("-> returned -1, raised TypeError: AnyToOwnedTensor: expected a tensor object, "
            "not a view") in out
    assert out.rstrip().endswith("producer deleter ran: yes")


def test_c_sources_are_plain_c99(build):
    commands = json.loads((build / "compile_commands.json").read_text())
    c_files = [c for c in commands if c["file"].endswith(".c")]
    assert {Path(c["file"]).name for c in c_files} == {"tensor_any.c", "tensor_any_demo.c"}
    for c in c_files:
        assert "-std=c99" in c["command"].split(), c["command"]
    # Strict C99 with warnings as errors, against c_api.h and dlpack.h only.
    for name in ["tensor_any.c", "tensor_any_demo.c"]:
        subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", f"-I{INCLUDE}",
                        "-fsyntax-only", str(CODE / name)], check=True)


def test_tensor_has_no_math_indexing_or_autograd():
    t = tvm_ffi.from_dlpack(np.zeros((2, 3), np.float32))
    with pytest.raises(TypeError):
        t + 1
    with pytest.raises(TypeError):
        t[0]
    for name in ["sum", "grad", "copy", "to"]:
        assert not hasattr(t, name), name


# --- packed-calling-convention ------------------------------------------------

@pytest.fixture(scope="module")
def packed(build):
    return tvm_ffi.load_module(str(build / "libconcepts_packed.so"))


def test_hand_written_packed_function(packed):
    x = np.arange(5, dtype=np.float32)
    y = np.zeros_like(x)
    assert packed.concepts_add_one_packed(x, y) is None
    np.testing.assert_array_equal(y, x + 1)
    yt = tvm_ffi.from_dlpack(np.zeros_like(x))
    packed.concepts_add_one_packed(tvm_ffi.from_dlpack(x), yt)
    np.testing.assert_array_equal(np.from_dlpack(yt), x + 1)
    assert packed.concepts_noop() is None


@pytest.mark.parametrize("args, error, message", [
    ((np.zeros(2, np.float32),), TypeError, "expected 2 arguments (x, y)"),
    ((np.zeros(2, np.float32), 1), TypeError, "x and y must be tensors"),
    ((np.zeros(2), np.zeros(2, np.float32)), TypeError,
     "expected contiguous 1-d float32 CPU tensors"),
    ((np.zeros((2, 2), np.float32), np.zeros((2, 2), np.float32)), TypeError,
     "expected contiguous 1-d float32 CPU tensors"),
    ((np.zeros(5, np.float32), np.zeros(3, np.float32)), ValueError, "x and y differ in length"),
])
def test_packed_function_errors(packed, args, error, message):
    with pytest.raises(error, match=re.escape("add_one_packed: " + message)):
        packed.concepts_add_one_packed(*args)


def assembly_of(compiler, out_dir):
    out = out_dir / f"packed_add_one.{compiler}.s"
    subprocess.run([compiler, "-std=c++17", "-O2", "-S", "-fno-asynchronous-unwind-tables",
                    f"-I{INCLUDE}", str(CODE / "packed_add_one.cc"), "-o", str(out)], check=True)
    text = out.read_text()
    bodies = {}
    for name in CALLERS:
        body = text.split(f"\n{name}:\n")[1].split(f".size\t{name},")[0]
        bodies[name] = [re.sub(r"\.L\w+", ".L", line.strip()) for line in body.splitlines()
                        if line.startswith("\t") and line.strip()
                        and not line.strip().startswith(".")]
    return bodies


@pytest.mark.parametrize("compiler", ["g++", "clang++"])
def test_packed_call_inlines_to_the_direct_loop(compiler, tmp_path):
    if shutil.which(compiler) is None:
        pytest.skip(f"{compiler} is not on PATH")
    bodies = assembly_of(compiler, tmp_path)
    assert bodies["CallPacked"] == bodies["CallDirect"]
    assert not any("TVMFFIErrorSetRaised" in line for line in bodies["CallPacked"])
    assert not any(line.startswith("call") for line in bodies["CallPacked"])
    # Through an opaque function pointer, the call and the argument stores stay.
    through_pointer = bodies["CallThroughPointer"]
    assert any(line.startswith("call") for line in through_pointer)
    assert len(through_pointer) > 2 * len(bodies["CallDirect"])
