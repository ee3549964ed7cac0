"""Contexts are thread-safe (api.md §1): dispatches from many Python threads, on one context or
several, give bit-identical results to serial runs; objects can be released in any order.

MLContext.dispatch releases the GIL (python/src/module.cc), so the threads really overlap in the
engine; each graph runs one dispatch at a time and the pool serves one region at a time, the
others run their kernels on the calling thread.
"""

import gc
import itertools
import threading

import numpy as np
import pytest
import webnn

THREADS = 8
ROUNDS = 25


def make_graphs(ctx):
    """Three different graphs (conv + pool, matmul chain, element-wise) with fixed weights."""
    rng = np.random.default_rng(3)
    graphs = []
    b = ctx.create_graph_builder()
    x = b.input("x", [1, 4, 12, 12], "float32")
    w = b.constant(rng.standard_normal((8, 4, 3, 3)).astype(np.float32))
    y = b.max_pool2d(b.relu(b.conv2d(x, w, padding=[1, 1, 1, 1])), window_dimensions=[2, 2])
    graphs.append((b.build({"y": y}), (1, 4, 12, 12)))
    b = ctx.create_graph_builder()
    x = b.input("x", [16, 32], "float32")
    m = b.constant(rng.standard_normal((32, 32)).astype(np.float32) * 0.2)
    y = b.softmax(b.matmul(b.tanh(b.matmul(x, m)), m), 1)
    graphs.append((b.build({"y": y}), (16, 32)))
    b = ctx.create_graph_builder()
    x = b.input("x", [3, 50], "float32")
    y = b.sigmoid(b.add(b.mul(x, x), b.constant(np.float32(0.5))))
    graphs.append((b.build({"y": y}), (3, 50)))
    return graphs


def out_shape(graph):
    return graph.output_descriptors["y"]["shape"]


def run_serial(ctx, graph, data):
    xt = ctx.create_tensor(list(data.shape), "float32", writable=True)
    yt = ctx.create_tensor(out_shape(graph), "float32", readable=True)
    ctx.write_tensor(xt, data)
    ctx.dispatch(graph, {"x": xt}, {"y": yt})
    return ctx.read_tensor(yt)


def hammer(jobs):
    """Runs jobs[i]() ROUNDS times on thread i; returns the per-thread results or raises."""
    results = [None] * len(jobs)
    errors = []
    start = threading.Barrier(len(jobs))

    def worker(i):
        try:
            start.wait()
            outs = [jobs[i]() for _ in range(ROUNDS)]
            results[i] = outs
        except Exception as exc:  # noqa: BLE001 - re-raised in the main thread below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
        assert not t.is_alive(), "a dispatching thread hung"
    if errors:
        raise errors[0]
    return results


def dispatch_job(ctx, graph, data):
    # Each thread owns its tensors: a tensor bound to two running dispatches is a user error.
    xt = ctx.create_tensor(list(data.shape), "float32", writable=True)
    yt = ctx.create_tensor(out_shape(graph), "float32", readable=True)

    def job():
        ctx.write_tensor(xt, data)
        ctx.dispatch(graph, {"x": xt}, {"y": yt})
        return ctx.read_tensor(yt)

    return job


@pytest.fixture(scope="module")
def ctx():
    return webnn.ML().create_context(accelerated=False, backend="cpu")


def test_eight_threads_one_graph_match_serial(ctx):
    graph, shape = make_graphs(ctx)[0]
    rng = np.random.default_rng(11)
    datas = [rng.standard_normal(shape).astype(np.float32) for _ in range(THREADS)]
    expected = [run_serial(ctx, graph, d) for d in datas]
    results = hammer([dispatch_job(ctx, graph, d) for d in datas])
    for i in range(THREADS):
        for out in results[i]:
            np.testing.assert_array_equal(out, expected[i])


def test_eight_threads_different_graphs_match_serial(ctx):
    graphs = make_graphs(ctx)
    rng = np.random.default_rng(12)
    jobs, expected = [], []
    for i in range(THREADS):
        graph, shape = graphs[i % len(graphs)]
        data = rng.standard_normal(shape).astype(np.float32)
        expected.append(run_serial(ctx, graph, data))
        jobs.append(dispatch_job(ctx, graph, data))
    results = hammer(jobs)
    for i in range(THREADS):
        for out in results[i]:
            np.testing.assert_array_equal(out, expected[i])


