"""MLGraph.set_profiling / MLGraph.profile and `webnn run --profile` (per-node timing)."""

import numpy as np
import pytest
import webnn
from webnn import cli
from webnn.profile import profile_table


def _mlp(ctx, batch_max=8):
    b = ctx.create_graph_builder()
    x = b.input("x", [{"name": "batch", "maxSize": batch_max}, 4], "float32")
    w = b.constant(np.arange(12, dtype=np.float32).reshape(4, 3) / 10)
    h = b.relu(b.add(b.matmul(x, w), b.constant(np.array([0.5, -0.5, 0.0], np.float32))))
    return b.build({"y": b.softmax(h, axis=1)})


def _run(ctx, graph, x):
    inp = ctx.create_tensor(list(x.shape), "float32", writable=True)
    ctx.write_tensor(inp, x)
    shape = graph._output_shapes({"x": list(x.shape)})["y"]
    out = ctx.create_tensor(shape, "float32", readable=True)
    ctx.dispatch(graph, {"x": inp}, {"y": out})
    return ctx.read_tensor(out)


@pytest.mark.parametrize("backend", ["cpu", "reference"])
def test_profile_counts_runs_and_names_every_optimised_node(backend):
    ctx = webnn.ML().create_context(accelerated=False, backend=backend)
    graph = _mlp(ctx)
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert graph.profile == {"runs": 0, "nodes": []}  # off by default
    _run(ctx, graph, x)
    graph.set_profiling(True)
    for _ in range(3):
        _run(ctx, graph, x)
    profile = graph.profile
    assert profile["runs"] == 3
    ops = [n["op"] for n in profile["nodes"]]
    assert sum(graph.compile_stats["ops_after"].values()) == len(ops)
    assert ops[0].startswith("matmul") and ops[-1].startswith("softmax")
    matmul = profile["nodes"][0]
    assert matmul["shape"][0] == 3  # the bound batch, not its maxSize
    assert matmul["flops"] >= 2 * 3 * 3 * 4  # at the concrete shape
    assert all(n["total_ms"] >= 0 for n in profile["nodes"])
    assert profile["nodes"][-1]["output"] == "y"
    graph.set_profiling(False)  # clears
    assert graph.profile["runs"] == 0
    _run(ctx, graph, x)
    assert graph.profile["runs"] == 0


def test_profile_does_not_change_results():
    ctx = webnn.ML().create_context()
    graph = _mlp(ctx)
    x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    plain = _run(ctx, graph, x)
    graph.set_profiling(True)
    np.testing.assert_array_equal(_run(ctx, graph, x), plain)


def test_profile_table_lists_ops_and_slowest_nodes():
    ctx = webnn.ML().create_context()
    graph = _mlp(ctx)
    graph.set_profiling(True)
    _run(ctx, graph, np.ones((2, 4), np.float32))
    text = profile_table(graph.profile, top=2)
    assert text.startswith("1 profiled run(s);")
    assert "softmax" in text and "slowest 2 nodes" in text


def test_cli_run_profile(tmp_path, capsys):
    ctx = webnn.ML().create_context()
    b = ctx.create_graph_builder()
    x = b.input("x", [2, 4], "float32")
    b.save({"y": b.relu(x)}, str(tmp_path / "g.webnn"))
    data = np.array([[-1, 2, -3, 4], [5, -6, 7, -8]], np.float32)
    np.save(tmp_path / "x.npy", data)
    args = ["run", tmp_path / "g.webnn", "-i", f"x={tmp_path / 'x.npy'}", "-o", tmp_path / "out"]
    assert cli.main([str(a) for a in args + ["--profile", "4"]]) == 0
    out = capsys.readouterr().out
    assert "4 profiled run(s)" in out and "relu" in out
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "y.npy"), np.maximum(data, 0))
