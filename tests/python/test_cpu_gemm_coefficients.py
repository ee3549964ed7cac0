"""gemm's coefficients on the cpu backend as the reference applies them: beta == 0 still adds
0 * c (NaN and inf in c give NaN, as in the WebNN definition), and a float16 gemm's alpha and
beta (like the normalizations' epsilon) are cast to float16 first (fuzz findings, issue 8)."""

import numpy as np
import pytest
import webnn


def _gemm(backend, dtype, a, b, c, alpha, beta):
    context = webnn.ML().create_context(accelerated=False, backend=backend)
    g = context.create_graph_builder()
    y = g.gemm(
        g.input("a", list(a.shape), dtype),
        g.constant(b.astype(dtype)),
        c=g.constant(c.astype(dtype)),
        alpha=alpha,
        beta=beta,
    )
    return context.compute(g.build({"y": y}), {"a": a.astype(dtype)})["y"]


def test_beta_zero_still_reads_c():
    a = -np.ones((3, 4), np.float32)
    b = np.zeros((4, 5), np.float32)  # a * b = -0 everywhere: + 0 * c decides the sign
    c = np.array([[np.nan, 1, -0.0, np.inf, -2]] * 3, np.float32)
    got = _gemm("cpu", "float32", a, b, c, 1.0, 0.0)
    want = _gemm("reference", "float32", a, b, c, 1.0, 0.0)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    assert np.isnan(got[:, [0, 3]]).all()
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("alpha,beta", [(0.1, 0.3), (1.7, 1e-4), (1 + 2**-12, 3.0001)])
def test_float16_coefficients_are_cast_to_float16(alpha, beta):
    # Small integers: every product and sum is exact in float32 and double, so only the
    # coefficients' rounding can make cpu and reference differ.
    rng = np.random.default_rng(3)
    a = rng.integers(-8, 9, (16, 6)).astype(np.float32)
    b = rng.integers(-8, 9, (6, 24)).astype(np.float32)
    c = rng.integers(-64, 65, (16, 24)).astype(np.float32)
    got = _gemm("cpu", "float16", a, b, c, alpha, beta)
    want = _gemm("reference", "float16", a, b, c, alpha, beta)
    np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))
