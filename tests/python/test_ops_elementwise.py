"""Element-wise families (spec/ops.md 3.1–3.4) beyond the WPT corpus, against NumPy."""

import math

import numpy as np
import pytest
import webnn

RNG = np.random.default_rng(7)


@pytest.fixture(params=webnn.backends())
def ctx(request):
    return webnn.ML().create_context(accelerated=False, backend=request.param)


def run(ctx, build, **feeds):
    b = ctx.create_graph_builder()
    inputs = {
        name: b.input(name, list(np.shape(v)), str(np.asarray(v).dtype))
        for name, v in feeds.items()
    }
    graph = b.build({"out": build(b, **inputs)})
    return ctx.compute(graph, feeds)["out"]


INT_TYPES = [np.int8, np.uint8, np.int32, np.uint32, np.int64, np.uint64]


@pytest.mark.parametrize("dtype", INT_TYPES)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "max", "min"])
def test_integer_binary_wraps_like_numpy(ctx, op, dtype):
    info = np.iinfo(dtype)
    a = np.array([info.max, info.min, 3, 0, 7], dtype=dtype)
    b = np.array([1, 1, 2, 5, info.max], dtype=dtype)
    want = getattr(
        np,
        {"add": "add", "sub": "subtract", "mul": "multiply", "max": "maximum", "min": "minimum"}[
            op
        ],
    )(a, b)
    got = run(ctx, lambda bb, a, b: getattr(bb, op)(a, b), a=a, b=b)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64])
def test_integer_division_truncates_toward_zero(ctx, dtype):
    a = np.array([7, -7, 7, -7, 0], dtype=dtype)
    b = np.array([2, 2, -2, -2, 3], dtype=dtype)
    got = run(ctx, lambda bb, a, b: bb.div(a, b), a=a, b=b)
    np.testing.assert_array_equal(got, np.trunc(a / b).astype(dtype))


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64, np.uint8])
def test_integer_pow(ctx, dtype):
    a = np.array([2, 3, 0, 1, 5], dtype=dtype)
    b = np.array([10, 3, 0, 7, 2], dtype=dtype)
    got = run(ctx, lambda bb, a, b: bb.pow(a, b), a=a, b=b)
    np.testing.assert_array_equal(got, np.power(a, b))


def test_int64_values_are_exact(ctx):
    a = np.array([2**62 + 1, -(2**62) - 3], dtype=np.int64)
    b = np.array([2**62, 1], dtype=np.int64)
    np.testing.assert_array_equal(run(ctx, lambda bb, a, b: bb.sub(a, b), a=a, b=b), a - b)
    np.testing.assert_array_equal(
        run(ctx, lambda bb, a, b: bb.greater(a, b), a=a, b=b), (a > b).astype(np.uint8)
    )
    u = np.array([2**64 - 1, 2**63], dtype=np.uint64)
    np.testing.assert_array_equal(run(ctx, lambda bb, u: bb.identity(u), u=u), u)


@pytest.mark.parametrize(
    "op,fn",
    [
        ("equal", np.equal),
        ("not_equal", np.not_equal),
        ("greater", np.greater),
        ("greater_or_equal", np.greater_equal),
        ("lesser", np.less),
        ("lesser_or_equal", np.less_equal),
    ],
)
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.uint64])
def test_comparisons_broadcast(ctx, op, fn, dtype):
    a = RNG.integers(0, 4, (2, 3, 4)).astype(dtype)
    b = RNG.integers(0, 4, (3, 1)).astype(dtype)
    got = run(ctx, lambda bb, a, b: getattr(bb, op)(a, b), a=a, b=b)
    assert got.dtype == np.uint8
    np.testing.assert_array_equal(got, fn(a, b).astype(np.uint8))


def test_logical_ops_treat_nonzero_as_true(ctx):
    a = np.array([0, 1, 2, 255, 0], dtype=np.uint8)
    b = np.array([0, 0, 7, 1, 9], dtype=np.uint8)
    for op, fn in [
        ("logical_and", np.logical_and),
        ("logical_or", np.logical_or),
        ("logical_xor", np.logical_xor),
    ]:
        got = run(ctx, lambda bb, a, b, op=op: getattr(bb, op)(a, b), a=a, b=b)
        np.testing.assert_array_equal(got, fn(a, b).astype(np.uint8))
    got = run(ctx, lambda bb, a: bb.logical_not(a), a=a)
    np.testing.assert_array_equal(got, np.logical_not(a).astype(np.uint8))
    got = run(ctx, lambda bb, a: bb.logical_not(input=a), a=a)
    np.testing.assert_array_equal(got, np.logical_not(a).astype(np.uint8))


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_classification(ctx, dtype):
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -1.5, 65504], dtype=dtype)
    np.testing.assert_array_equal(
        run(ctx, lambda b, x: b.is_nan(x), x=x), np.isnan(x).astype(np.uint8)
    )
    np.testing.assert_array_equal(
        run(ctx, lambda b, x: b.is_infinite(x), x=x), np.isinf(x).astype(np.uint8)
    )


