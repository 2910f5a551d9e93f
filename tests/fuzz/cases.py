"""Hypothesis strategies for argument lists, as plain data (a reproducer is its repr).

An argument is a tuple whose first item says what to build (see
:func:`.materialize.build`): ``("np", dtype, shape, layout, fill, seed)``,
``("torch", dtype, shape, device, layout, fill, seed)``, ``("raw", code, bits,
lanes, shape, strides, device_type, device_id, byte_offset)`` (a DLTensor no
framework makes, from the probe library), ``("like", i, how)`` (a tensor
derived from argument i), or a scalar such as ``("int", 3)``.
"""

from __future__ import annotations

from hypothesis import strategies as st

NUMPY_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                "float16", "float32", "float64", "longdouble", "complex64", "complex128", "datetime64[s]"]
TORCH_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                "float16", "bfloat16", "float32", "float64", "complex32", "complex64", "complex128",
                "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu",
                "float4_e2m1fn_x2", "int1", "int4", "uint1", "uint3", "uint7", "bits8"]
#: The dtypes the kernels accept, drawn more often so that calls get past the checks.
KERNEL_DTYPES = ["float32", "float16", "bfloat16", "int64"]
NUMPY_LAYOUTS = ["c", "c", "c", "T", "step", "neg", "offset", "misaligned", "overlap", "readonly", "memmap"]
TORCH_LAYOUTS = ["c", "c", "c", "T", "step", "offset", "overlap", "expand"]
#: What a Python callback passed to an export does when called with (n): see materialize.
CALLBACKS = ["np_int64", "torch_int64", "np_float32", "np_wrong_length", "np_misaligned", "none", "raises",
             "count"]
DEVICE_NAMES = ["cpu:0", "cpu:3", "cuda:0", "cuda:7", "cuda_host:0", "rocm:0", "metal:1", "vulkan:0",
                "opencl:0", "ext_dev:0", "cuda_managed:0"]
DTYPE_NAMES = ["float32", "float16", "bfloat16", "int8", "bool", "float64", "uint1", "float8_e4m3fn",
               "float4_e2m1fnx2", "float32x4", "handle"]
INT_EDGES = [0, 1, -1, 2, 3, 7, 64, 2**20, 2**31 - 1, 2**31, -2**31, 2**32, 2**62, 2**63 - 1, -2**63,
             2**63, 2**64, -2**70]
FLOAT_EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, 1e-6, 1e-45, 5e-324, 1e38, 1e308, -1e308, "nan", "inf", "-inf"]

dims = st.sampled_from([0, 1, 1, 2, 3, 4, 5, 7, 8, 16, 33])
small_shapes = st.lists(dims, min_size=0, max_size=4).map(tuple)
# Many dimensions (numel stays small), and shapes whose numel is 0 but whose
# sizes are huge: both stress size arithmetic without allocating much.
wide_shapes = st.lists(st.sampled_from([1, 1, 2]), min_size=5, max_size=32).map(
    lambda dims: tuple(d if d == 1 or dims[:i].count(2) < 10 else 1 for i, d in enumerate(dims)))
huge_empty_shapes = st.tuples(st.sampled_from([0]), st.sampled_from([2**31, 2**40, 2**62])).map(
    lambda t: t if t[0] == 0 else t[::-1])
large_shapes = st.sampled_from([(2**16 + 3,), (257, 1031), (2**20,)])
shapes = st.one_of(small_shapes, small_shapes, small_shapes, wide_shapes, huge_empty_shapes, large_shapes)
seeds = st.integers(0, 2**16)
fills = st.sampled_from(["normal", "normal", "bytes"])


def _dtype(pool: list[str]) -> st.SearchStrategy[str]:
    return st.one_of(st.sampled_from(KERNEL_DTYPES).filter(lambda d: d in pool), st.sampled_from(pool))


numpy_tensors = st.tuples(st.just("np"), _dtype(NUMPY_DTYPES), shapes, st.sampled_from(NUMPY_LAYOUTS),
                          fills, seeds)
