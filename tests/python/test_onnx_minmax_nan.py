"""ONNX Max/Min propagate NaN from any input (ONNX Runtime does): compared with ORT on both
backends, variadic and broadcast, NaN in either operand, signed zeros and infinities, as a
stand-alone node and as the activation after a conv (where the cpu backend fuses it)."""

import numpy as np
import pytest

ort = pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")
import webnn
import webnn.onnx as wo
from onnx import TensorProto, helper, numpy_helper


def _run_both(model, feeds):
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    want = session.run(None, feeds)[0]
    for backend in ("cpu", "reference"):
        context = webnn.ML().create_context(accelerated=False, backend=backend)
        got = context.compute(wo.load(context, model), feeds)["y"]
        np.testing.assert_array_equal(got, want, err_msg=backend)


def _special(rng, shape):
    values = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5, -2.0], np.float32)
    x = rng.standard_normal(shape).astype(np.float32)
    mask = rng.random(shape) < 0.4
    x[mask] = rng.choice(values, int(mask.sum()))
    return x


@pytest.mark.parametrize("op", ["Max", "Min"])
@pytest.mark.parametrize("dtype", [TensorProto.FLOAT, TensorProto.FLOAT16])
def test_variadic_minmax_propagates_nan_like_onnxruntime(op, dtype):
    rng = np.random.default_rng(11)
    shapes = [[2, 3, 5], [3, 1], [5]]
    npd = np.float32 if dtype == TensorProto.FLOAT else np.float16
    feeds = {f"x{i}": _special(rng, s).astype(npd) for i, s in enumerate(shapes)}
    node = helper.make_node(op, list(feeds), ["y"])
    graph = helper.make_graph(
        [node],
        "minmax",
        [helper.make_tensor_value_info(k, dtype, list(v.shape)) for k, v in feeds.items()],
        [helper.make_tensor_value_info("y", dtype, None)],
    )
    _run_both(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), feeds)


def test_max_after_conv_propagates_nan_like_onnxruntime():
    # max(conv(x), 0.1 * conv(x)): leaky ReLU as exported by some converters, fused by the cpu
    # backend into the conv's epilogue.
    rng = np.random.default_rng(12)
    w = rng.standard_normal((8, 3, 3, 3)).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Mul", ["c", "k"], ["s"]),
        helper.make_node("Max", ["c", "s"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "leaky",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 9, 9])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(np.float32(0.1), "k")],
    )
    x = _special(rng, [1, 3, 9, 9])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    want = session.run(None, {"x": x})[0]
    for backend in ("cpu", "reference"):
        context = webnn.ML().create_context(accelerated=False, backend=backend)
        got = context.compute(wo.load(context, model), {"x": x})["y"]
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=backend)
        finite = ~np.isnan(want)
        np.testing.assert_allclose(got[finite], want[finite], rtol=1e-5, atol=1e-5)
