"""The cpu where kernel (cpu/where.cc) against the reference backend and numpy: random
broadcast shapes of the condition and both values, every element size, condition bytes other
than 0 and 1, constant operands, a computed value whose buffer the output may reuse, and
outputs large enough to split over 2 threads."""

import numpy as np
import pytest
import webnn

TYPES = ["float32", "float16", "int8", "uint8", "int32", "uint32", "int64", "uint64"]


def _broadcastable(rng, shape):
    """A shape that broadcasts to `shape`: some leading axes dropped, some axes set to 1."""
    keep = int(rng.integers(0, len(shape) + 1))
    sub = shape[len(shape) - keep :]
    return [1 if rng.random() < 0.4 else d for d in sub]


def _where(backend, cond, t, f, constant_false, plus_one):
    context = webnn.ML().create_context(accelerated=False, backend=backend)
    b = context.create_graph_builder()
    c = b.input("c", list(cond.shape), "uint8")
    ti = b.input("t", list(t.shape), str(t.dtype))
    feeds = {"c": cond, "t": t}
    if constant_false:
        fi = b.constant(f, shape=list(f.shape), data_type=str(f.dtype))
    else:
        fi = b.input("f", list(f.shape), str(f.dtype))
        feeds["f"] = f
    if plus_one:  # a dying intermediate the memory plan may hand to the output
        ti = b.add(ti, b.constant(np.ones([1], t.dtype), shape=[1], data_type=str(t.dtype)))
    graph = b.build({"y": b.where(c, ti, fi)})
    return context.compute(graph, feeds)["y"]


@pytest.mark.parametrize("threads", [1, 2])
def test_cpu_where_matches_reference_and_numpy(monkeypatch, threads):
    monkeypatch.setenv("WEBNN_NUM_THREADS", str(threads))
    rng = np.random.default_rng(23)
    for case in range(48):
        rank = int(rng.integers(0, 6))
        out_shape = [int(d) for d in rng.integers(1, 7, rank)]
        if case % 8 == 0:  # several tasks: 3 x 80 x 101 and a long row
            out_shape = [3, 80, 101] if case % 16 else [40000]
        dtype = TYPES[case % len(TYPES)]
        cond = rng.choice(np.array([0, 1, 7, 255], np.uint8), _broadcastable(rng, out_shape))
        t = (rng.standard_normal(_broadcastable(rng, out_shape)) * 40).astype(dtype)
        f = (rng.standard_normal(_broadcastable(rng, out_shape)) * 40).astype(dtype)
        if case % 4 == 1:
            t = (rng.standard_normal(out_shape) * 40).astype(dtype)
        plus_one = dtype.startswith("float") and case % 3 == 0
        want_np = np.where(cond != 0, t + np.ones([1], dtype) if plus_one else t, f)
        for constant in (False, True):
            got = _where("cpu", cond, t, f, constant, plus_one)
            want = _where("reference", cond, t, f, constant, plus_one)
            assert got.shape == want.shape == want_np.shape, case
            np.testing.assert_array_equal(
                got.reshape(-1).view(np.uint8), want.reshape(-1).view(np.uint8), err_msg=str(case)
            )
            np.testing.assert_array_equal(got, want_np, err_msg=str(case))
