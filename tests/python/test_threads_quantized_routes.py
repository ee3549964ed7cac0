"""The quantized kernels of the 2026-12-06 session under threads (docs/reliability.md,
tools/sanitize.sh tsan): the saturating convolution route (cpu/qconv.cc init_saturating, with
ORT's u8s8 arithmetic forced so it runs on every machine), the raw-byte route of weights whose
pairs never saturate, the stride-2 depthwise phase split, and byte-indexed table gathers
(graph/passes/byte_index_gathers.cc). Four Python threads dispatch each on a 2-thread pool
(test_threads_new_kernels.run_threaded): bit-identical to one-thread runs, which are checked
against the reference backend or numpy."""

import numpy as np
import pytest

pytest.importorskip("onnx")
import webnn
import webnn.onnx as wo
from test_integer_matmul_u8s8 import qlinear_conv_model
from test_threads_new_kernels import THREADS, run_threaded
from webnn.onnx.ops import ort_u8s8


@pytest.fixture
def saturating_importer(monkeypatch):
    """The importer follows ORT's saturating u8s8 kernels, whatever this machine is."""
    monkeypatch.setenv("WEBNN_ONNX_U8S8", "saturate")
    ort_u8s8.saturating_machine.cache_clear()
    yield
    ort_u8s8.saturating_machine.cache_clear()


def _conv_case(monkeypatch, data, x_shape):
    rng = np.random.default_rng(len(data))
    feeds = [{"x": rng.integers(0, 256, x_shape).astype(np.uint8)} for _ in range(THREADS)]

    def build(ctx):
        graph = wo.load(ctx, data)
        assert graph.compile_stats["ops_after"].get("conv2d") == 1, graph.compile_stats
        return graph

    def check(f, result):
        ref = webnn.ML().create_context(accelerated=False, backend="reference")
        want = ref.compute(wo.load(ref, data), f)
        np.testing.assert_array_equal(result["Y"], want["Y"])

    run_threaded(monkeypatch, build, feeds, check)


def test_saturating_convolution_route(monkeypatch, saturating_importer):
    data = qlinear_conv_model(
        np.random.default_rng(1), [2, 16, 40, 40], 24, 1, [3, 3], pads=[1] * 4
    )
    _conv_case(monkeypatch, data, [2, 16, 40, 40])


def test_raw_byte_route_of_weights_that_never_saturate(monkeypatch):
    rng = np.random.default_rng(2)
    data = qlinear_conv_model(rng, [2, 16, 40, 40], 24, 2, [3, 3], weight_max=61, pads=[1] * 4)
    _conv_case(monkeypatch, data, [2, 16, 40, 40])


def test_depthwise_stride_two(monkeypatch):
    attrs = {"pads": [1, 1, 1, 1], "strides": [2, 2]}
    data = qlinear_conv_model(np.random.default_rng(3), [1, 32, 64, 63], 32, 32, [3, 3], **attrs)
    _conv_case(monkeypatch, data, [1, 32, 64, 63])


def test_byte_indexed_table_gathers(monkeypatch):
    rng = np.random.default_rng(4)
    table = rng.integers(0, 256, 256).astype(np.uint8)
    shape = [2, 64, 80]
    feeds = [{"x": rng.integers(0, 256, shape).astype(np.uint8)} for _ in range(THREADS)]

    def build(ctx):
        b = ctx.create_graph_builder()
        x = b.input("x", shape, "uint8")
        i = b.sub(b.cast(x, "int32"), b.constant(np.array(0, np.int32)))
        graph = b.build({"y": b.gather(b.constant(table), i)})
        assert graph.compile_stats["passes"]["byte_index_gathers"] == 1
        return graph

    def check(f, result):
        np.testing.assert_array_equal(result["y"], table[f["x"]])

    run_threaded(monkeypatch, build, feeds, check)
