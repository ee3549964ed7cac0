"""The cpu backend's float32 erf, gelu and softmax against exact values and the reference.

erf and gelu are compared with Python's double erf/erfc rounded to float32 (gelu's negative
tail through erfc, where the reference's 1 + erf cancels), over dense ranges covering every
branch of the approximation, odd lengths (vector tails) and special values. The bounds are the
ones docs/performance.md states. The last test reruns this file with the AVX2 and generic
kernels and with 1 and 3 threads.
"""

import math
import os

import numpy as np
import pytest
import rerun
import webnn
from test_cpu_backend import _both, _run, assert_ulp

_erf = np.vectorize(math.erf)
_erfc = np.vectorize(math.erfc)


def _exact_gelu(x):
    xd = x.astype(np.float64)
    z = xd / math.sqrt(2.0)
    return np.where(xd < 0, 0.5 * xd * _erfc(-z), 0.5 * xd * (1 + _erf(z))).astype(np.float32)


def _unary(op, x):
    return _run("cpu", lambda g, o: getattr(g, op)(o["x"]), {"x": x})


def _dense(lo, hi, n):
    # Odd length: the last vector is a partial one.
    return np.linspace(lo, hi, n).astype(np.float32)


# The last step of erf rounds once with FMA (AVX2, AVX-512): within 1 ULP there; the generic
# kernels round the product first.
ERF_ULP = 2 if os.environ.get("WEBNN_CPU_ISA") == "generic" else 1


@pytest.mark.parametrize("lo,hi", [(-1, 1), (-12, 12), (-0.75, -0.25), (0.3, 0.8)])
def test_erf_within_1_ulp(lo, hi):
    x = _dense(lo, hi, 100003)
    exact = _erf(x.astype(np.float64))
    got = _unary("erf", x)
    assert_ulp(got, exact.astype(np.float32), ERF_ULP)
    if ERF_ULP == 1:  # and mostly the correctly rounded float (ONNX Runtime's: 87%)
        assert np.mean(got == exact.astype(np.float32)) > 0.93


def test_erf_of_tiny_arguments_keeps_relative_accuracy():
    # The first piece is erf(a) / a times a: relative accuracy down to the subnormals.
    x = np.geomspace(1e-44, 0.5, 50001).astype(np.float32)
    x = np.concatenate([x, -x])
    assert_ulp(_unary("erf", x), _erf(x.astype(np.float64)).astype(np.float32), ERF_ULP)


def test_erf_at_its_piece_edges_within_1_ulp():
    # erf switches polynomial at |x| = 0.5, 1, 1.5, ..., 4: each edge and its float neighbours.
    edges = np.arange(0.5, 4.01, 0.5, dtype=np.float32)
    near = [np.nextafter(edges, np.float32(0)), edges, np.nextafter(edges, np.float32(9))]
    x = np.concatenate(near + [-e for e in near]).astype(np.float32)
    assert_ulp(_unary("erf", x), _erf(x.astype(np.float64)).astype(np.float32), ERF_ULP)


@pytest.mark.parametrize("lo,hi", [(-1.5, 1.5), (-14, 10), (-0.8, -0.6), (-9, -5)])
def test_gelu_within_6_ulp(lo, hi):
    x = _dense(lo, hi, 100003)
    assert_ulp(_unary("gelu", x), _exact_gelu(x), 6)


def test_gelu_matches_reference_where_the_reference_is_accurate():
    x = np.random.default_rng(7).uniform(-5, 30, 50001).astype(np.float32)
    got, want = _both(lambda g, o: g.gelu(o["x"]), {"x": x})
    assert_ulp(got, want, 6)


@pytest.mark.parametrize("op", ["erf", "gelu"])
def test_special_values_match_reference(op):
    x = np.array(
        [
            0.0,
            -0.0,
            np.inf,
            -np.inf,
            np.nan,
            1e-45,
            -1e-45,
            1e-38,
            -1e-38,
            3e38,
            -3e38,
            0.5,
            -0.5,
            0.70710677,
            -0.70710677,
        ]
        * 3,
        dtype=np.float32,
    )
    x[-1] = np.float32(np.uint32(0x7F800001).view(np.float32))  # a NaN with a low payload
    got, want = _both(lambda g, o: getattr(g, op)(o["x"]), {"x": x})
    # Infinities, NaN, signed zeros and underflow exactly; the finite values within the bounds.
    assert_ulp(got, want, 6 if op == "gelu" else 3)


