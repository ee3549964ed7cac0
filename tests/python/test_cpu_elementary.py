"""The cpu backend's float32 log, softplus, elu, softsign, sign, sin, cos and tan against exact
values (numpy float64, rounded to float32) and the reference backend.

Dense grids cover every branch of each approximation (odd lengths: vector tails), strided
sweeps of the float32 bit patterns cover log's whole domain (subnormals included), and the
special values (signed zeros, subnormals, infinities, NaN, the breakpoints of elu and softplus,
huge arguments of sin/cos/tan) must give exactly the reference's result. The bounds are the ones
docs/performance.md states. The last test reruns this file with the AVX2 and generic kernels and
with 1 and 3 threads.
"""

import numpy as np
import pytest
import rerun
from test_cpu_backend import _both, _run, assert_ulp
from test_cpu_transcendental import UNFUSED, _build_and_run

# The documented bounds (ULP against the exact value rounded to float32).
BOUND = {"log": 1, "softplus": 2, "elu": 2, "sin": 1, "cos": 1, "tan": 1}


def _unary(op, x, **options):
    return _run("cpu", lambda g, o: getattr(g, op)(o["x"], **options), {"x": x})


def _exact(op, x, alpha=1.0):
    d = x.astype(np.float64)
    with np.errstate(all="ignore"):
        if op == "log":
            y = np.log(d)
        elif op == "softplus":
            y = np.logaddexp(0.0, d)
        elif op == "elu":
            y = np.where(d > 0, d, np.float64(np.float32(alpha)) * np.expm1(d))
        else:
            y = getattr(np, op)(d)
    return y.astype(np.float32)


def _bits(lo, hi, stride):
    """Every stride-th float32 bit pattern in [lo, hi)."""
    return np.arange(lo, hi, stride, dtype=np.int64).astype(np.uint32).view(np.float32)


def _assert_bitwise(got, want):
    # The sign of zero matters; NaN payloads may differ.
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    diff = np.flatnonzero((got.view(np.uint32) != want.view(np.uint32)) & ~nan)
    assert diff.size == 0, f"at {diff[:5].tolist()}: cpu {got[diff[:5]]} reference {want[diff[:5]]}"


SPECIAL = np.array(
    [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1e-40, -1e-40, 1.1754942e-38, 1.0, -1.0],
    np.float32,
)


def _special():
    # Tiled so that every value lands in vector bodies and tails.
    x = np.concatenate([np.roll(SPECIAL, k) for k in range(3)] + [SPECIAL[:7]])
    x[-1] = np.uint32(0x7F800001).view(np.float32)  # a NaN with a low payload
    return x


# --- log ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "lo,hi,stride",
    [
        (0x00000001, 0x00800000, 331),  # subnormals
        (0x00800000, 0x7F800000, 1031),  # every binade of the normals
        (0x3F3504F3 - 40000, 0x3F3504F3 + 40000, 1),  # the reduction's switch at sqrt(1/2)
        (0x3F800000 - 60000, 0x3F800000 + 60000, 1),  # around 1, where log cancels
    ],
)
def test_log_over_its_domain(lo, hi, stride):
    x = _bits(lo, hi, stride)
    assert_ulp(_unary("log", x), _exact("log", x), BOUND["log"])


def test_log_special_values():
    x = np.concatenate([_special(), np.array([-3e38, -1e-45, 3.4028235e38], np.float32)])
    got, want = _both(lambda g, o: g.log(o["x"]), {"x": x})
    finite = np.isfinite(want) & (want != 0)
    _assert_bitwise(np.where(finite, 0, got), np.where(finite, 0, want))
    assert got[0] == -np.inf and got[1] == -np.inf and np.isnan(got[6]) and got[2] == np.inf
    assert_ulp(got, want, BOUND["log"])


# --- softplus, elu ----------------------------------------------------------------------------


@pytest.mark.parametrize("lo,hi", [(-2, 2), (-120, 100), (-20, -8), (8, 20)])
def test_softplus_dense(lo, hi):
    x = np.linspace(lo, hi, 100003).astype(np.float32)
    assert_ulp(_unary("softplus", x), _exact("softplus", x), BOUND["softplus"])


@pytest.mark.parametrize("alpha", [1.0, 0.5, 2.5, -0.3])
@pytest.mark.parametrize("lo,hi", [(-1, 1), (-100, 5), (-1e-5, 1e-5), (-0.4, -0.3)])
def test_elu_dense(alpha, lo, hi):
    x = np.linspace(lo, hi, 50001).astype(np.float32)
    assert_ulp(_unary("elu", x, alpha=alpha), _exact("elu", x, alpha), BOUND["elu"])


def _around(*points):
    values = []
    for p in points:
        p = np.float32(p)
        values += [p, np.nextafter(p, np.float32(np.inf)), np.nextafter(p, np.float32(-np.inf))]
    return np.array(values, np.float32)