def test_round_even_and_sign(ctx):
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, -0.0, 2.4999], dtype=np.float32)
    np.testing.assert_array_equal(run(ctx, lambda b, x: b.round_even(x), x=x), np.round(x))
    np.testing.assert_array_equal(run(ctx, lambda b, x: b.sign(x), x=x), np.sign(x))
    i = np.array([-5, 0, 9], dtype=np.int8)
    np.testing.assert_array_equal(run(ctx, lambda b, i: b.sign(i), i=i), np.sign(i))
    np.testing.assert_array_equal(run(ctx, lambda b, i: b.abs(i), i=i), np.abs(i))
    np.testing.assert_array_equal(run(ctx, lambda b, i: b.neg(i), i=i), -i)
    np.testing.assert_array_equal(run(ctx, lambda b, i: b.relu(i), i=i), np.maximum(i, 0))


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_activations_match_formulas(ctx, dtype):
    x = np.linspace(-6, 6, 25).astype(dtype)
    xd = x.astype(np.float64)
    erf = np.vectorize(math.erf)
    cases = {
        "sigmoid": (lambda b, x: b.sigmoid(x), 1 / (1 + np.exp(-xd))),
        "softplus": (lambda b, x: b.softplus(x), np.log1p(np.exp(xd))),
        "softsign": (lambda b, x: b.softsign(x), xd / (1 + np.abs(xd))),
        "gelu": (lambda b, x: b.gelu(x), 0.5 * xd * (1 + erf(xd / math.sqrt(2)))),
        "hard_swish": (lambda b, x: b.hard_swish(x), xd * np.clip(xd + 3, 0, 6) / 6),
        "elu": (lambda b, x: b.elu(x, alpha=0.5), np.where(xd > 0, xd, 0.5 * np.expm1(xd))),
        "leaky_relu": (lambda b, x: b.leaky_relu(x), np.where(xd >= 0, xd, 0.01 * xd)),
        "hard_sigmoid": (
            lambda b, x: b.hard_sigmoid(x, alpha=0.3, beta=0.4),
            np.clip(0.3 * xd + 0.4, 0, 1),
        ),
        "linear": (lambda b, x: b.linear(x, 2.0, -1.0), 2 * xd - 1),
        "hard_swish_compat": (
            lambda b, x: b.hard_swish(x, alpha=0.25, beta=0.25),
            xd * np.clip(0.25 * xd + 0.25, 0, 1),
        ),
    }
    for name, (build, want) in cases.items():
        got = run(ctx, build, x=x)
        assert got.dtype == dtype, name
        np.testing.assert_allclose(
            got,
            want.astype(dtype),
            rtol=2e-3 if dtype == np.float16 else 1e-6,
            atol=1e-6,
            err_msg=name,
        )


def test_prelu_broadcasts_slope(ctx):
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    slope = np.array([0.1, 0.2, 0.3, 0.4], np.float32)
    got = run(ctx, lambda b, x, s: b.prelu(x, s), x=x, s=slope)
    np.testing.assert_allclose(got, np.where(x >= 0, x, x * slope), rtol=1e-6)
    i = np.array([-4, 5], np.int32)
    got = run(ctx, lambda b, i, s: b.prelu(i, s), i=i, s=np.array([3], np.int32))
    np.testing.assert_array_equal(got, [-12, 5])


def test_clamp_bounds(ctx):
    x = np.array([-5.0, -1.0, 0.5, 3.0, np.nan], np.float32)
    got = run(ctx, lambda b, x: b.clamp(x, min_value=-1.0, max_value=1.0), x=x)
    np.testing.assert_array_equal(got, np.clip(x, -1, 1))
    np.testing.assert_array_equal(run(ctx, lambda b, x: b.clamp(x), x=x), x)
    big = np.array([-(2**63), 0, 2**63 - 1], np.int64)
    got = run(ctx, lambda b, v: b.clamp(v, min_value=-(2**62), max_value=2**62 + 1), v=big)
    np.testing.assert_array_equal(got, np.clip(big, -(2**62), 2**62 + 1))
    u = np.array([0, 2**64 - 1], np.uint64)
    got = run(ctx, lambda b, v: b.clamp(v, min_value=5, max_value=2**64 - 2), v=u)
    np.testing.assert_array_equal(got, np.array([5, 2**64 - 2], np.uint64))
    b = ctx.create_graph_builder()
    with pytest.raises(ValueError, match="min_value"):
        b.clamp(b.input("x", [2], "float32"), min_value=2, max_value=1)


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_softmax_any_axis(ctx, axis):
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32) * 10
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    got = run(ctx, lambda b, x: b.softmax(x, axis), x=x)
    np.testing.assert_allclose(got, e / e.sum(axis=axis, keepdims=True), rtol=1e-6, atol=1e-7)


def test_unary_math_float16_rounds_once(ctx):
    x = np.array([0.1, 0.7, 1.3, 2.9, 10.0], np.float16)
    for op, fn in [
        ("exp", np.exp),
        ("log", np.log),
        ("sqrt", np.sqrt),
        ("tanh", np.tanh),
        ("reciprocal", np.reciprocal),
        ("cos", np.cos),
        ("sin", np.sin),
    ]:
        got = run(ctx, lambda b, x, op=op: getattr(b, op)(x), x=x)
        np.testing.assert_array_equal(got, fn(x.astype(np.float64)).astype(np.float16), op)


def test_rejections(ctx):
    b = ctx.create_graph_builder()
    f = b.input("f", [2], "float32")
    u = b.input("u", [2], "uint8")
    with pytest.raises(ValueError, match="logical_and|logicalAnd"):
        b.logical_and(f, f)
    with pytest.raises(ValueError, match="is_nan|isNaN"):
        b.is_nan(u)
    with pytest.raises(ValueError):
        b.elu(u)
    with pytest.raises(TypeError):
        b.elu(f, alpha="big")
    with pytest.raises(TypeError):
        b.hard_swish(f, 0.2)  # compat alpha/beta are keyword-only
    with pytest.raises(ValueError):
        b.prelu(f, b.input("s", [3], "float32"))
