"""Reductions, argMin/argMax and cumulativeSum (spec/ops.md 3.5) against NumPy.

The WPT corpus covers float data with default and a few explicit axes; these tests add
unordered/empty axes, rank 0, integer types (exact, wrapping), numerical stability, ties,
exclusive/reversed scans, dynamic dimensions and the rejection paths.
"""

import numpy as np
import pytest
import webnn

BACKENDS = webnn.backends()

NP = {
    "float32": np.float32,
    "float16": np.float16,
    "int32": np.int32,
    "uint32": np.uint32,
    "int64": np.int64,
    "uint64": np.uint64,
    "int8": np.int8,
    "uint8": np.uint8,
}


@pytest.fixture(params=BACKENDS)
def ctx(request):
    return webnn.ML().create_context(accelerated=False, backend=request.param)


def run(ctx, make, *arrays):
    """Builds make(builder, *inputs) over inputs named x0, x1, ... and computes it."""
    b = ctx.create_graph_builder()
    inputs = [b.input(f"x{i}", list(a.shape), str(a.dtype)) for i, a in enumerate(arrays)]
    out = make(b, *inputs)
    graph = b.build({"y": out})
    return ctx.compute(graph, {f"x{i}": a for i, a in enumerate(arrays)})["y"]


def np_axes(axes, rank):
    return tuple(range(rank)) if axes is None else tuple(axes)


# Float references computed in float64 and rounded once, as the spec's exact result would be.
FLOAT_REFERENCES = {
    "reduce_sum": lambda x, ax: np.sum(x, axis=ax),
    "reduce_l1": lambda x, ax: np.sum(np.abs(x), axis=ax),
    "reduce_sum_square": lambda x, ax: np.sum(x * x, axis=ax),
    "reduce_l2": lambda x, ax: np.sqrt(np.sum(x * x, axis=ax)),
    "reduce_mean": lambda x, ax: np.mean(x, axis=ax),
    "reduce_log_sum": lambda x, ax: np.log(np.sum(x, axis=ax)),
    "reduce_log_sum_exp": lambda x, ax: np.log(np.sum(np.exp(x), axis=ax)),
    "reduce_product": lambda x, ax: np.prod(x, axis=ax),
    "reduce_max": lambda x, ax: np.max(x, axis=ax),
    "reduce_min": lambda x, ax: np.min(x, axis=ax),
}

TOLERANCE = {"float32": 1e-6, "float16": 2e-3}


def float_reference(op, x, axes, keep):
    ax = np_axes(axes, x.ndim)
    want = FLOAT_REFERENCES[op](x.astype(np.float64), ax)
    if keep:
        want = np.reshape(want, [1 if i in ax else d for i, d in enumerate(x.shape)])
    return np.asarray(want).astype(x.dtype)


@pytest.mark.parametrize("op", sorted(FLOAT_REFERENCES))
@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("axes", [None, [], [0], [2, 0], [1, 2], [0, 1, 2]])
@pytest.mark.parametrize("keep", [False, True])
def test_float_reductions(ctx, op, dtype, axes, keep):
    rng = np.random.default_rng(len(op) * 7 + len(axes or ()) + keep)
    # Positive values keep reduce_log_sum defined; the spread keeps products representable.
    x = rng.uniform(0.5, 1.5, size=(2, 3, 4)).astype(dtype)
    got = run(ctx, lambda b, t: getattr(b, op)(t, axes=axes, keep_dimensions=keep), x)
    want = float_reference(op, x, axes, keep)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=TOLERANCE[dtype], atol=0)


@pytest.mark.parametrize(
    "op", ["reduce_sum", "reduce_l1", "reduce_max", "reduce_min", "reduce_mean", "reduce_product"]
)
def test_negative_values(ctx, op):
    x = np.array([[-3.5, 2.0, -0.25], [4.0, -1.0, 0.5]], np.float32)
    got = run(ctx, lambda b, t: getattr(b, op)(t, axes=[1]), x)
    np.testing.assert_allclose(got, float_reference(op, x, [1], False), rtol=1e-6)


@pytest.mark.parametrize("op", ["reduce_sum", "reduce_max", "reduce_l2"])
def test_rank0_input(ctx, op):
    x = np.array(-2.5, np.float32)
    for axes in (None, []):
        got = run(ctx, lambda b, t, a=axes: getattr(b, op)(t, axes=a, keep_dimensions=True), x)
        assert got.shape == ()
        np.testing.assert_allclose(got, float_reference(op, x, axes, True), rtol=1e-6)