@pytest.mark.parametrize(
    "op,options",
    [("softplus", {}), ("elu", {}), ("elu", {"alpha": 0.5}), ("elu", {"alpha": -2.0})],
)
def test_breakpoints_and_special_values_match_reference_bitwise(op, options):
    # At 0, -0, +-inf, NaN, the subnormals and very large |x| the result is exactly the
    # reference's (elu: x itself, alpha * +-0, -alpha; softplus: log 2, x, 0, exp(x)).
    x = np.concatenate([_special(), _around(0.0, 3e38, -3e38, 1e30, -1e30, -200.0, 120.0)])
    x = x[np.abs(x) != 1]  # (not a breakpoint)
    got, want = _both(lambda g, o: getattr(g, op)(o["x"], **options), {"x": x})
    _assert_bitwise(got, want)


def test_softplus_tails_keep_relative_accuracy():
    # exp(x) for very negative x (down to the subnormal range and to 0), x for large x.
    x = np.concatenate([np.linspace(-104, -80, 20001), np.linspace(80, 200, 2001)]).astype(
        np.float32
    )
    got, want = _both(lambda g, o: g.softplus(o["x"]), {"x": x})
    assert_ulp(got, _exact("softplus", x), BOUND["softplus"])
    assert_ulp(got, want, BOUND["softplus"])


# --- softsign, sign: the reference's operations, bit for bit ------------------------------------


@pytest.mark.parametrize("op", ["softsign", "sign"])
def test_softsign_and_sign_match_reference_bitwise(op):
    rng = np.random.default_rng(5)
    x = np.concatenate(
        [
            _special(),
            rng.standard_normal(4001).astype(np.float32) * 50,
            _bits(0x00000001, 0x7F800000, 100003),
            -_bits(0x00000001, 0x7F800000, 100019),
        ]
    )
    got, want = _both(lambda g, o: getattr(g, op)(o["x"]), {"x": x})
    _assert_bitwise(got, want)


# --- sin, cos, tan --------------------------------------------------------------------------


def _near_multiples_of_half_pi(kmax, count):
    # The float32 values closest to k pi/2 (and their neighbours), where the reduction cancels.
    k = np.unique(np.geomspace(1, kmax, count).astype(np.int64))
    c = (k * (np.pi / 2)).astype(np.float32)
    c = np.concatenate([c, -c])
    return np.concatenate([c, np.nextafter(c, np.float32(np.inf)), np.nextafter(c, -np.inf)])


@pytest.mark.parametrize("op", ["sin", "cos", "tan"])
@pytest.mark.parametrize(
    "make",
    [
        lambda: np.linspace(-10, 10, 100003),
        lambda: np.linspace(-1e-3, 1e-3, 10001),
        lambda: np.random.default_rng(1).uniform(-524288, 524288, 100001),
        lambda: _near_multiples_of_half_pi(333000, 20000),
    ],
    ids=["small", "near_zero", "up_to_2^19", "near_k_pi/2"],
)
def test_trig_within_bound(op, make):
    x = make().astype(np.float32)
    assert_ulp(_unary(op, x), _exact(op, x), BOUND[op])


@pytest.mark.parametrize("op", ["sin", "cos", "tan"])
def test_trig_huge_and_special_arguments_match_reference(op):
    # Beyond the vector reduction's range the reference's double function runs per lane: the
    # same bits. The values straddle the switch (2^19) inside one vector.
    huge = _around(524288.0, -524288.0, 1e6, 3e7, 1e10, 1e20, 3.4e38, -3.4e38)
    x = np.concatenate([_special(), huge, np.linspace(524200, 524400, 37, dtype=np.float32)])
    got, want = _both(lambda g, o: getattr(g, op)(o["x"]), {"x": x})
    _assert_bitwise(np.where(np.abs(x) > 524288, got, 0), np.where(np.abs(x) > 524288, want, 0))
    assert_ulp(got, want, BOUND[op])
    zero = SPECIAL[:2]
    if op != "cos":  # sin(-0) = tan(-0) = -0
        _assert_bitwise(_unary(op, zero), zero)


# --- fused epilogues -----------------------------------------------------------------------


def _matmul_chain(b, x):
    # matmul + bias, then the new vector ops as one fused epilogue chain.
    w = np.random.default_rng(3).uniform(-1, 1, [45, 67]).astype(np.float32)
    y = b.add(b.matmul(x, b.constant(w)), b.constant(np.ones([67], np.float32)))
    y = b.elu(b.softplus(b.sin(y)), alpha=0.5)
    return b.sign(b.softsign(b.log(b.abs(b.tan(b.cos(y))))))


def test_fused_chain_is_bit_identical_to_unfused():
    x = np.random.default_rng(4).uniform(-3, 3, [3, 37, 45]).astype(np.float32)
    fused, stats = _build_and_run(_matmul_chain, x, "all")
    unfused, _ = _build_and_run(_matmul_chain, x, UNFUSED)
    assert stats["nodes_after"] == 1  # every step joined the matmul's epilogue
    assert np.array_equal(fused.view(np.uint32), unfused.view(np.uint32))


@pytest.mark.skipif(rerun.nested(), reason="nested")
@rerun.each_cpu_setting
def test_other_isas_and_thread_counts(env):
    rerun.assert_file_passes(__file__, env)
