"""Dynamic dimensions end to end (spec/api.md §11–§12): symbolic shapes, binding at
dispatch, derived dimensions, and a KV-cache loop whose sequence grows on every dispatch."""

import os
import resource

import numpy as np
import pytest
import webnn


@pytest.fixture(params=webnn.backends())
def ctx(request):
    return webnn.ML().create_context(accelerated=False, backend=request.param)


HEADS, DIM, MAX_LEN = 2, 4, 64


def build_kv_step(ctx):
    """present = concat(past, new) along the sequence; scores = q · presentᵀ."""
    b = ctx.create_graph_builder()
    past = b.input("past", [1, HEADS, {"name": "past", "maxSize": MAX_LEN}, DIM], "float32")
    new = b.input("new", [1, HEADS, 1, DIM], "float32")
    query = b.input("query", [1, HEADS, 1, DIM], "float32")
    present = b.concat([past, new], 2)
    assert b.operand_shape(present) == [1, HEADS, {"name": "past + 1", "maxSize": MAX_LEN + 1}, DIM]
    scores = b.matmul(query, b.transpose(present, permutation=[0, 1, 3, 2]))
    weights = b.softmax(scores, 3)
    graph = b.build({"present": b.identity(present), "weights": weights})
    assert graph.output_descriptors["present"]["shape"][2] == {
        "name": "past + 1",
        "maxSize": MAX_LEN + 1,
    }
    return graph


def test_kv_cache_grows_by_one_per_dispatch(ctx):
    graph = build_kv_step(ctx)
    rng = np.random.default_rng(3)
    past = ctx.create_tensor([1, HEADS, 0, DIM], "float32", readable=True, writable=True)
    present = ctx.create_tensor([1, HEADS, 1, DIM], "float32", readable=True)
    weights = ctx.create_tensor([1, HEADS, 1, 1], "float32", readable=True)
    ctx.set_tensor_capacity(past, [1, HEADS, MAX_LEN, DIM])
    ctx.set_tensor_capacity(present, [1, HEADS, MAX_LEN + 1, DIM])
    new = ctx.create_tensor([1, HEADS, 1, DIM], "float32", writable=True)
    query = ctx.create_tensor([1, HEADS, 1, DIM], "float32", writable=True)
    cache = np.zeros((1, HEADS, 0, DIM), np.float32)
    for step in range(20):
        k = rng.standard_normal((1, HEADS, 1, DIM)).astype(np.float32)
        q = rng.standard_normal((1, HEADS, 1, DIM)).astype(np.float32)
        ctx.write_tensor(new, k)
        ctx.write_tensor(query, q)
        ctx.resize_tensor(present, [1, HEADS, step + 1, DIM])
        ctx.resize_tensor(weights, [1, HEADS, 1, step + 1])
        ctx.dispatch(
            graph,
            {"past": past, "new": new, "query": query},
            {"present": present, "weights": weights},
        )
        cache = np.concatenate([cache, k], axis=2)
        np.testing.assert_array_equal(ctx.read_tensor(present), cache)
        s = q @ cache.transpose(0, 1, 3, 2)
        e = np.exp(s - s.max(axis=3, keepdims=True))
        np.testing.assert_allclose(
            ctx.read_tensor(weights), e / e.sum(axis=3, keepdims=True), rtol=1e-5, atol=1e-6
        )
        # the next step's past is this step's present
        ctx.resize_tensor(past, [1, HEADS, step + 1, DIM])
        ctx.write_tensor(past, cache)