def test_options_positional_and_x_alias(ctx):
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    got = run(ctx, lambda b, t: b.reduce_sum(t, [2, 1], True), x)
    np.testing.assert_array_equal(got, x.sum(axis=(1, 2), keepdims=True))
    got = run(ctx, lambda b, t: b.reduce_max(x=t), x)
    np.testing.assert_array_equal(got, np.array(x.max()))


def test_reduce_log_sum_exp_is_stable(ctx):
    x = np.array([[1000.0, 1000.0, 999.0], [-1000.0, -1000.0, -2000.0]], np.float32)
    got = run(ctx, lambda b, t: b.reduce_log_sum_exp(t, axes=[1]), x)
    m = x.astype(np.float64).max(axis=1, keepdims=True)
    want = (m[:, 0] + np.log(np.exp(x - m).sum(axis=1))).astype(np.float32)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert np.isfinite(got).all()


def test_reduce_log_sum_exp_infinities(ctx):
    x = np.array([[-np.inf, -np.inf], [np.inf, 1.0], [-np.inf, 2.0]], np.float32)
    got = run(ctx, lambda b, t: b.reduce_log_sum_exp(t, axes=[1]), x)
    with np.errstate(divide="ignore"):
        want = np.log(np.exp(x.astype(np.float64)).sum(axis=1)).astype(np.float32)
    np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("op", ["reduce_max", "reduce_min", "reduce_sum"])
def test_nan_propagates(ctx, op):
    x = np.array([[1.0, np.nan, 3.0], [1.0, 2.0, 3.0]], np.float32)
    got = run(ctx, lambda b, t: getattr(b, op)(t, axes=[1]), x)
    np.testing.assert_array_equal(got, float_reference(op, x, [1], False))


def int_reference(op, x, axes, keep):
    """Exact integer results modulo 2^bits (Python ints, then wrapped to the dtype)."""
    ax = np_axes(axes, x.ndim)
    obj = x.astype(object)
    fns = {
        "reduce_sum": lambda v: np.sum(v, axis=ax),
        "reduce_l1": lambda v: np.sum(np.abs(v), axis=ax),
        "reduce_sum_square": lambda v: np.sum(v * v, axis=ax),
        "reduce_product": lambda v: np.prod(v, axis=ax),
        "reduce_max": lambda v: np.max(v, axis=ax),
        "reduce_min": lambda v: np.min(v, axis=ax),
    }
    want = np.asarray(fns[op](obj), dtype=object)
    if keep:
        want = want.reshape([1 if i in ax else d for i, d in enumerate(x.shape)])
    bits = 8 * x.dtype.itemsize
    signed = np.issubdtype(x.dtype, np.signedinteger)

    def wrap(v):
        v = int(v) % (1 << bits)
        return v - (1 << bits) if signed and v >= 1 << (bits - 1) else v

    return np.vectorize(wrap, otypes=[object])(want).astype(x.dtype)


INT_OPS = {
    "reduce_sum": ["int32", "uint32", "int64", "uint64"],
    "reduce_l1": ["int32", "uint32", "int64", "uint64"],
    "reduce_sum_square": ["int32", "uint32", "int64", "uint64"],
    "reduce_product": ["int32", "uint32", "int64", "uint64"],
    "reduce_max": ["int32", "uint32", "int64", "uint64", "int8", "uint8"],
    "reduce_min": ["int32", "uint32", "int64", "uint64", "int8", "uint8"],
}


@pytest.mark.parametrize("op,dtype", [(op, t) for op, ts in INT_OPS.items() for t in ts])
@pytest.mark.parametrize("axes,keep", [(None, False), ([1], True), ([0, 2], False), ([], False)])
def test_integer_reductions_exact(ctx, op, dtype, axes, keep):
    info = np.iinfo(NP[dtype])
    rng = np.random.default_rng(3)
    # Values near the type's extremes make sums, squares and products wrap.
    x = rng.integers(info.min, info.max, size=(2, 3, 4), dtype=NP[dtype], endpoint=True)
    x.flat[0], x.flat[1] = info.max, info.min
    got = run(ctx, lambda b, t: getattr(b, op)(t, axes=axes, keep_dimensions=keep), x)
    want = int_reference(op, x, axes, keep)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_int64_sum_is_exact_beyond_double_precision(ctx):
    x = np.array([2**62, 2**53 + 1, 1, -(2**60)], np.int64)
    got = run(ctx, lambda b, t: b.reduce_sum(t), x)
    assert int(got) == 2**62 + 2**53 + 2 - 2**60


def test_uint64_max_is_exact(ctx):
    x = np.array([2**64 - 1, 2**64 - 2, 5], np.uint64)
    assert int(run(ctx, lambda b, t: b.reduce_max(t), x)) == 2**64 - 1
    assert int(run(ctx, lambda b, t: b.reduce_min(t), x)) == 5


