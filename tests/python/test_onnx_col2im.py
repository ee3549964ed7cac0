"""Col2Im (blocks summed back into an image) compared with ONNX Runtime on both backends, with
overlapping blocks, strides, dilations, pads, and 1-D images."""

import numpy as np
import pytest

ort = pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper
from ort_compare import assert_matches_onnxruntime, graph_model


def _model(x, image, block, **attrs):
    node = helper.make_node("Col2Im", ["x", "image", "block"], ["y"], **attrs)
    inits = {"image": np.array(image, np.int64), "block": np.array(block, np.int64)}
    return graph_model([node], {"x": x}, {"y": TensorProto.FLOAT}, inits, {"": 18})


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
    assert_matches_onnxruntime(_model(x, image, block, **attrs), {"x": x})