@pytest.mark.parametrize(
    "shape,axis",
    [
        ([3, 1], 1),
        ([2, 7], 1),
        ([5, 129], 1),
        ([4, 12, 31, 128], 3),
        ([2, 6625], 1),
        ([3, 40, 9], 1),
        ([17, 5], 0),
    ],
)
def test_softmax_large_spread(shape, axis):
    # Differences to the row's max span ~100, where exp's argument must not be rounded first.
    rng = np.random.default_rng(sum(shape))
    x = rng.uniform(-60, 40, shape).astype(np.float32)
    got, want = _both(lambda g, o: g.softmax(o["x"], axis=axis), {"x": x})
    assert_ulp(got, want, 4)


def test_softmax_rows_with_nan_and_inf():
    rng = np.random.default_rng(3)
    x = rng.standard_normal([6, 37]).astype(np.float32)
    x[0, 5] = np.nan
    x[1, 36] = np.inf
    x[2, :] = -np.inf
    x[3, :20] = -np.inf
    x[4, 3] = 3e38
    x[4, 4] = -3e38
    got, want = _both(lambda g, o: g.softmax(o["x"], axis=1), {"x": x})
    assert_ulp(got, want, 4)


def _softmax_with_threads(x, axis, threads):
    old = os.environ.get("WEBNN_NUM_THREADS")
    os.environ["WEBNN_NUM_THREADS"] = str(threads)
    try:
        ctx = webnn.ML().create_context(accelerated=False, backend="cpu")
    finally:
        if old is None:
            os.environ.pop("WEBNN_NUM_THREADS")
        else:
            os.environ["WEBNN_NUM_THREADS"] = old
    b = ctx.create_graph_builder()
    graph = b.build({"y": b.softmax(b.input("x", list(x.shape), "float32"), axis=axis)})
    return ctx.compute(graph, {"x": x})["y"]


@pytest.mark.parametrize("seed", range(8))
def test_softmax_rows_and_exp_paths(seed):
    # Several rows per kernel call (row counts, vector tails, the two-vector loop); the
    # exp takes one scaling when no lane of a vector is below -87 and the general path (two
    # scalings, zero below -104) otherwise, so rows mix both: -1e4 masks, -inf, values ~95
    # below the max (subnormal results), tails of every length.
    rng = np.random.default_rng(seed)
    rows = int(rng.integers(1, 30))
    length = int(rng.choice([1, 7, 8, 15, 16, 17, 33, 128, 129, 512, 513, 700]))
    x = rng.standard_normal((rows, length)) * 3
    x[rng.random(x.shape) < 0.2] = -1e4
    x[rng.random(x.shape) < 0.1] -= 95
    x[rng.random(x.shape) < 0.05] = -np.inf
    x = x.astype(np.float32)
    got, want = _both(lambda g, o: g.softmax(o["x"], axis=1), {"x": x})
    assert_ulp(got, want, 4)
    for threads in (1, 2):
        np.testing.assert_array_equal(_softmax_with_threads(x, 1, threads), got)


UNFUSED = "constant_folding,batch_norm_folding,layout_assignment"


def _build_and_run(make, x, passes):
    old = os.environ.get("WEBNN_PASSES")
    os.environ["WEBNN_PASSES"] = passes
    try:
        ctx = webnn.ML().create_context(accelerated=False, backend="cpu")
        b = ctx.create_graph_builder()
        graph = b.build({"y": make(b, b.input("x", list(x.shape), "float32"))})
    finally:
        if old is None:
            os.environ.pop("WEBNN_PASSES")
        else:
            os.environ["WEBNN_PASSES"] = old
    return ctx.compute(graph, {"x": x})["y"], graph.compile_stats


def _onnx_gelu(b, x):
    # The ONNX export's gelu: x * 0.5 * (1 + erf(x / sqrt 2)), ops one by one.
    c = lambda v: b.constant(np.array([v], np.float32))
    return b.mul(b.mul(b.add(b.erf(b.div(x, c(1.4142135))), c(1.0)), x), c(0.5))


def _matmul_gelu(b, x):
    w = np.random.default_rng(1).uniform(-1, 1, [45, 67]).astype(np.float32)
    return b.gelu(b.add(b.matmul(x, b.constant(w)), b.constant(np.ones([67], np.float32))))


@pytest.mark.parametrize("make", [_onnx_gelu, _matmul_gelu], ids=["erf_chain", "matmul_gelu"])
def test_fused_erf_and_gelu_are_bit_identical_to_unfused(make):
    x = np.random.default_rng(2).uniform(-6, 6, [3, 37, 45]).astype(np.float32)
    fused, stats = _build_and_run(make, x, "all")
    unfused, _ = _build_and_run(make, x, UNFUSED)
    assert stats["nodes_after"] == 1  # erf / gelu joined the chain
    assert np.array_equal(fused.view(np.uint32), unfused.view(np.uint32))


@pytest.mark.skipif(rerun.nested(), reason="nested")
@rerun.each_cpu_setting
def test_other_isas_and_thread_counts(env):
    rerun.assert_file_passes(__file__, env)
