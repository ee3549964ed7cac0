"""cpu element-wise kernels are bit-identical to the reference at the breakpoints of piecewise
functions, and for these ops everywhere (COMMON rule: no contraction of a*b+c into FMA; the
kernels do the reference's float operations in its order). The exception is hardSwish with the
WebNN coefficients, which runs in float32: bit-identical at and beyond its breakpoints, within
1.5 ULP of the exact value between them.

Inputs hold each breakpoint, its float32 neighbours, signed zeros and random values, tiled so
that every value lands in the vector body and in the tail of a SIMD loop. The last tests rerun
this file with each instruction set (WEBNN_CPU_ISA=avx512|avx2|generic; a machine without
AVX-512 runs its best ISA for "avx512").
"""

import numpy as np
import pytest
import rerun
import webnn

_CONTEXTS = {}


def _context(backend):
    if backend not in _CONTEXTS:
        _CONTEXTS[backend] = webnn.ML().create_context(accelerated=False, backend=backend)
    return _CONTEXTS[backend]


def _around(*points):
    """Each point, its float32 neighbours and its negation's, plus signed zeros."""
    values = [0.0, -0.0]
    for p in points:
        p = np.float32(p)
        for q in (p, -p):
            values += [q, np.nextafter(q, np.float32(np.inf)), np.nextafter(q, np.float32(-np.inf))]
    return values


def _inputs(points):
    rng = np.random.default_rng(7)
    values = np.array(_around(*points) + [1e-40, -1e-40, np.inf, -np.inf], np.float32)
    noise = rng.uniform(-8, 8, 64).astype(np.float32)
    base = np.concatenate([values, noise])
    # 3 shifted copies + an odd tail: each value in several lane positions and in the tail.
    return np.concatenate([np.roll(base, k) for k in range(3)] + [base[:13]])


# (method, options, breakpoints). gelu, elu and softplus, transcendentals computed in float32,
# are checked against exact values in test_cpu_transcendental.py / test_cpu_elementary.py
# instead (elu and softplus bit for bit at their breakpoints and special values there).
CASES = [
    ("relu", {}, [0.0, 1e-45]),
    ("clamp", {"min_value": -1.0, "max_value": 1.0}, [1.0]),
    ("clamp", {"min_value": 0.0}, [0.0, 1e-45]),
    ("clamp", {"min_value": 0.1, "max_value": 6.0}, [0.1, 6.0]),
    # hardSwish with non-default coefficients runs the double path, bit for bit.
    ("hard_swish", {"alpha": 0.25, "beta": 0.375}, [1.5, 2.5]),
    ("hard_sigmoid", {}, [2.5, 0.5]),
    ("hard_sigmoid", {"alpha": 0.3, "beta": 0.1}, [1 / 0.3, 3.0, 0.1 / 0.3]),
    ("leaky_relu", {}, [0.0, 1e-45, 1.0]),
    ("leaky_relu", {"alpha": 0.3}, [0.0, 2.0]),
    ("linear", {"alpha": 0.5, "beta": -1.5}, [3.0, 1.0]),
    ("linear", {"alpha": 1 / 3, "beta": 1.0}, [-3.0, 3.0]),
    ("softsign", {}, [0.0, 1.0]),
    ("neg", {}, [0.0]),
    ("abs", {}, [0.0]),
]


def _run(backend, method, options, x):
    ctx = _context(backend)
    b = ctx.create_graph_builder()
    xin = b.input("x", list(x.shape), "float32")
    graph = b.build({"y": getattr(b, method)(xin, **options)})
    return ctx.compute(graph, {"x": x})["y"]


def _assert_bitwise(x, got, want, what):
    # NaN payloads may differ; everything else (including the sign of zero) must match.
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan), what
    diff = np.flatnonzero((got.view(np.uint32) != want.view(np.uint32)) & ~nan)
    assert diff.size == 0, (
        f"{what}: first mismatches at x={x[diff[:5]].tolist()}: cpu {got[diff[:5]].tolist()} "
        f"reference {want[diff[:5]].tolist()}"
    )