# ---- argMin / argMax -------------------------------------------------------------------------


@pytest.mark.parametrize("op", ["arg_min", "arg_max"])
@pytest.mark.parametrize(
    "dtype", ["float32", "float16", "int32", "uint32", "int64", "uint64", "int8", "uint8"]
)
@pytest.mark.parametrize("axis", [0, 1, 2])
@pytest.mark.parametrize("keep", [False, True])
@pytest.mark.parametrize("out_type", [None, "int32", "int64"])
def test_arg_min_max(ctx, op, dtype, axis, keep, out_type):
    rng = np.random.default_rng(axis + 10 * keep)
    # Few distinct values force ties, which must resolve to the first index.
    x = rng.integers(0, 4, size=(3, 4, 5)).astype(NP[dtype])
    kwargs = {"keep_dimensions": keep}
    if out_type:
        kwargs["output_data_type"] = out_type
    got = run(ctx, lambda b, t: getattr(b, op)(t, axis, **kwargs), x)
    fn = np.argmin if op == "arg_min" else np.argmax
    want = fn(x, axis=axis, keepdims=keep).astype(out_type or "int32")
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("op", ["arg_min", "arg_max"])
def test_arg_min_max_extremes_and_nan(ctx, op):
    fn = np.argmin if op == "arg_min" else np.argmax
    x = np.array([[-(2**63), 2**63 - 1, 0, -(2**63), 2**63 - 1]], np.int64)
    np.testing.assert_array_equal(
        run(ctx, lambda b, t: getattr(b, op)(t, 1), x), fn(x, axis=1).astype(np.int32)
    )
    # NumPy's convention: the first NaN wins.
    f = np.array([[1.0, np.nan, -np.inf, np.nan], [np.inf, 2.0, -np.inf, np.inf]], np.float32)
    np.testing.assert_array_equal(
        run(ctx, lambda b, t: getattr(b, op)(t, 1), f), fn(f, axis=1).astype(np.int32)
    )


def test_arg_max_rank1_to_scalar(ctx):
    x = np.array([3, 9, 9, 1], np.int32)
    got = run(ctx, lambda b, t: b.arg_max(t, 0, output_data_type="int64"), x)
    assert got.shape == () and got.dtype == np.int64 and int(got) == 1


# ---- cumulativeSum ---------------------------------------------------------------------------


def cumsum_reference(x, axis, exclusive, reverse):
    v = np.flip(x, axis) if reverse else x
    wide = v.astype(np.float64) if v.dtype.kind == "f" else v.astype(object)
    c = np.cumsum(wide, axis=axis)
    if exclusive:
        c = c - wide
    c = np.flip(c, axis) if reverse else c
    if x.dtype.kind == "f":
        return c.astype(x.dtype)
    bits = 8 * x.dtype.itemsize
    mod = np.vectorize(lambda t: int(t) % (1 << bits), otypes=[object])(c)
    return (
        mod.astype(np.uint64).astype(x.dtype)
        if bits == 64
        else mod.astype(np.int64).astype(x.dtype)
    )


@pytest.mark.parametrize("dtype", ["float32", "float16", "int32", "uint32", "int64", "uint64"])
@pytest.mark.parametrize("axis", [0, 1, 2])
@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumulative_sum(ctx, dtype, axis, exclusive, reverse):
    rng = np.random.default_rng(axis)
    if dtype.startswith("float"):
        x = rng.uniform(-2, 2, size=(2, 3, 4)).astype(dtype)
    else:
        info = np.iinfo(NP[dtype])
        x = rng.integers(info.min, info.max, size=(2, 3, 4), dtype=NP[dtype], endpoint=True)
    got = run(ctx, lambda b, t: b.cumulative_sum(t, axis, exclusive=exclusive, reversed=reverse), x)
    want = cumsum_reference(x, axis, exclusive, reverse)
    assert got.dtype == want.dtype and got.shape == want.shape
    if dtype.startswith("float"):
        # One rounding per output of the exact double sum.
        np.testing.assert_allclose(got, want, rtol=TOLERANCE[dtype], atol=1e-6)
    else:
        np.testing.assert_array_equal(got, want)


def test_cumulative_sum_positional_options(ctx):
    x = np.arange(1, 6, dtype=np.float32)
    got = run(ctx, lambda b, t: b.cumulative_sum(t, 0, True, True), x)
    np.testing.assert_array_equal(got, cumsum_reference(x, 0, True, True))


# ---- dynamic dimensions ----------------------------------------------------------------------


