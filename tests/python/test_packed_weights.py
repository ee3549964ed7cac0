"""Constant weights are packed once per compiled graph and shared by its shape-specialised plans."""

import numpy as np
import webnn


def _dispatch(ctx, graph, feeds, out_shapes):
    inputs = {}
    for name, value in feeds.items():
        inputs[name] = ctx.create_tensor(list(value.shape), "float32", writable=True)
        ctx.write_tensor(inputs[name], value)
    outputs = {k: ctx.create_tensor(s, "float32", readable=True) for k, s in out_shapes.items()}
    ctx.dispatch(graph, inputs, outputs)
    return {k: ctx.read_tensor(t) for k, t in outputs.items()}


def test_matmul_and_gemm_weights_are_packed_once_for_every_plan():
    rng = np.random.default_rng(7)
    w = rng.standard_normal((32, 48)).astype(np.float32)
    ctx = webnn.ML().create_context(accelerated=False, backend="cpu")
    b = ctx.create_graph_builder()
    x = b.input("x", [{"name": "rows", "maxSize": 64}, 32], "float32")
    outs = {
        "matmul": b.matmul(x, b.constant(w)),
        "gemm": b.gemm(x, b.constant(w)),
        "gemm_bt": b.gemm(x, b.constant(np.ascontiguousarray(w.T)), b_transpose=True),
    }
    graph = b.build(outs)
    for rows in [3, 17, 64, 1, 3]:  # the last one reuses its cached plan
        xv = rng.standard_normal((rows, 32)).astype(np.float32)
        got = _dispatch(ctx, graph, {"x": xv}, {k: [rows, 48] for k in outs})
        want = xv.astype(np.float64) @ w.astype(np.float64)
        for name, value in got.items():
            np.testing.assert_allclose(value, want, rtol=1e-5, atol=1e-5, err_msg=name)
    stats = graph.compile_stats
    assert stats["plans"] == 4
    assert stats["shared_constants"] == 3  # one packing per weight, not one per plan