@pytest.mark.parametrize("method,options,points", CASES, ids=[f"{m}{o or ''}" for m, o, _ in CASES])
def test_cpu_matches_reference_bitwise(method, options, points):
    x = _inputs(points)
    _assert_bitwise(
        x,
        _run("cpu", method, options, x),
        _run("reference", method, options, x),
        f"{method}{options}",
    )


def test_hard_swish_breakpoints_are_exact():
    x = np.array([-3, 3, -6, 6, 0, -0.0] * 7, np.float32)
    y = _run("cpu", "hard_swish", {}, x)
    assert y[0] == 0 and np.signbit(y[0]), y[0]  # -3 * 0 = -0.0 exactly
    np.testing.assert_array_equal(y[:6], np.array([-0.0, 3, -0.0, 6, 0, -0.0], np.float32))
    assert list(np.signbit(y[:6])) == [True, False, True, False, False, True]


def _ulp_distance(a, b):
    """ULPs between float32 arrays (monotone integer mapping of the float order)."""

    def ordered(v):
        i = v.astype(np.float32).view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)

    return np.abs(ordered(a) - ordered(b))


def test_hard_swish_float32_within_bound_and_exact_at_breakpoints():
    rng = np.random.default_rng(11)
    inside = np.concatenate(
        [
            rng.uniform(-3, 3, 20000),
            -3 + rng.uniform(0, 1e-3, 2000),  # where x + 3 cancels
            np.geomspace(1e-30, 3, 2000) * rng.choice([-1, 1], 2000),
        ]
    ).astype(np.float32)
    x = np.concatenate([_inputs([3.0, -3.0, 6.0, -6.0]), inside])
    got = _run("cpu", "hard_swish", {}, x)
    want = _run("reference", "hard_swish", {}, x)
    with np.errstate(invalid="ignore"):  # -inf * 0
        exact = (x.astype(np.float64) * np.clip(x.astype(np.float64) + 3, 0, 6) / 6).astype(
            np.float32
        )
    outside = ~((x > -3) & (x < 3)) | np.isnan(x)
    _assert_bitwise(x[outside], got[outside], want[outside], "hard_swish outside (-3, 3)")
    numbers = ~np.isnan(want)
    assert np.array_equal(np.signbit(got[numbers]), np.signbit(want[numbers]))
    finite = ~outside
    worst = _ulp_distance(got[finite], exact[finite]).max()
    assert worst <= 1, f"hard_swish: {worst} ULP from x * (x + 3) / 6"


def test_prelu_matches_reference_bitwise():
    x = _inputs([0.0, 1e-45, 2.0]).reshape(-1, 1)
    slope = np.array([[0.25, -0.5, 1 / 3]], np.float32)

    def run(backend):
        ctx = _context(backend)
        b = ctx.create_graph_builder()
        xin = b.input("x", list(x.shape), "float32")
        graph = b.build({"y": b.prelu(xin, b.constant(slope))})
        return ctx.compute(graph, {"x": x})["y"]

    _assert_bitwise(
        np.broadcast_to(x, (x.shape[0], 3)).ravel(),
        run("cpu").ravel(),
        run("reference").ravel(),
        "prelu",
    )


@pytest.mark.skipif(rerun.nested(), reason="already in a subprocess")
@pytest.mark.parametrize("isa", ["avx512", "avx2", "generic"])
def test_every_isa(isa):
    rerun.assert_file_passes(__file__, {"WEBNN_CPU_ISA": isa})


def test_hard_swish_compat_coefficients_negative_zero():
    # pywebnn-compat alpha/beta with beta = -0: alpha * x + beta is -0 for x <= 0, and the
    # reference's max(0, -0) is +0, so x * +0 is -0 for negative x (reciprocal: -inf).
    x = np.array([-3, -1, -0.0, 0, 0.5, 2, np.nan, -np.inf], np.float32)
    outs = []
    for backend in ("cpu", "reference"):
        context = webnn.ML().create_context(accelerated=False, backend=backend)
        b = context.create_graph_builder()
        y = b.hard_swish(b.input("x", [8], "float32"), alpha=0.0, beta=-0.0)
        outs.append(context.compute(b.build({"y": b.reciprocal(y)}), {"x": x})["y"])
    np.testing.assert_array_equal(outs[0], outs[1])
    assert np.isneginf(outs[0][:3]).all()
