"""argMin / argMax of the cpu backend (arg_min_max.cc) against the reference backend and numpy:
last-axis rows (vector lanes, then the first position of the extreme) and inner axes (column
blocks), with ties, NaN (the first NaN wins), infinities and signed zeros (equal: the first of
either sign), int32 and int64 outputs, keepDimensions, one and two threads."""

import numpy as np
import pytest
import webnn

SHAPES_AXES = [
    ([1, 8400], 1),  # a detector's scores
    ([80, 6625], 1),  # a CTC decoder's classes
    ([3, 63], 1),  # short rows: the ordered loop
    ([1, 21, 40, 33], 1),  # a segmentation head: columns, a partial block
    ([2, 5, 300], 1),  # columns of 300: two blocks
    ([700, 3], 0),
    ([4, 6, 7], 2),
    ([9], 0),
    ([1, 1, 5], 1),  # an axis of one
]


def _run(backend, op, x, axis, keep=False, out_type="int32", threads=None):
    ctx = webnn.ML().create_context(accelerated=False, backend=backend)
    b = ctx.create_graph_builder()
    xi = b.input("x", list(x.shape), "float32")
    y = getattr(b, op)(xi, axis, keep_dimensions=keep, output_data_type=out_type)
    return ctx.compute(b.build({"y": y}), {"x": x})["y"]


def _data(shape, case, rng):
    x = rng.standard_normal(shape).astype(np.float32)
    flat = x.reshape(-1)
    if case == "ties":
        x = rng.integers(-2, 3, shape).astype(np.float32)
    elif case == "nan":
        flat[rng.choice(flat.size, size=max(1, flat.size // 50), replace=False)] = np.nan
    elif case == "inf":
        flat[rng.choice(flat.size, size=max(1, flat.size // 50), replace=False)] = np.inf
        flat[rng.choice(flat.size, size=max(1, flat.size // 50), replace=False)] = -np.inf
    elif case == "zeros":
        x = np.where(rng.random(shape) < 0.5, np.float32(-0.0), np.float32(0.0))
        x.reshape(-1)[:: max(1, x.size // 7)] = 0.0
    return x


@pytest.mark.parametrize("op", ["arg_max", "arg_min"])
@pytest.mark.parametrize("shape,axis", SHAPES_AXES)
@pytest.mark.parametrize("case", ["plain", "ties", "nan", "inf", "zeros"])
def test_matches_reference(op, shape, axis, case):
    rng = np.random.default_rng(hash((op, tuple(shape), axis, case)) % 2**32)
    x = _data(shape, case, rng)
    got = _run("cpu", op, x, axis)
    want = _run("reference", op, x, axis)
    assert got.dtype == np.int32 and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    if case in ("plain", "ties", "zeros", "inf"):  # numpy agrees without NaN
        np.testing.assert_array_equal(got, getattr(np, op.replace("_", ""))(x, axis=axis))


@pytest.mark.parametrize("op", ["arg_max", "arg_min"])
def test_int64_output_and_kept_dimensions(op):
    rng = np.random.default_rng(3)
    x = _data([2, 130, 17], "nan", rng)
    for axis in (1, 2):
        got = _run("cpu", op, x, axis, keep=True, out_type="int64")
        want = _run("reference", op, x, axis, keep=True, out_type="int64")
        assert got.dtype == np.int64 and got.shape == want.shape
        np.testing.assert_array_equal(got, want)


def test_first_nan_wins_over_later_values():
    x = np.array([[1.0, np.nan, 5.0, np.nan], [np.nan, -1.0, 7.0, 9.0]], np.float32)
    x = np.tile(x, (1, 40))  # long enough for the lanes
    for op in ("arg_max", "arg_min"):
        np.testing.assert_array_equal(_run("cpu", op, x, 1), [1, 0])
        np.testing.assert_array_equal(_run("cpu", op, x.T.copy(), 0), [1, 0])


@pytest.mark.parametrize("threads", ["1", "2"])
def test_threads_give_the_same_positions(threads, monkeypatch):
    monkeypatch.setenv("WEBNN_NUM_THREADS", threads)
    rng = np.random.default_rng(11)
    x = _data([1, 21, 64, 64], "ties", rng)
    np.testing.assert_array_equal(_run("cpu", "arg_max", x, 1), _run("reference", "arg_max", x, 1))
    y = _data([300, 8400 // 4], "ties", rng)
    np.testing.assert_array_equal(_run("cpu", "arg_min", y, 1), _run("reference", "arg_min", y, 1))
