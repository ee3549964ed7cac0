"""float16 nodes on the cpu backend's per-op float16 kernels (cpu/float16_elementwise.cc,
cpu/float16.cc; WEBNN_FLOAT16=per_op, so that graphs of several nodes run them too rather than
their float32 form, graph/passes/float16_promotion.cc, which test_float16_promotion.py covers)
against the reference backend: the element-wise ops the float32 arithmetic computes exactly are
bit-identical, the float32 approximations (exp, tanh, ...) and reductions within one float16
step; data movement and casts are bit-identical."""

import numpy as np
import pytest
import rerun
from test_cpu_backend import _context

F16 = np.float16


@pytest.fixture(autouse=True)
def _per_op_float16(monkeypatch):
    monkeypatch.setenv("WEBNN_FLOAT16", "per_op")  # read when a graph is built


def _values(rng, shape, special=True):
    """float16 values over the whole range: normal, subnormal, zeros, infinities, NaN."""
    x = rng.standard_normal(shape) * np.exp2(rng.integers(-14, 12, shape))
    x = x.astype(F16)
    if special:
        flat = x.reshape(-1)
        pool = np.array(
            [0.0, -0.0, np.inf, -np.inf, np.nan, 6e-8, -6e-8, 65504, -65504, 1.0, -3.0, 3.0], F16
        )
        picks = rng.integers(0, flat.size, max(1, flat.size // 10))
        flat[picks] = pool[rng.integers(0, pool.size, picks.size)]
    return x


def _run(backend, make, inputs, constants=None):
    ctx = _context(backend)
    builder = ctx.create_graph_builder()
    ops = {k: builder.input(k, list(v.shape), str(v.dtype)) for k, v in inputs.items()}
    ops.update({k: builder.constant(v) for k, v in (constants or {}).items()})
    graph = builder.build({"y": make(builder, ops)})
    return ctx.compute(graph, inputs)["y"]


def _both(make, inputs, constants=None):
    return _run("cpu", make, inputs, constants), _run("reference", make, inputs, constants)


def assert_same_float16(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    # Bits, so that -0 and +0 differ.
    bits = want.dtype == F16 and np.uint16 or np.uint32
    np.testing.assert_array_equal(got[~nan].view(bits), want[~nan].view(bits))


def assert_within_one_step(got, want):
    assert got.dtype == F16 and got.shape == want.shape
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    g, w = got[~nan].astype(np.float64), want[~nan].astype(np.float64)
    inf = np.isinf(w)
    np.testing.assert_array_equal(g[inf], w[inf])
    step = np.maximum(np.spacing(np.abs(got[~nan][~inf])), np.spacing(np.abs(want[~nan][~inf])))
    err = np.abs(g[~inf] - w[~inf])
    assert (err <= step.astype(np.float64)).all(), f"max error {err.max()}"


# ---- element-wise ---------------------------------------------------------------------------

# Option-less ops by builder method name, then the ones with options.
EXACT_PLAIN = "relu neg abs floor ceil round_even sqrt reciprocal identity sign softsign softplus"
EXACT_UNARY = {
    name: (lambda g, x, name=name: getattr(g, name)(x))
    for name in (EXACT_PLAIN + " sin cos tan log").split()
}
EXACT_UNARY.update(
    {
        "clamp": lambda g, x: g.clamp(x, min_value=-0.3, max_value=1.0001),
        "clamp int bounds": lambda g, x: g.clamp(x, min_value=-2, max_value=70000),
        "clamp min only": lambda g, x: g.clamp(x, min_value=0.1),
        "leaky_relu": lambda g, x: g.leaky_relu(x, 0.1),
        "linear": lambda g, x: g.linear(x, 0.3, -1.7),
        "hard_sigmoid": lambda g, x: g.hard_sigmoid(x, 0.3, 0.45),
        "hard_swish": lambda g, x: g.hard_swish(x),
        "elu": lambda g, x: g.elu(x, 0.7),
    }
)

# The float32 approximations (transcendental.inc).
APPROX_UNARY = {
    name: (lambda g, x, name=name: getattr(g, name)(x))
    for name in ["exp", "sigmoid", "tanh", "erf", "gelu"]
}


@pytest.mark.parametrize("name", sorted(EXACT_UNARY))
def test_unary_bit_identical(name):
    rng = np.random.default_rng(len(name))
    # Sizes around the block and task boundaries.
    for shape in ([3, 7], [5000], [2, 17000]):
        x = _values(rng, shape)
        got, want = _both(lambda g, o: EXACT_UNARY[name](g, o["x"]), {"x": x})
        assert_same_float16(got, want)


def test_breakpoints_bit_identical():
    x = np.array([-3, 3, -0.0, 0.0, -1, 1, 2.5, -2.5, -1e-4, 1e-4] * 40, F16)
    for name in ("hard_swish", "hard_sigmoid", "relu", "leaky_relu", "clamp", "round_even"):
        got, want = _both(lambda g, o, name=name: EXACT_UNARY[name](g, o["x"]), {"x": x})
        assert_same_float16(got, want)


def test_linear_rounds_once_where_float32_would_round_twice():
    # alpha * x + beta = 1 + 2^-10 + 2^-11 - 2^-31: just below a float16 midpoint, within half
    # a float32 step of it. Rounded to float32 first it becomes the midpoint, which ties to
    # 1 + 2^-9; rounded once (the reference) it is 1 + 2^-10.
    alpha, beta, x0 = (1 - 2.0**-10) * 2.0**-11, 1 + 2.0**-10, 1 + 2.0**-10
    x = np.full([300], x0, F16)
    exact = np.float16(np.float64(alpha) * x0 + beta)
    assert exact == np.float16(1 + 2.0**-10)
    got, want = _both(lambda g, o: g.linear(o["x"], alpha, beta), {"x": x})
    assert_same_float16(got, want)
    assert (got == exact).all()


@pytest.mark.parametrize("name", sorted(APPROX_UNARY))
def test_transcendental_within_one_float16_step(name):
    rng = np.random.default_rng(len(name))
    x = np.concatenate(
        [
            rng.uniform(-12, 12, 20000).astype(F16),
            np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 11.0, -17.0], F16),
        ]
    )
    got, want = _both(lambda g, o: APPROX_UNARY[name](g, o["x"]), {"x": x})
    assert_within_one_step(got, want)


BINARY = ["add", "sub", "mul", "div", "max", "min"]

# (a shape, b shape): same shapes and scalars take the block-wise kernel, the rest the adapter.
BINARY_SHAPES = [
    ([4, 3000], [4, 3000]),
    ([1], [2, 20000]),
    ([2, 20000], [1]),
    ([6, 1, 50], [7, 1]),
    ([3, 8, 9, 9], [8, 1, 1]),
    ([1, 30], [1, 30]),
    # Periodic (a bias row, a trailing block), the period crossing blocks and tasks.
    ([3, 40, 700], [700]),
    ([1, 1, 130], [5, 2, 130]),
    ([7, 3, 64], [1, 3, 64]),
]


@pytest.mark.parametrize("op", BINARY)
def test_binary_bit_identical(op):
    rng = np.random.default_rng(BINARY.index(op))
    for sa, sb in BINARY_SHAPES:
        a, b = _values(rng, sa), _values(rng, sb)
        got, want = _both(lambda g, o: getattr(g, op)(o["a"], o["b"]), {"a": a, "b": b})
        assert_same_float16(got, want)


@pytest.mark.parametrize(
    "op", ["equal", "not_equal", "greater", "greater_or_equal", "lesser", "lesser_or_equal"]
)
def test_comparison_bit_identical(op):
    rng = np.random.default_rng(len(op))
    for sa, sb in BINARY_SHAPES:
        a, b = _values(rng, sa), _values(rng, sb)
        m = min(a.size, b.size) // 2
        b.reshape(-1)[:m] = a.reshape(-1)[:m]  # ties too
        got, want = _both(lambda g, o: getattr(g, op)(o["a"], o["b"]), {"a": a, "b": b})
        assert got.dtype == np.uint8
        np.testing.assert_array_equal(got, want)


def test_where_bit_identical():
    rng = np.random.default_rng(11)
    shapes = [
        ([4, 3000], [4, 3000], [4, 3000]),
        ([1, 128], [2, 3, 128], [1]),
        ([2, 3, 1], [1], [2, 3, 70]),
        ([5, 1, 9], [7, 1], [1, 9]),
    ]
    for sc, st, sf in shapes:
        c = (rng.random(sc) < 0.5).astype(np.uint8)
        t, f = _values(rng, st), _values(rng, sf)

        def make(g, o):
            return g.where(o["c"], o["t"], o["f"])

        got, want = _both(make, {"c": c, "t": t, "f": f})
        assert_same_float16(got, want)


def test_binary_with_float16_constant_bit_identical():
    rng = np.random.default_rng(7)
    x, c = _values(rng, [5, 640]), _values(rng, [640], special=False)
    got, want = _both(lambda g, o: g.mul(g.add(o["x"], o["c"]), o["x"]), {"x": x}, {"c": c})
    assert_same_float16(got, want)


def test_prelu_and_pow_bit_identical():
    rng = np.random.default_rng(8)
    x, s = _values(rng, [2, 16, 30]), _values(rng, [16, 1], special=False)
    got, want = _both(lambda g, o: g.prelu(o["x"], o["s"]), {"x": x}, {"s": s})
    assert_same_float16(got, want)
    two = np.array(2, F16)
    got, want = _both(lambda g, o: g.pow(o["x"], o["e"]), {"x": x}, {"e": two})
    assert_same_float16(got, want)


def test_cast_both_ways_bit_identical():
    rng = np.random.default_rng(9)
    h = _values(rng, [3, 7001])
    got, want = _both(lambda g, o: g.cast(o["x"], "float32"), {"x": h})
    assert_same_float16(got, want)
    # float32 values between float16 values, past its range and below its subnormals.
    f = (rng.standard_normal([3, 7001]) * np.exp2(rng.integers(-30, 20, [3, 7001]))).astype(
        np.float32
    )
    f.reshape(-1)[:6] = [np.nan, np.inf, -65520.0, 65519.99, 2.0**-25, -(2.0**-26)]
    got, want = _both(lambda g, o: g.cast(o["x"], "float16"), {"x": f})
    assert_same_float16(got, want)


# ---- data movement and reductions -----------------------------------------------------------

MOVEMENT = {
    "transpose": (lambda g, o: g.transpose(o["x"], permutation=[0, 2, 3, 1]), [2, 5, 9, 11]),
    "slice": (
        lambda g, o: g.slice(o["x"], [0, 1, 2, 0], [2, 3, 5, 11], strides=[1, 1, 2, 1]),
        [2, 5, 9, 11],
    ),
    "expand": (lambda g, o: g.expand(o["x"], [4, 5, 9, 11]), [1, 5, 9, 11]),
    "concat": (lambda g, o: g.concat([o["x"], g.neg(o["x"])], 1), [2, 5, 90, 80]),
    "reshape+transpose": (
        lambda g, o: g.transpose(g.reshape(o["x"], [10, 99]), permutation=[1, 0]),
        [2, 5, 9, 11],
    ),
}


@pytest.mark.parametrize("name", sorted(MOVEMENT))
def test_movement_bit_identical(name):
    make, shape = MOVEMENT[name]
    x = _values(np.random.default_rng(len(name)), shape)
    got, want = _both(make, {"x": x})
    assert_same_float16(got, want)


def test_gather_bit_identical():
    rng = np.random.default_rng(3)
    x = _values(rng, [50, 64])
    idx = rng.integers(0, 50, [7, 9]).astype(np.int32)
    got, want = _both(lambda g, o: g.gather(o["x"], o["i"], axis=0), {"x": x, "i": idx})
    assert_same_float16(got, want)


@pytest.mark.parametrize(
    "op", ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_l2", "reduce_l1"]
)
def test_reduction_within_one_float16_step(op):
    rng = np.random.default_rng(len(op))
    x = rng.uniform(-2, 2, [4, 30, 40]).astype(F16)
    for axes in ([2], [1], [1, 2]):
        got, want = _both(lambda g, o, axes=axes: getattr(g, op)(o["x"], axes=axes), {"x": x})
        if op in ("reduce_max", "reduce_min"):
            assert_same_float16(got, want)
        else:
            assert_within_one_step(got, want)


# ---- randomized float16 graphs --------------------------------------------------------------

STEPS = [
    lambda g, x, c: g.add(x, c),
    lambda g, x, c: g.mul(x, c),
    lambda g, x, c: g.sub(c, x),
    lambda g, x, c: g.max(x, c),
    lambda g, x, c: g.relu(x),
    lambda g, x, c: g.clamp(x, min_value=-1.5, max_value=2.25),
    lambda g, x, c: g.hard_swish(x),
    lambda g, x, c: g.leaky_relu(x, 0.2),
    lambda g, x, c: g.transpose(x, permutation=[1, 0]),
    lambda g, x, c: g.neg(x),
    lambda g, x, c: g.abs(x),
    lambda g, x, c: g.linear(x, 0.5, 0.25),
]


@pytest.mark.parametrize("seed", range(6))
def test_random_float16_chains_bit_identical(seed):
    rng = np.random.default_rng(100 + seed)
    n = 48  # square, so transposes keep the shape
    x = rng.uniform(-3, 3, [n, n]).astype(F16)
    c = rng.uniform(-3, 3, [n, n]).astype(F16)
    steps = rng.integers(0, len(STEPS), 8)

    def make(g, o):
        y = o["x"]
        for s in steps:
            y = STEPS[s](g, y, o["c"])
        return y

    got, want = _both(make, {"x": x}, {"c": c})
    assert_same_float16(got, want)


# ---- other ISAs (the scalar conversions) and thread counts ----------------------------------


@pytest.mark.skipif(rerun.nested(), reason="nested")
@rerun.each_cpu_setting
def test_other_isas_and_thread_counts(env):
    rerun.assert_file_passes(__file__, env)
