"""Sums over a short innermost axis on the cpu backend (reduction.cc): rows of up to 8 values
(a power spectrum's re^2 + im^2 over an axis of 2, as the ONNX STFT import leaves it) are
summed inline in double in row order, pairs in one vectorized loop. Both are the reference's
double additions in its order, so results are compared bit for bit, special values included;
longer rows take the vector row functions (another order of the double additions) and are
compared within a few float32 ULPs."""

import numpy as np
import pytest
import rerun
import webnn

OPS = ["reduce_sum", "reduce_mean", "reduce_sum_square", "reduce_l2", "reduce_l1"]


def _run(backend, op, x, axes):
    ctx = webnn.ML().create_context(accelerated=False, backend=backend)
    b = ctx.create_graph_builder()
    xi = b.input("x", list(x.shape), "float32")
    graph = b.build({"y": getattr(b, op)(xi, axes)})
    return ctx.compute(graph, {"x": x})["y"]


def _data(shape, seed):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 4, shape)).astype(np.float32)
    flat = x.reshape(-1)
    # Specials at fixed spots: NaN, infinities, -0.0 rows, squares that overflow float32 but
    # not double, values whose sum cancels.
    specials = [np.nan, 1.0, np.inf, -np.inf, -0.0, -0.0, 3e30, 3e30, 1e-30, -1e-30, 2.0**24, 1.0]
    count = min(flat.size, len(specials))
    flat[:count] = specials[:count]
    return x


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("length", [1, 2, 3, 5, 8])
@pytest.mark.parametrize("rows", [[7], [2, 100, 257], [3, 1]])
def test_short_rows_match_reference_bits(op, length, rows):
    x = _data(rows + [length], length * 7 + len(rows))
    axes = [len(rows)]
    got = _run("cpu", op, x, axes)
    want = _run("reference", op, x, axes)
    assert got.shape == want.shape == tuple(rows)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("length", [9, 16, 33])
def test_longer_rows_match_reference(op, length):
    rng = np.random.default_rng(length)
    x = rng.standard_normal((40, length)).astype(np.float32)
    got = _run("cpu", op, x, [1])
    want = _run("reference", op, x, [1])
    np.testing.assert_allclose(got, want, rtol=4 * np.finfo(np.float32).eps, atol=0)


@pytest.mark.skipif(rerun.nested(), reason="already in a subprocess")
@rerun.each_isa_and_threads
def test_every_cpu_setting(env):
    rerun.assert_file_passes(__file__, env)
