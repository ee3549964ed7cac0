"""Col2Im (blocks summed back into an image) compared with ONNX Runtime on both backends, with
overlapping blocks, strides, dilations, pads, and 1-D and 3-D images."""

import numpy as np
import pytest

ort = pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")
import webnn
import webnn.onnx as wo
from onnx import TensorProto, helper
from ort_compare import BACKENDS, assert_matches_onnxruntime, graph_model


def _model(x, image, block, **attrs):
    node = helper.make_node("Col2Im", ["x", "image", "block"], ["y"], **attrs)
    inits = {"image": np.array(image, np.int64), "block": np.array(block, np.int64)}
    return graph_model([node], {"x": x}, {"y": TensorProto.FLOAT}, inits, {"": 18})


CASE_PADS = [1, 0, 1, 2, 1, 0]


def _blocks_input(channels, image, block, attrs, seed):
    k = len(image)
    strides = attrs.get("strides", [1] * k)
    dil = attrs.get("dilations", [1] * k)
    pads = attrs.get("pads", [0] * (2 * k))
    blocks = [
        (image[i] + pads[i] + pads[k + i] - dil[i] * (block[i] - 1) - 1) // strides[i] + 1
        for i in range(k)
    ]
    shape = (2, channels * int(np.prod(block)), int(np.prod(blocks)))
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize(
    "channels,image,block,attrs",
    [
        (2, [5, 6], [2, 3], {}),
        (3, [7, 8], [3, 3], {"strides": [2, 2], "pads": [1, 1, 1, 1]}),
        (1, [9, 7], [2, 2], {"dilations": [2, 3]}),
        (2, [10], [3], {"strides": [2], "pads": [1, 0]}),
        (2, [4, 5, 6], [2, 2, 3], {}),
        (
            1,
            [7, 6, 5],
            [3, 2, 2],
            {"strides": [2, 1, 2], "dilations": [2, 1, 1], "pads": CASE_PADS},
        ),
    ],
)
def test_col2im_matches_onnxruntime(channels, image, block, attrs):
    x = _blocks_input(channels, image, block, attrs, channels + len(image))
    assert_matches_onnxruntime(_model(x, image, block, **attrs), {"x": x})


def test_col2im_3d_with_dilated_rows_and_columns_matches_the_onnx_reference():
    # ONNX Runtime's 3-D Col2Im misplaces blocks when the height or width is dilated
    # (microsoft/onnxruntime#18156; its 1-D and 2-D kernels and depth dilation agree): the
    # ONNX reference implementation is the expectation here.
    from onnx.reference import ReferenceEvaluator

    image, block, attrs = [6, 7, 5], [2, 2, 2], {"dilations": [1, 2, 3], "pads": CASE_PADS}
    x = _blocks_input(2, image, block, attrs, 5)
    model = _model(x, image, block, **attrs)
    (want,) = ReferenceEvaluator(model).run(None, {"x": x})
    for backend in BACKENDS:
        context = webnn.ML().create_context(accelerated=False, backend=backend)
        got = context.compute(wo.load(context, model), {"x": x})["y"]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=backend)


@pytest.mark.parametrize(
    "x_shape,image,block,attrs,message",
    [
        ((1, 4, 9), [4, 4], [2, 2], {"strides": [0, 1]}, "must be positive"),
        ((1, 4, 9), [4, 4], [2, 2], {"pads": [1, 1]}, "do not fit 2-D"),
        ((1, 4, 9), [4, 4, 4, 4], [2, 2, 2, 2], {}, "4 spatial dimensions"),
        ((1, 2**24, 1), [4096, 4096], [4096, 4096], {}, "too large a routing constant"),
    ],
)
def test_col2im_refuses_geometry_it_cannot_import(x_shape, image, block, attrs, message):
    x = np.zeros([1, 1, 1], np.float32)
    model = _model(x, image, block, **attrs)
    model.graph.input[0].type.tensor_type.shape.dim[1].dim_value = x_shape[1]
    model.graph.input[0].type.tensor_type.shape.dim[2].dim_value = x_shape[2]
    context = webnn.ML().create_context(accelerated=False, backend="reference")
    with pytest.raises(wo.OnnxImportError, match=f"Col2Im.*{message}"):
        wo.load(context, model)