def test_dynamic_dims_pass_through(ctx):
    b = ctx.create_graph_builder()
    n = {"name": "n", "maxSize": 5}
    x = b.input("x", [n, 3, 4], "float32")
    assert b.operand_shape(b.reduce_sum(x, axes=[1])) == [n, 4]
    assert b.operand_shape(b.reduce_mean(x, axes=[0], keep_dimensions=True)) == [1, 3, 4]
    assert b.operand_shape(b.reduce_max(x, axes=[0, 2])) == [3]
    assert b.operand_shape(b.arg_min(x, 2, keep_dimensions=True)) == [n, 3, 1]
    assert b.operand_shape(b.cumulative_sum(x, 0)) == [n, 3, 4]
    y = b.reduce_l1(x, axes=[2])
    graph = b.build({"y": y})
    assert graph.output_descriptors["y"]["shape"] == [n, 3]

    data = np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 10
    xt = ctx.create_tensor([5, 3, 4], "float32", writable=True)
    yt = ctx.create_tensor([5, 3], "float32", readable=True)
    ctx.resize_tensor(xt, [2, 3, 4])
    ctx.resize_tensor(yt, [2, 3])
    ctx.write_tensor(xt, data)
    ctx.dispatch(graph, {"x": xt}, {"y": yt})
    np.testing.assert_array_equal(ctx.read_tensor(yt), np.abs(data).sum(axis=2))


def test_dynamic_reduced_axis_runs_with_bound_size(ctx):
    b = ctx.create_graph_builder()
    x = b.input("x", [{"name": "n", "maxSize": 6}, 2], "float32")
    graph = b.build({"y": b.reduce_mean(x, axes=[0]), "i": b.arg_max(x, 0)})
    data = np.array([[1, 8], [5, 2], [3, 9]], np.float32)
    xt = ctx.create_tensor([3, 2], "float32", writable=True)
    yt = ctx.create_tensor([2], "float32", readable=True)
    it = ctx.create_tensor([2], "int32", readable=True)
    ctx.write_tensor(xt, data)
    ctx.dispatch(graph, {"x": xt}, {"y": yt, "i": it})
    np.testing.assert_allclose(ctx.read_tensor(yt), data.mean(axis=0), rtol=1e-6)
    np.testing.assert_array_equal(ctx.read_tensor(it), np.argmax(data, axis=0))


# ---- rejections ------------------------------------------------------------------------------

REDUCE_OPS = sorted(FLOAT_REFERENCES)


@pytest.mark.parametrize("op", REDUCE_OPS)
def test_reduce_rejects_bad_axes(ctx, op):
    b = ctx.create_graph_builder()
    x = b.input("x", [2, 3], "float32")
    with pytest.raises(ValueError, match="out of range"):
        getattr(b, op)(x, axes=[2])
    with pytest.raises(ValueError, match="duplicate"):
        getattr(b, op)(x, axes=[1, 1])
    with pytest.raises(OverflowError):
        getattr(b, op)(x, axes=[-1])
    with pytest.raises(TypeError):
        getattr(b, op)(x, axes=1.5)
    with pytest.raises(TypeError):
        getattr(b, op)(x, axes=[1], keep_dimensions="yes")


ALLOWED = {
    **{
        op: {"float32", "float16", "int32", "uint32", "int64", "uint64"}
        for op in [
            "reduce_sum",
            "reduce_l1",
            "reduce_sum_square",
            "reduce_product",
            "cumulative_sum",
        ]
    },
    **{
        op: {"float32", "float16"}
        for op in ["reduce_l2", "reduce_log_sum", "reduce_log_sum_exp", "reduce_mean"]
    },
    **{op: set(NP) for op in ["reduce_max", "reduce_min", "arg_min", "arg_max"]},
}


@pytest.mark.parametrize("op", sorted(ALLOWED))
@pytest.mark.parametrize("dtype", list(NP) + ["int4", "uint4"])
def test_data_types(ctx, op, dtype):
    b = ctx.create_graph_builder()
    x = b.input("x", [2, 3], dtype)
    make = (
        (lambda: getattr(b, op)(x, 1))
        if op in ("arg_min", "arg_max", "cumulative_sum")
        else (lambda: getattr(b, op)(x))
    )
    if dtype in ALLOWED[op]:
        make()
    else:
        with pytest.raises(ValueError, match="data type"):
            make()


