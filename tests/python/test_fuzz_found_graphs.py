"""Graphs the builder fuzz target found (docs/reliability.md, sixth session), built through
the Python API: each runs, and cpu equals reference and numpy."""

import numpy as np
import pytest
import webnn


@pytest.mark.parametrize("dtype", ["int32", "uint32", "float32"])
@pytest.mark.parametrize("backend", ["cpu", "reference"])
def test_transposed_scalar_next_to_a_scalar_constant(backend, dtype):
    # The layout pass permuted the constant for the rank-0 transpose: `rank - 1` wrapped and
    # it wrote before a vector (a segfault on cpu; reference compiles the same passes).
    ctx = webnn.ML().create_context(accelerated=False, backend=backend)
    b = ctx.create_graph_builder()
    x = b.input("x", [], dtype)
    seven = b.constant(np.array(7, dtype))
    y = b.sub(seven, b.transpose(x, permutation=[]))
    z = b.add(b.transpose(x, permutation=[]), seven)
    out = ctx.compute(b.build({"y": y, "z": z}), {"x": np.array(3, dtype)})
    assert out["y"].shape == () and out["y"] == np.array(4, dtype)
    assert out["z"] == np.array(10, dtype)
