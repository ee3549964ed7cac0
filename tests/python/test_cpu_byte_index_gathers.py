"""The byte_index_gathers pass (graph/passes/byte_index_gathers.cc): gather(table,
cast(x -> int32) - c) with (u)int8 x becomes a gather by the bytes of x from a 256-entry table
(the ONNX importer's lookup tables of quantized element-wise operators). Checked bit for bit
against the reference backend (which runs the graph as built), for uint8 and int8 x, shifts
that send indices below zero (counted from the end) and past the end (clamped), every table
element type the cpu loop reads, tables shorter than 256, and through layout assignment (the
gather between NHWC convolutions keeps no transposes)."""

import numpy as np
import pytest
import webnn


def _build(ctx, x_type, shift, table, shape, with_sub=True):
    b = ctx.create_graph_builder()
    x = b.input("x", shape, x_type)
    i = b.cast(x, "int32")
    if with_sub:
        i = b.sub(i, b.constant(np.array(shift, np.int32)))
    return b.build({"y": b.gather(b.constant(table), i)})


def _run(backend, *args):
    ctx = webnn.ML().create_context(accelerated=False, backend=backend)
    graph = _build(ctx, *args[:-1])
    return ctx.compute(graph, {"x": args[-1]})["y"], graph.compile_stats


@pytest.mark.parametrize("x_type", ["uint8", "int8"])
@pytest.mark.parametrize("shift", [0, -128, 37, 300, -600])
@pytest.mark.parametrize("table_type", [np.uint8, np.int8, np.float16, np.float32, np.int32])
@pytest.mark.parametrize("size", [256, 65536, 17])
def test_same_elements_as_the_reference(x_type, shift, table_type, size):
    rng = np.random.default_rng(size + abs(shift))
    table = (rng.standard_normal(size) * 100).astype(table_type)
    shape = [2, 3, 40, 41]
    info = np.iinfo(x_type)
    x = rng.integers(info.min, int(info.max) + 1, shape).astype(x_type)
    x.reshape(-1)[:2] = (info.min, info.max)
    ours, stats = _run("cpu", x_type, shift, table, shape, x)
    want, _ = _run("reference", x_type, shift, table, shape, x)
    assert stats["passes"]["byte_index_gathers"] == 1, stats["passes"]
    # A float16 table is widened by float16_promotion: its output cast back.
    cast = {"cast": 1} if table_type == np.float16 else {}
    assert stats["ops_after"] == {"gather": 1, **cast}, stats["ops_after"]
    np.testing.assert_array_equal(ours.view(np.uint8), want.view(np.uint8))
    # numpy's take with the graph's index, normalised as gather does.
    idx = x.astype(np.int64) - shift
    idx = np.clip(np.where(idx < 0, idx + size, idx), 0, size - 1)
    np.testing.assert_array_equal(ours.view(np.uint8), table[idx].view(np.uint8))


def test_without_a_shift():
    table = np.arange(256, dtype=np.float32) * 0.5
    x = np.random.default_rng(1).integers(0, 256, [1000]).astype(np.uint8)
    ours, stats = _run("cpu", "uint8", 0, table, [1000], False, x)
    assert stats["passes"]["byte_index_gathers"] == 1
    np.testing.assert_array_equal(ours, table[x])


def test_int64_tables_and_wider_indices_keep_the_int32_form():
    rng = np.random.default_rng(2)
    x = rng.integers(0, 256, [64]).astype(np.uint8)
    table = rng.integers(-(2**40), 2**40, 256).astype(np.int64)
    ours, stats = _run("cpu", "uint8", 3, table, [64], x)
    assert stats["passes"]["byte_index_gathers"] == 0
    np.testing.assert_array_equal(ours, table[np.clip(x.astype(np.int64) - 3, 0, 255)])


def test_between_nhwc_convolutions_no_transposes():
    """conv -> quantize -> table -> dequantize -> conv: layout assignment carries NHWC through
    the byte-indexed gather as through any element-wise op."""
    rng = np.random.default_rng(3)
    results = {}
    for backend in ("cpu", "reference"):
        ctx = webnn.ML().create_context(accelerated=False, backend=backend)
        b = ctx.create_graph_builder()
        x = b.input("x", [1, 8, 12, 12], "float32")
        w1 = b.constant(rng.standard_normal((16, 8, 3, 3)).astype(np.float32) * 0.2)
        w2 = b.constant(rng.standard_normal((8, 16, 3, 3)).astype(np.float32) * 0.2)
        rng = np.random.default_rng(3)  # the same weights for the second backend
        scale = b.constant(np.array(0.05, np.float32).reshape(1, 1, 1, 1))
        zp = b.constant(np.array(128, np.uint8).reshape(1, 1, 1, 1))
        q = b.quantize_linear(b.conv2d(x, w1, padding=[1, 1, 1, 1]), scale, zp)
        table = np.clip(np.arange(256) * 1.5 - 60, 0, 255).astype(np.uint8)
        t = b.gather(b.constant(table), b.cast(q, "int32"))
        d = b.dequantize_linear(t, scale, zp)
        y = b.conv2d(d, w2, padding=[1, 1, 1, 1])
        graph = b.build({"y": y})
        feed = np.random.default_rng(4).standard_normal((1, 8, 12, 12)).astype(np.float32)
        results[backend] = ctx.compute(graph, {"x": feed})["y"], graph.compile_stats
    (ours, stats), (want, _) = results["cpu"], results["reference"]
    assert stats["passes"]["byte_index_gathers"] == 1
    assert stats["ops_after"].get("transpose", 0) == 2, stats["ops_after"]  # in and out only
    np.testing.assert_allclose(ours, want, rtol=1e-5, atol=1e-4)