@pytest.mark.parametrize("op", ["arg_min", "arg_max"])
def test_arg_rejections(ctx, op):
    b = ctx.create_graph_builder()
    x = b.input("x", [2, 3], "float32")
    with pytest.raises(ValueError, match="axis 2 is out of range"):
        getattr(b, op)(x, 2)
    with pytest.raises(OverflowError):
        getattr(b, op)(x, -1)
    with pytest.raises(ValueError, match="int32 or int64"):
        getattr(b, op)(x, 0, output_data_type="uint32")
    with pytest.raises(ValueError):
        getattr(b, op)(x, 0, output_data_type="int16")
    with pytest.raises(TypeError):
        getattr(b, op)(x, "0")
    with pytest.raises(TypeError):
        getattr(b, op)(x)
    with pytest.raises(ValueError, match="rank"):
        getattr(b, op)(b.input("s", [], "float32"), 0)


def test_cumulative_sum_rejections(ctx):
    b = ctx.create_graph_builder()
    x = b.input("x", [2, 3], "float32")
    with pytest.raises(ValueError, match="axis 2 is out of range"):
        b.cumulative_sum(x, 2)
    with pytest.raises(OverflowError):
        b.cumulative_sum(x, -1)
    with pytest.raises(TypeError):
        b.cumulative_sum(x, 0, exclusive="no")
    with pytest.raises(ValueError, match="rank"):
        b.cumulative_sum(b.input("s", [], "float32"), 0)


EMPTY_REFERENCES = {
    "reduce_sum": lambda x: np.sum(x, axis=0),
    "reduce_l1": lambda x: np.sum(np.abs(x), axis=0),
    "reduce_l2": lambda x: np.sqrt(np.sum(x * x, axis=0)),
    "reduce_product": lambda x: np.prod(x, axis=0),
    "reduce_max": lambda x: np.max(x, axis=0, initial=-np.inf),
    "reduce_min": lambda x: np.min(x, axis=0, initial=np.inf),
    "reduce_log_sum": lambda x: np.log(np.sum(x, axis=0)),
    "reduce_log_sum_exp": lambda x: np.log(np.sum(np.exp(x), axis=0)),
    "reduce_mean": lambda x: np.sum(x, axis=0) / 0.0,
}


@pytest.mark.parametrize("op", sorted(EMPTY_REFERENCES))
def test_reducing_a_dynamic_axis_bound_to_zero(ctx, op):
    """An empty reduction yields the operation's identity (and never reads out of bounds)."""
    b = ctx.create_graph_builder()
    x = b.input("x", [{"name": "n", "maxSize": 4}, 3], "float32")
    graph = b.build({"y": getattr(b, op)(x, axes=[0])})
    xt = ctx.create_tensor([0, 3], "float32", writable=True)
    yt = ctx.create_tensor([3], "float32", readable=True)
    ctx.dispatch(graph, {"x": xt}, {"y": yt})
    with np.errstate(divide="ignore", invalid="ignore"):
        want = EMPTY_REFERENCES[op](np.zeros((0, 3), np.float64)).astype(np.float32)
    np.testing.assert_array_equal(ctx.read_tensor(yt), want)


@pytest.mark.parametrize("op", ["arg_min", "arg_max"])
def test_arg_over_a_dynamic_axis_bound_to_zero_fails(ctx, op):
    b = ctx.create_graph_builder()
    x = b.input("x", [{"name": "n", "maxSize": 4}, 3], "int32")
    graph = b.build({"y": getattr(b, op)(x, 0)})
    xt = ctx.create_tensor([0, 3], "int32", writable=True)
    yt = ctx.create_tensor([3], "int32", readable=True)
    with pytest.raises(RuntimeError, match="size 0"):
        ctx.dispatch(graph, {"x": xt}, {"y": yt})


@pytest.mark.parametrize(
    "op,reference",
    [
        ("reduce_max", lambda x: np.max(x, axis=0, initial=np.iinfo(np.int32).min)),
        ("reduce_min", lambda x: np.min(x, axis=0, initial=np.iinfo(np.int32).max)),
        ("reduce_sum", lambda x: np.sum(x, axis=0)),
        ("reduce_product", lambda x: np.prod(x, axis=0)),
    ],
)
def test_integer_reduction_of_empty_axis(ctx, op, reference):
    b = ctx.create_graph_builder()
    x = b.input("x", [{"name": "n", "maxSize": 4}, 2], "int32")
    graph = b.build({"y": getattr(b, op)(x, axes=[0])})
    xt = ctx.create_tensor([0, 2], "int32", writable=True)
    yt = ctx.create_tensor([2], "int32", readable=True)
    ctx.dispatch(graph, {"x": xt}, {"y": yt})
    np.testing.assert_array_equal(
        ctx.read_tensor(yt), reference(np.zeros((0, 2), np.int32)).astype(np.int32)
    )
