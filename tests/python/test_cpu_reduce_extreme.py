"""reduceMin / reduceMax rows of the cpu backend (reduction.cc): long rows run over 16
independent lanes and fall back to the ordered loop where that could differ (a NaN or an
infinity in the row, or a zero extreme, whose sign is that of the first zero in row order).
Compared bit for bit with the reference backend."""

import numpy as np
import pytest
import webnn


def _run(backend, op, x, axes):
    ctx = webnn.ML().create_context(accelerated=False, backend=backend)
    b = ctx.create_graph_builder()
    xi = b.input("x", list(x.shape), "float32")
    graph = b.build({"y": getattr(b, op)(xi, axes)})
    return ctx.compute(graph, {"x": x})["y"]


@pytest.mark.parametrize("op", ["reduce_min", "reduce_max"])
@pytest.mark.parametrize("shape,axes", [([1, 192, 16, 64], [0, 1, 2, 3]), ([3, 100], [1]),
                                        ([2, 64], [1]), ([5, 1001], [1]), ([4, 63], [1])])  # fmt: skip
@pytest.mark.parametrize("case", ["plain", "nan", "inf", "zeros_neg_first", "zeros_pos_first"])
def test_extreme_rows_match_reference_bits(op, shape, axes, case):
    rng = np.random.default_rng(len(shape) * 31 + shape[-1])
    x = rng.standard_normal(shape).astype(np.float32)
    flat = x.reshape(-1)
    if case == "nan":
        flat[rng.integers(flat.size)] = np.nan
    elif case == "inf":
        flat[rng.integers(flat.size)] = np.inf if op == "reduce_max" else -np.inf
    elif case.startswith("zeros"):
        x = np.abs(x) if op == "reduce_min" else -np.abs(x)
        flat = x.reshape(-1)
        first, second = (-0.0, 0.0) if case == "zeros_neg_first" else (0.0, -0.0)
        for row in range(flat.size // shape[-1] if len(shape) == 2 else 1):
            base = row * shape[-1] if len(shape) == 2 else 0
            flat[base + 7], flat[base + 40] = first, second
    got = _run("cpu", op, x, axes)
    want = _run("reference", op, x, axes)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


@pytest.mark.parametrize("op", ["reduce_min", "reduce_max"])
@pytest.mark.parametrize("shape,axes", [([2, 508, 1, 512], [1]), ([3, 7, 37], [1]),
                                        ([5, 64, 17], [0, 1]), ([4, 9, 70], [1]),
                                        ([1, 300, 3], [1]), ([2, 2, 257], [1])])  # fmt: skip
@pytest.mark.parametrize("case", ["plain", "nan", "inf", "zeros_neg_first", "zeros_pos_first"])
def test_extreme_columns_match_reference_bits(op, shape, axes, case):
    """Reductions over an outer axis with contiguous columns after it (magika's max over the
    length of an NHWC [n, length, 1, c] value): vectors of columns down the rows, tails of
    fewer columns than a vector, each lane the ordered loop's compare."""
    rng = np.random.default_rng(len(shape) * 17 + shape[-1])
    x = rng.standard_normal(shape).astype(np.float32)
    rows = int(np.prod([shape[a] for a in axes]))
    cols = x.size // rows // (shape[0] if axes == [1] else 1)
    # The reduced elements of each output, as [outer, rows, cols].
    view = x.reshape(-1, rows, cols)
    if case == "nan":
        for _ in range(3):  # a few columns, at random rows
            view[rng.integers(view.shape[0]), rng.integers(rows), rng.integers(cols)] = np.nan
    elif case == "inf":
        view[:, rng.integers(rows), ::3] = np.inf if op == "reduce_max" else -np.inf
    elif case.startswith("zeros"):
        view[...] = np.abs(view) if op == "reduce_min" else -np.abs(view)
        first, second = (-0.0, 0.0) if case == "zeros_neg_first" else (0.0, -0.0)
        view[:, max(0, min(2, rows - 2)), ::2] = first
        view[:, rows - 1, ::2] = second
    got = _run("cpu", op, x, axes)
    want = _run("reference", op, x, axes)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