def test_thousands_of_growing_dispatches_keep_memory_flat():
    ctx = webnn.ML().create_context(accelerated=False)
    b = ctx.create_graph_builder()
    seq = {"name": "seq", "maxSize": 4096}
    x = b.input("x", [seq, 8], "float32")
    graph = b.build({"y": b.relu(b.concat([x, b.constant(np.ones((1, 8), np.float32))], 0))})
    x_t = ctx.create_tensor([0, 8], "float32", writable=True)
    y_t = ctx.create_tensor([1, 8], "float32", readable=True)
    ctx.set_tensor_capacity(x_t, [4096, 8])
    ctx.set_tensor_capacity(y_t, [4097, 8])

    def run(lo, hi):
        for n in range(lo, hi):
            ctx.resize_tensor(x_t, [n, 8])
            ctx.resize_tensor(y_t, [n + 1, 8])
            ctx.dispatch(graph, {"x": x_t}, {"y": y_t})

    run(0, 500)
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    run(500, 3000)
    rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # A plan per binding is cached, but only a few: 2,500 new bindings must not accumulate
    # (each plan of ~3000x8 floats would add ~200 KB). Allow slack for allocator noise.
    # Under tools/sanitize.sh, ASan's quarantine keeps freed memory resident by design.
    if "asan" not in os.environ.get("LD_PRELOAD", ""):
        assert rss_after - rss_before < 20 * 1024, (rss_before, rss_after)
    out = ctx.read_tensor(y_t)
    assert out.shape == (3000, 8)
    np.testing.assert_array_equal(out[-1], np.ones(8))


def test_derived_dimension_names(ctx):
    b = ctx.create_graph_builder()
    seq = {"name": "seq", "maxSize": 10}
    x = b.input("x", [seq, 3], "float32")
    assert b.operand_shape(b.tile(x, [2, 1]))[0] == {"name": "2*seq", "maxSize": 20}
    assert b.operand_shape(b.pad(x, [1, 0], [2, 0]))[0] == {"name": "seq + 3", "maxSize": 13}
    both = b.concat([x, x], 0)
    assert b.operand_shape(both)[0] == {"name": "2*seq", "maxSize": 20}


def test_reshape_with_dynamic_dims(ctx):
    b = ctx.create_graph_builder()
    batch = {"name": "batch", "maxSize": 4}
    x = b.input("x", [batch, 4, 8], "float32")
    y = b.reshape(x, [batch, 32])
    assert b.operand_shape(y) == [batch, 32]
    with pytest.raises(ValueError):
        b.reshape(x, [{"name": "other", "maxSize": 4}, 32])
    with pytest.raises(ValueError):
        b.reshape(x, [4, 32])
    g = b.build({"y": y})
    xt = ctx.create_tensor([3, 4, 8], "float32", writable=True)
    yt = ctx.create_tensor([3, 32], "float32", readable=True)
    data = np.arange(96, dtype=np.float32).reshape(3, 4, 8)
    ctx.write_tensor(xt, data)
    ctx.dispatch(g, {"x": xt}, {"y": yt})
    np.testing.assert_array_equal(ctx.read_tensor(yt), data.reshape(3, 32))


def test_early_errors_for_unsupported_dynamic_arithmetic(ctx):
    b = ctx.create_graph_builder()
    x = b.input("x", [1, 3, {"name": "h", "maxSize": 32}, 32], "float32")
    w = b.constant(np.ones((4, 3, 3, 3), np.float32))
    with pytest.raises(ValueError, match="dynamic dimension 'h'"):
        b.conv2d(x, w)
    with pytest.raises(ValueError, match="dynamic"):
        b.split(x, 2, axis=2)
    with pytest.raises(ValueError):
        b.add(x, b.input("y", [1, 3, 32, 32], "float32"))


def test_zero_sized_binding(ctx):
    b = ctx.create_graph_builder()
    n = {"name": "n", "maxSize": 4}
    g = b.build({"y": b.relu(b.input("x", [n, 2], "float32"))})
    xt = ctx.create_tensor([0, 2], "float32", writable=True)
    yt = ctx.create_tensor([0, 2], "float32", readable=True)
    ctx.dispatch(g, {"x": xt}, {"y": yt})
    assert ctx.read_tensor(yt).shape == (0, 2)
