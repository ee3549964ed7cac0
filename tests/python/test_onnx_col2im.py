"""Col2Im (blocks summed back into an image) compared with ONNX Runtime on both backends, with
overlapping blocks, strides, dilations, pads, and 1-D images."""

import numpy as np
import pytest

ort = pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")
import webnn
import webnn.onnx as wo
from onnx import TensorProto, helper, numpy_helper


def _model(x_shape, image, block, **attrs):
    inits = [
        numpy_helper.from_array(np.array(image, np.int64), "image"),
        numpy_helper.from_array(np.array(block, np.int64), "block"),
    ]
    node = helper.make_node("Col2Im", ["x", "image", "block"], ["y"], **attrs)
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x_shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    return model


@pytest.mark.parametrize(
    "channels,image,block,attrs",
    [
        (2, [5, 6], [2, 3], {}),
        (3, [7, 8], [3, 3], {"strides": [2, 2], "pads": [1, 1, 1, 1]}),
        (1, [9, 7], [2, 2], {"dilations": [2, 3]}),
        (2, [10], [3], {"strides": [2], "pads": [1, 0]}),
    ],
)
def test_col2im_matches_onnxruntime(channels, image, block, attrs):
    k = len(image)
    strides = attrs.get("strides", [1] * k)
    dil = attrs.get("dilations", [1] * k)
    pads = attrs.get("pads", [0] * (2 * k))
    blocks = [
        (image[i] + pads[i] + pads[k + i] - dil[i] * (block[i] - 1) - 1) // strides[i] + 1
        for i in range(k)
    ]
    shape = (2, channels * int(np.prod(block)), int(np.prod(blocks)))
    x = np.random.default_rng(channels + k).standard_normal(shape).astype(np.float32)
    model = _model(shape, image, block, **attrs)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (want,) = session.run(None, {"x": x})
    for backend in ("cpu", "reference"):
        context = webnn.ML().create_context(accelerated=False, backend=backend)
        got = context.compute(wo.load(context, model), {"x": x})["y"]
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=backend)
