"""Volumetric (5-D) GridSample compared with ONNX Runtime on both backends, every padding mode,
both interpolation modes, with and without align_corners; grids reach outside the volume."""

import numpy as np
import pytest

ort = pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")
import webnn
import webnn.onnx as wo
from onnx import TensorProto, helper


def _model(x_shape, grid_shape, **attrs):
    node = helper.make_node("GridSample", ["x", "grid"], ["y"], **attrs)
    graph = helper.make_graph(
        [node],
        "g",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x_shape)),
            helper.make_tensor_value_info("grid", TensorProto.FLOAT, list(grid_shape)),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    model.ir_version = 9
    return model


@pytest.mark.parametrize("mode", ["linear", "nearest"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [0, 1])
def test_grid_sample_3d_matches_onnxruntime(mode, padding, align):
    rng = np.random.default_rng(len(mode) * 7 + len(padding) + align)
    x_shape, grid_shape = (2, 3, 4, 5, 6), (2, 3, 4, 2, 3)
    x = rng.standard_normal(x_shape).astype(np.float32)
    grid = rng.uniform(-1.3, 1.3, grid_shape).astype(np.float32)
    model = _model(x_shape, grid_shape, mode=mode, padding_mode=padding, align_corners=align)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (want,) = session.run(None, {"x": x, "grid": grid})
    for backend in ("cpu", "reference"):
        context = webnn.ML().create_context(accelerated=False, backend=backend)
        got = context.compute(wo.load(context, model), {"x": x, "grid": grid})["y"]
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=backend)


def test_grid_sample_3d_cubic_is_refused():
    model = _model((1, 1, 2, 3, 4), (1, 1, 2, 2, 3), mode="cubic")
    context = webnn.ML().create_context(accelerated=False, backend="cpu")
    with pytest.raises(wo.OnnxImportError, match="cubic"):
        wo.load(context, model)


@pytest.mark.parametrize(
    "x_shape,grid_shape,attrs,message",
    [
        ((1, 1, 4, 4), (1, 3, 3, 3), {}, r"grid of shape \[1, 3, 3, 3\] for a 2-D input"),
        ((2, 1, 4, 4), (1, 3, 3, 2), {}, "of batch 2"),
        ((1, 1, 4, 4, 4), (1, 3, 3, 3), {}, "for a 3-D input"),
        ((1, 1, 4, 4), (1, 3, 3, 2), {"padding_mode": "wrap"}, "padding_mode 'wrap'"),
        ((1, 1, 4, 4, 4), (1, 2, 2, 2, 3), {"padding_mode": "wrap"}, "padding_mode 'wrap'"),
    ],
)
def test_grid_sample_refuses_a_grid_or_padding_it_does_not_define(
    x_shape, grid_shape, attrs, message
):
    # Found by probing the importer: a 4-D input's grid with 3 coordinates, and an unknown
    # padding_mode (sampled as zeros), imported.
    context = webnn.ML().create_context(accelerated=False, backend="reference")
    with pytest.raises(wo.OnnxImportError, match=f"GridSample.*{message}"):
        wo.load(context, _model(x_shape, grid_shape, **attrs))
