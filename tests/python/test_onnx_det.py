"""Det at run time (webnn/onnx/ops/det.py: Leibniz's sum up to order 6) against ONNX Runtime
on both backends, and the refusal above that order."""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import webnn
import webnn.onnx as wo
from onnx import TensorProto, helper


def _model(shape):
    graph = helper.make_graph(
        [helper.make_node("Det", ["x"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model.SerializeToString()


@pytest.mark.parametrize("backend", ["cpu", "reference"])
@pytest.mark.parametrize("shape", [[1, 1], [2, 2], [3, 3], [5, 4, 4], [2, 3, 5, 5], [6, 6]])
def test_det_matches_onnxruntime(shape, backend):
    x = np.random.default_rng(len(shape) * 10 + shape[-1]).standard_normal(shape)
    x = x.astype(np.float32)
    if shape[-1] >= 3:  # a singular matrix too (two equal rows): its determinant is ~0
        x.reshape(-1, shape[-1], shape[-1])[0, 1] = x.reshape(-1, shape[-1], shape[-1])[0, 0]
    data = _model(shape)
    want = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    ctx = webnn.ML().create_context(accelerated=False, backend=backend)
    got = ctx.compute(wo.load(ctx, data), {"x": x})["y"]
    assert got.shape == want.shape
    # float32 sums of n! products of magnitude ~1 against ORT's float32 LU
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5 * shape[-1] ** 3)


def test_det_above_order_6_is_refused():
    ctx = webnn.ML().create_context(accelerated=False, backend="cpu")
    with pytest.raises(wo.OnnxImportError, match=r"Det.*order 7 at run time"):
        wo.load(ctx, _model([7, 7]))
