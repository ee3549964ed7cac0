"""Transposes that move only size-1 axes (the `unit_axis_transposes` pass) and the memory plan's
aliases of graph inputs (a reshape of an input is a view of the bound tensor's bytes).

Random shapes with size-1 axes and random permutations, some keeping the order of the other
axes (rewritten as reshapes), some not (left as transposes): the cpu results equal the
reference backend's bit for bit, the input tensors are unchanged after each dispatch (an
element-wise reader of the view writes elsewhere), a graph output that is the transposed input
gets its own bytes, and inputs bound again with new values give new results.
"""

import numpy as np
import pytest
import webnn

_CONTEXTS = {}


def _context(backend):
    if backend not in _CONTEXTS:
        _CONTEXTS[backend] = webnn.ML().create_context(accelerated=False, backend=backend)
    return _CONTEXTS[backend]


def _keeps_order(shape, perm):
    moved = [a for a in perm if shape[a] != 1]
    return moved == sorted(moved)


def _case(seed):
    rng = np.random.default_rng(seed)
    rank = int(rng.integers(1, 6))
    shape = [1 if rng.random() < 0.5 else int(rng.integers(2, 6)) for _ in range(rank)]
    if rng.random() < 0.6:
        # A permutation keeping the non-1 axes in order: the size-1 axes dealt in at random.
        big = [a for a in range(rank) if shape[a] != 1]
        ones = [a for a in range(rank) if shape[a] == 1]
        perm = list(big)
        for a in rng.permutation(ones):
            perm.insert(int(rng.integers(0, len(perm) + 1)), int(a))
    else:
        perm = [int(a) for a in rng.permutation(rank)]
    dtype = str(rng.choice(["float32", "float32", "float16", "int32"]))
    return shape, perm, dtype


def _values(rng, shape, dtype):
    if dtype == "int32":
        return rng.integers(-50, 50, shape).astype(np.int32)
    return rng.uniform(-4, 4, shape).astype(dtype)


def _build(ctx, shape, perm, dtype, c):
    b = ctx.create_graph_builder()
    x = b.input("x", shape, dtype)
    inner = b.transpose(x, permutation=perm)
    # An element-wise chain reading the transposed input: on the cpu it could run in place
    # over its input, which must not be the graph input's bytes.
    e = b.add(b.neg(inner), b.constant(c))
    outputs = {
        "t": b.transpose(x, permutation=perm),  # a graph output that is the transposed input
        "e": e,
        "x2": b.mul(x, x),  # read after the chain: the input's bytes must be intact
    }
    return b.build(outputs)


def _dispatch(ctx, graph, xv, out_shapes, dtype):
    xt = ctx.create_tensor(list(xv.shape), dtype, readable=True, writable=True)
    ctx.write_tensor(xt, xv)
    outs = {k: ctx.create_tensor(s, dtype, readable=True) for k, s in out_shapes.items()}
    ctx.dispatch(graph, {"x": xt}, outs)
    np.testing.assert_array_equal(ctx.read_tensor(xt), xv)
    return {k: ctx.read_tensor(t) for k, t in outs.items()}


@pytest.mark.parametrize("seed", range(40))
def test_random_transposes_match_the_reference(seed):
    shape, perm, dtype = _case(seed)
    rng = np.random.default_rng(seed + 1000)
    out_shape = [shape[a] for a in perm]
    c = _values(rng, out_shape[-2:], dtype)  # broadcast over the leading axes
    cpu, ref = _context("cpu"), _context("reference")
    graph = _build(cpu, shape, perm, dtype, c)
    oracle = _build(ref, shape, perm, dtype, c)
    unit = _keeps_order(shape, perm)
    stats = graph.compile_stats
    assert stats["passes"].get("unit_axis_transposes", 0) == (2 if unit else 0)
    assert stats["ops_after"].get("transpose", 0) == (0 if unit else 2)
    out_shapes = {"t": out_shape, "e": out_shape, "x2": shape}
    for run in range(2):  # the same tensors bound again with new values
        xv = _values(rng, shape, dtype)
        got = _dispatch(cpu, graph, xv, out_shapes, dtype)
        want = _dispatch(ref, oracle, xv, out_shapes, dtype)
        np.testing.assert_array_equal(got["t"], xv.transpose(perm))
        for k in out_shapes:
            np.testing.assert_array_equal(got[k], want[k], err_msg=f"{k}, run {run}")


def test_gray_nchw_conv_input_is_a_view():
    """The trueocr_orient case: a one-channel NCHW input [n,1,h,w] transposed to NHWC for the
    conv is a reshape, a view of the input tensor; only the output's transpose is left."""
    rng = np.random.default_rng(5)
    w = rng.uniform(-0.5, 0.5, [6, 1, 3, 3]).astype(np.float32)
    bias = rng.uniform(-1, 1, [6]).astype(np.float32)

    def build(ctx):
        b = ctx.create_graph_builder()
        x = b.input("x", [2, 1, 9, 11], "float32")
        y = b.relu(b.conv2d(x, b.constant(w), bias=b.constant(bias), padding=[1, 1, 1, 1]))
        return b.build({"y": y, "x1": b.add(x, b.constant(np.float32([1.5])))})

    graph, oracle = build(_context("cpu")), build(_context("reference"))
    stats = graph.compile_stats
    assert stats["passes"]["unit_axis_transposes"] == 1
    assert stats["ops_after"].get("transpose", 0) == 1
    for _ in range(2):
        xv = rng.uniform(-2, 2, [2, 1, 9, 11]).astype(np.float32)
        shapes = {"y": [2, 6, 9, 11], "x1": [2, 1, 9, 11]}
        got = _dispatch(_context("cpu"), graph, xv, shapes, "float32")
        want = _dispatch(_context("reference"), oracle, xv, shapes, "float32")
        np.testing.assert_allclose(got["y"], want["y"], rtol=1e-5, atol=1e-5)
        np.testing.assert_array_equal(got["x1"], want["x1"])


def test_dynamic_batch_transpose_is_a_reshape():
    """A dynamic axis counts as not of size 1: [n,1,3,5] -> [n,3,5,1] keeps the order."""

    def build(ctx):
        b = ctx.create_graph_builder()
        x = b.input("x", [{"name": "n", "maxSize": 4}, 1, 3, 5], "float32")
        t = b.transpose(x, permutation=[0, 2, 3, 1])
        return b.build({"y": b.sigmoid(t), "t": b.identity(t)})

    graph, oracle = build(_context("cpu")), build(_context("reference"))
    assert graph.compile_stats["passes"]["unit_axis_transposes"] == 1
    rng = np.random.default_rng(9)
    for n in (3, 1, 4):
        xv = rng.uniform(-3, 3, [n, 1, 3, 5]).astype(np.float32)
        shapes = {"y": [n, 3, 5, 1], "t": [n, 3, 5, 1]}
        got = _dispatch(_context("cpu"), graph, xv, shapes, "float32")
        want = _dispatch(_context("reference"), oracle, xv, shapes, "float32")
        np.testing.assert_array_equal(got["t"], xv.transpose(0, 2, 3, 1))
        np.testing.assert_allclose(got["y"], want["y"], rtol=1e-6, atol=0)
