"""DeformConv (2-D) compared with ONNX Runtime on both backends: offsets reaching outside the
image, a modulation mask, groups and offset groups, strides, pads and dilations."""

import numpy as np
import pytest

ort = pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper
from ort_compare import assert_matches_onnxruntime, graph_model


@pytest.mark.parametrize(
    "c_in,c_out,k,group,offset_group,mask,attrs",
    [
        (2, 3, 3, 1, 1, False, {"pads": [1, 1, 1, 1]}),
        (4, 4, 3, 2, 2, True, {"strides": [2, 2], "pads": [1, 0, 1, 0]}),
        (3, 2, 2, 1, 3, True, {"dilations": [2, 1]}),
    ],
)
def test_deform_conv_matches_onnxruntime(c_in, c_out, k, group, offset_group, mask, attrs):
    rng = np.random.default_rng(c_in * 10 + k)
    h, w = 7, 8
    strides = attrs.get("strides", [1, 1])
    dil = attrs.get("dilations", [1, 1])
    pads = attrs.get("pads", [0, 0, 0, 0])
    oh = (h + pads[0] + pads[2] - dil[0] * (k - 1) - 1) // strides[0] + 1
    ow = (w + pads[1] + pads[3] - dil[1] * (k - 1) - 1) // strides[1] + 1
    feeds = {
        "x": rng.standard_normal((2, c_in, h, w)).astype(np.float32),
        "off": (rng.standard_normal((2, offset_group * 2 * k * k, oh, ow)) * 1.5).astype(
            np.float32
        ),
    }
    inits = {
        "w": rng.standard_normal((c_out, c_in // group, k, k)).astype(np.float32),
        "b": rng.standard_normal(c_out).astype(np.float32),
    }
    inputs = ["x", "w", "off", "b"]
    if mask:
        feeds["m"] = rng.uniform(0, 1, (2, offset_group * k * k, oh, ow)).astype(np.float32)
        inputs.append("m")
    node = helper.make_node(
        "DeformConv", inputs, ["y"], group=group, offset_group=offset_group,
        kernel_shape=[k, k], **attrs,
    )  # fmt: skip
    model = graph_model([node], feeds, {"y": TensorProto.FLOAT}, inits, {"": 19}, ir_version=9)
    assert_matches_onnxruntime(model, feeds, rtol=1e-4, atol=1e-4)