torch_tensors = st.tuples(st.just("torch"), _dtype(TORCH_DTYPES), shapes,
                          st.sampled_from(["cpu", "cpu", "cpu", "meta"]), st.sampled_from(TORCH_LAYOUTS),
                          fills, seeds)
raw_strides = st.one_of(st.none(), st.lists(st.integers(-70, 70), min_size=0, max_size=4).map(tuple))
raw_tensors = st.builds(
    lambda code, bits, lanes, shape, strides, dev, dev_id, offset: (
        "raw", code, bits, lanes, shape, None if strides is None else (strides + (1,) * 8)[:len(shape)],
        dev, dev_id, offset),
    st.one_of(st.sampled_from([0, 1, 2, 4, 5, 6]), st.integers(0, 255)),
    st.one_of(st.sampled_from([1, 4, 8, 16, 32, 64]), st.integers(0, 255)),
    st.one_of(st.just(1), st.sampled_from([0, 2, 4, 65532]), st.integers(0, 65535)),
    st.lists(st.sampled_from([0, 1, 2, 3, 5]), min_size=0, max_size=4).map(tuple),
    raw_strides,
    st.one_of(st.just(1), st.integers(-2, 40)),
    st.one_of(st.just(0), st.sampled_from([-1, 1, 2**31 - 1])),
    st.one_of(st.just(0), st.sampled_from([1, 2, 4, 64]))
)
tensors = st.one_of(numpy_tensors, numpy_tensors, torch_tensors, torch_tensors, raw_tensors)

floats = st.one_of(st.sampled_from(FLOAT_EDGES), st.floats(allow_nan=False, width=64)).map(lambda v: ("float", v))
ints = st.one_of(st.sampled_from(INT_EDGES), st.integers(-2**70, 2**70)).map(lambda v: ("int", v))
bools = st.booleans().map(lambda v: ("bool", v))
strings = st.one_of(st.sampled_from(["", "float32", "cuda:0", "x" * 300]), st.text(max_size=20)).map(
    lambda v: ("str", v))
byte_strings = st.tuples(st.just("bytes"), st.sampled_from([0, 1, 8, 127, 128, 129, 4096]), seeds)
leaves = st.one_of(
    st.just(("none",)), floats, ints, bools, strings, byte_strings,
    st.tuples(st.just("complex"), st.floats(-4, 4), st.floats(-4, 4)),
    st.tuples(st.just("npscalar"), st.sampled_from(["float32", "int64", "bool", "complex64"]), st.integers(-3, 3)),
    st.tuples(st.just("shape"), st.lists(st.integers(-3, 2**40), max_size=4).map(tuple)),
    st.tuples(st.just("dtype"), st.sampled_from(DTYPE_NAMES)),
    st.tuples(st.just("device"), st.sampled_from(DEVICE_NAMES)),
    st.sampled_from([("object",), ("dict",), ("ffi_function",)]),
    st.tuples(st.just("callable"), st.sampled_from(CALLBACKS)),
)
anything = st.one_of(leaves, leaves, tensors,
                     st.tuples(st.sampled_from(["list", "tuple"]), st.lists(leaves, max_size=3).map(tuple)))

BY_KIND = {
    "tensor": tensors, "float": st.one_of(floats, ints), "int": ints, "bool": st.one_of(bools, ints),
    "bytes": byte_strings, "str": strings, "device": st.tuples(st.just("device"), st.sampled_from(DEVICE_NAMES)),
    "shape": st.tuples(st.just("shape"), st.lists(st.integers(-3, 2**40), max_size=4).map(tuple)),
    "dtype": st.tuples(st.just("dtype"), st.sampled_from(DTYPE_NAMES)),
    "function": st.tuples(st.just("callable"), st.sampled_from(CALLBACKS)),
}


