"""gelu in its negative tail (builder fuzz finding, sixth session, docs/reliability.md): the
reference computed 1 + erf(x / sqrt 2), which cancels to 0 below about x = -8.3, so
sign(gelu(x)) was 0 on reference and -1 on cpu (whose gelu is right there). The expectation
is Python's double erfc, independent of both backends."""

import math

import numpy as np
import pytest
import webnn

XS = np.array(
    [-20, -15, -14, -13.5, -13, -12.75, -12, -10, -9, -8, -3, -0.5, 0, 0.5, 3], np.float32
)
EXACT = np.array([0.5 * float(x) * math.erfc(-float(x) / math.sqrt(2)) for x in XS], np.float32)


@pytest.mark.parametrize("backend", ["cpu", "reference"])
def test_gelu_tail_and_its_sign(backend):
    ctx = webnn.ML().create_context(accelerated=False, backend=backend)
    b = ctx.create_graph_builder()
    x = b.input("x", [len(XS)], "float32")
    out = ctx.compute(b.build({"g": b.gelu(x), "s": b.sign(b.gelu(x))}), {"x": XS})
    # float32 relative error near 1e-6; in the subnormal tail (x <= -13.5) the cpu keeps
    # fewer digits (subnormals have fewer): absolutely within 1e-44 there.
    np.testing.assert_allclose(out["g"], EXACT, rtol=2e-6, atol=1e-44)
    np.testing.assert_array_equal(out["s"], np.sign(EXACT))
