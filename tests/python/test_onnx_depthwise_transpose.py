"""Depthwise ConvTranspose (group = channels, one output channel per group), imported as a
depthwise conv2d over the zero-interleaved input (onnx/ops/depthwise_transpose.py), compared
with ONNX Runtime on both backends for strides, pads, output padding, output_shape, 1-D and
2-D, with and without bias (DeepFilterNet3's decoders use group 64, kernel 1x3, stride 1x2)."""

import numpy as np
import pytest

ort = pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")
import webnn
import webnn.onnx as wo
from onnx import TensorProto, helper, numpy_helper

CASES = [
    # (input shape, kernel, attributes)
    ([1, 64, 10, 16], [1, 3], {"strides": [1, 2], "pads": [0, 1, 0, 1], "output_padding": [0, 1]}),
    ([2, 8, 7, 9], [3, 3], {"strides": [2, 2]}),
    ([1, 6, 5, 5], [3, 2], {"strides": [3, 2], "pads": [1, 0, 2, 1]}),
    ([1, 4, 6, 6], [2, 2], {"strides": [2, 2], "output_shape": [13, 12]}),
    ([1, 5, 4, 4], [3, 3], {"strides": [1, 1], "pads": [1, 1, 1, 1]}),
    ([2, 3, 20], [4], {"strides": [2], "pads": [1, 1]}),  # 1-D
]


def _model(shape, kernel, attrs, bias):
    channels = shape[1]
    rng = np.random.default_rng(len(shape) * 10 + kernel[0])
    w = rng.standard_normal([channels, 1, *kernel]).astype(np.float32)
    inits = [numpy_helper.from_array(w, "w")]
    inputs = ["x", "w"]
    if bias:
        inits.append(numpy_helper.from_array(rng.standard_normal(channels).astype(np.float32), "b"))
        inputs.append("b")
    node = helper.make_node("ConvTranspose", inputs, ["y"], group=channels, **attrs)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits,
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("shape,kernel,attrs", CASES)
def test_depthwise_conv_transpose_matches_onnxruntime(shape, kernel, attrs, bias):
    model = _model(shape, kernel, attrs, bias)
    x = np.random.default_rng(7).standard_normal(shape).astype(np.float32)
    (want,) = ort.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    ).run(None, {"x": x})
    for backend in ("cpu", "reference"):
        context = webnn.ML().create_context(accelerated=False, backend=backend)
        graph = wo.load(context, model)
        got = context.compute(graph, {"x": x})["y"]
        assert got.shape == want.shape
        assert float(np.max(np.abs(got - want))) <= 1e-5 * float(np.max(np.abs(want)))


def test_the_depthwise_form_is_a_convolution():
    model = _model(*CASES[0][:2], CASES[0][2], True)
    context = webnn.ML().create_context(accelerated=False, backend="reference")
    graph = wo.load(context, model)
    assert graph.compile_stats["ops_after"].get("convTranspose2d", 0) == 0
    assert graph.compile_stats["ops_after"].get("conv2d", 0) == 1