@st.composite
def arguments(draw, kinds: tuple[str, ...]) -> tuple:
    """An argument list for a function with these parameter kinds."""
    n = len(kinds)
    if draw(st.integers(0, 99)) < 6:  # too few or too many arguments
        n = draw(st.integers(0, n + 3).filter(lambda k: k != len(kinds)))
    args: list[tuple] = []
    first_tensor = None
    for i in range(n):
        kind = kinds[i] if i < len(kinds) else "any"
        if draw(st.integers(0, 99)) < 12:  # the wrong kind of value
            args.append(draw(anything))
            continue
        if kind == "tensor" and first_tensor is not None and draw(st.integers(0, 99)) < 70:
            # Tensors shaped like the first one get past the shape and dtype checks.
            args.append(("like", first_tensor, draw(st.sampled_from(["fresh", "fresh", "same", "row", "cast"]))))
            continue
        value = draw(BY_KIND.get(kind, anything))
        if kind == "tensor" and value[0] in ("np", "torch", "raw"):
            first_tensor = i if first_tensor is None else first_tensor
        args.append(value)
    return tuple(args)


# The systematic pass (see run.systematic): for every parameter, each of these
# values in its place, every other argument valid. ``("valid", i)`` is argument i
# of the export's valid sample (samples.sample_args), ``("bad", i, how)`` a
# tensor derived from it: the same values with one thing wrong (TENSOR_FAULTS).

#: Bad values of every kind, as plain data: each is tried in every parameter.
BAD_VALUES = {
    "none": [("none",)],
    "tensor": [("np", "complex64", (8,), "c", "normal", 0), ("np", "float32", (4, 16), "T", "normal", 1),
               ("np", "float32", (64,), "memmap", "normal", 2), ("torch", "float32", (2**20,), "cpu", "c", "normal", 3),
               ("torch", "float32", (0, 2**40), "cpu", "c", "normal", 4),
               ("torch", "float8_e4m3fn", (64,), "cpu", "c", "bytes", 5),
               ("raw", 2, 32, 4, (64,), None, 1, 0, 0), ("raw", 2, 32, 1, (4, 16), (1, 70), 1, 0, 0),
               ("raw", 2, 32, 1, (64,), None, 2, 0, 0), ("raw", 99, 7, 1, (64,), None, 1, 0, 1)],
    "int": [("int", v) for v in (0, -1, 2**31, -2**31, 2**63 - 1, -2**63, 2**64)],
    "float": [("float", v) for v in ("nan", "inf", -1.0, 0.0, 1e308)],
    "bool": [("bool", True), ("bool", False)],
    "str": [("str", ""), ("str", "x" * 300), ("str", "\u00e9\0")],
    "bytes": [("bytes", 0, 0), ("bytes", 129, 0)],
    "device": [("device", "cuda:7"), ("device", "cpu:3"), ("device", "ext_dev:0")],
    "shape": [("shape", ()), ("shape", (-3, 2**40))],
    "dtype": [("dtype", "handle"), ("dtype", "float32x4"), ("dtype", "bool")],
    "function": [("callable", c) for c in CALLBACKS] + [("ffi_function",)],
    "other": [("object",), ("dict",), ("complex", 1.0, -1.0), ("npscalar", "float32", 1),
              ("list", (("int", 1), ("none",))), ("tuple", ())],
}

#: What is wrong with a tensor derived from a valid one (materialize.fault).
TENSOR_FAULTS = ["float64", "int32", "float16", "bool", "complex64", "strided", "transposed", "overlap",
                 "expand", "empty", "0d", "huge_empty", "misaligned", "byte_offset", "readonly", "numpy", "meta",
                 "fake_cuda", "ext_dev"]


def systematic_cases(kinds: tuple[str, ...]) -> list[tuple]:
    """Every bad value in every parameter with the others valid, then one argument too few
    and one too many: the same list in every run."""
    n = len(kinds)
    valid = [("valid", i) for i in range(n)]
    cases = []
    for i, kind in enumerate(kinds):
        values = [v for vs in BAD_VALUES.values() for v in vs]
        if kind == "tensor":
            values += [("bad", i, how) for how in TENSOR_FAULTS]
        cases += [tuple(valid[:i] + [v] + valid[i + 1:]) for v in values]
    return cases + [tuple(valid[:-1]), tuple(valid + [("int", 1)])] if n else cases + [(("int", 1),)]
