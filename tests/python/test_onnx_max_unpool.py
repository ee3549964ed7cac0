"""MaxUnpool fed by MaxPool's Indices (1-D, 2-D, 3-D; with and without output_shape, overlapping
windows that pick the same element twice), compared with ONNX Runtime on both backends."""

import numpy as np
import pytest

ort = pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")
import webnn
import webnn.onnx as wo
from onnx import TensorProto, helper, numpy_helper


@pytest.mark.parametrize(
    "shape,kernel,strides,output_shape",
    [
        ((1, 2, 6, 8), [2, 2], [2, 2], None),
        ((2, 3, 7, 9), [2, 2], [2, 2], [2, 3, 7, 9]),  # odd sizes: output_shape restores them
        ((1, 2, 6, 6), [3, 3], [1, 1], None),  # overlapping windows
        ((1, 2, 12), [3], [2], [1, 2, 12]),
        ((1, 1, 4, 6, 6), [2, 2, 2], [2, 2, 2], None),
    ],
)
def test_max_unpool_matches_onnxruntime(shape, kernel, strides, output_shape):
    rng = np.random.default_rng(sum(shape))
    x = rng.standard_normal(shape).astype(np.float32)
    nodes = [
        helper.make_node("MaxPool", ["x"], ["p", "i"], kernel_shape=kernel, strides=strides),
        helper.make_node(
            "MaxUnpool", ["p", "i"] + (["os"] if output_shape else []), ["y"],
            kernel_shape=kernel, strides=strides,
        ),
    ]  # fmt: skip
    inits = []
    if output_shape:
        inits.append(numpy_helper.from_array(np.array(output_shape, np.int64), "os"))
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)])
    model.ir_version = 7
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (want,) = session.run(None, {"x": x})
    for backend in ("cpu", "reference"):
        context = webnn.ML().create_context(accelerated=False, backend=backend)
        got = context.compute(wo.load(context, model), {"x": x})["y"]
        np.testing.assert_array_equal(got, want, err_msg=backend)