def test_several_contexts_at_once_match_serial():
    ml = webnn.ML()
    contexts = [ml.create_context(accelerated=False, backend="cpu") for _ in range(3)]
    contexts.append(ml.create_context(accelerated=False, backend="reference"))
    rng = np.random.default_rng(13)
    jobs, expected = [], []
    for i in range(THREADS):
        ctx = contexts[i % len(contexts)]
        graph, shape = make_graphs(ctx)[i % 3]
        data = rng.standard_normal(shape).astype(np.float32)
        expected.append(run_serial(ctx, graph, data))
        jobs.append(dispatch_job(ctx, graph, data))
    results = hammer(jobs)
    for i in range(THREADS):
        for out in results[i]:
            np.testing.assert_array_equal(out, expected[i])
    # cpu and reference agree within the float32 tolerance on the same graph and input.
    ref_graph, shape = make_graphs(contexts[-1])[1]
    cpu_graph, _ = make_graphs(contexts[0])[1]
    data = rng.standard_normal(shape).astype(np.float32)
    np.testing.assert_allclose(
        run_serial(contexts[0], cpu_graph, data),
        run_serial(contexts[-1], ref_graph, data),
        rtol=1e-5,
        atol=1e-6,
    )


def make_objects():
    ctx = webnn.ML().create_context(accelerated=False, backend="cpu")
    b = ctx.create_graph_builder()
    x = b.input("x", [4], "float32")
    y = b.relu(b.sub(x, b.constant(np.float32(1))))
    graph = b.build({"y": y})
    pending = ctx.create_graph_builder()  # a builder that is never built
    z = pending.abs(pending.input("z", [2], "float32"))
    xt = ctx.create_tensor([4], "float32", writable=True)
    yt = ctx.create_tensor([4], "float32", readable=True)
    return {
        "ctx": ctx,
        "builder": b,
        "operand": y,
        "graph": graph,
        "pending": pending,
        "z": z,
        "xt": xt,
        "yt": yt,
    }


ORDERS = list(itertools.permutations(["ctx", "builder", "graph", "xt", "pending", "z"]))[::37]


@pytest.mark.parametrize("order", ORDERS, ids=["-".join(o) for o in ORDERS])
def test_release_in_any_order_then_use_what_is_left(order):
    objs = make_objects()
    data = np.array([-1, 0, 2, 5], np.float32)
    for name in order:
        del objs[name]
        gc.collect()
        # What is still held keeps working: handles own what they need (their context
        # included), so nothing dangles after the user dropped the rest.
        if {"ctx", "graph", "xt", "yt"} <= objs.keys():
            ctx = objs["ctx"]
            ctx.write_tensor(objs["xt"], data)
            ctx.dispatch(objs["graph"], {"x": objs["xt"]}, {"y": objs["yt"]})
            np.testing.assert_array_equal(ctx.read_tensor(objs["yt"]), [0, 0, 1, 4])
        if {"builder", "operand"} <= objs.keys():
            # Built already: refused with the reason, not a crash on freed state.
            with pytest.raises(RuntimeError, match="already"):
                objs["builder"].operand_shape(objs["operand"])
        if {"pending", "z"} <= objs.keys():
            assert objs["pending"].operand_data_type(objs["z"]) == "float32"
        if "xt" in objs:
            assert objs["xt"].shape == [4]
    objs["yt"].destroy()
    objs.clear()
    gc.collect()


def test_builder_builds_after_its_context_is_dropped():
    ctx = webnn.ML().create_context(accelerated=False, backend="cpu")
    b = ctx.create_graph_builder()
    y = b.neg(b.input("x", [2], "float32"))
    compute = ctx.compute
    del ctx
    gc.collect()
    graph = b.build({"y": y})  # the builder holds its context
    np.testing.assert_array_equal(
        compute(graph, {"x": np.array([1, -2], np.float32)})["y"], [-1, 2]
    )


def test_tensors_and_graphs_outlive_their_context():
    ml = webnn.ML()
    ctx = ml.create_context(accelerated=False, backend="cpu")
    b = ctx.create_graph_builder()
    x = b.input("x", [3], "float32")
    graph = b.build({"y": b.neg(x)})
    xt = ctx.create_tensor([3], "float32", writable=True)
    yt = ctx.create_tensor([3], "float32", readable=True)
    write, dispatch, read = ctx.write_tensor, ctx.dispatch, ctx.read_tensor
    del ctx, b, x
    gc.collect()
    # The bound methods keep the context alive: the objects remain usable, not dangling.
    write(xt, np.array([1, -2, 3], np.float32))
    dispatch(graph, {"x": xt}, {"y": yt})
    np.testing.assert_array_equal(read(yt), [-1, 2, -3])
    # A tensor or graph from one context is refused by another, even after the first is gone.
    other = ml.create_context(accelerated=False, backend="cpu")
    del write, dispatch, read
    gc.collect()
    with pytest.raises(RuntimeError, match="another context"):
        other.read_tensor(yt)
    with pytest.raises(RuntimeError, match="another context"):
        other.dispatch(graph, {"x": xt}, {"y": yt})
