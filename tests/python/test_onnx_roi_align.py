"""RoiAlign compared with ONNX Runtime on both backends: run-time regions with a fixed sampling
grid (what torchvision's detectors export), adaptive grids from regions known at import, both
coordinate modes, avg and max, regions reaching outside the feature map."""

import numpy as np
import pytest

ort = pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")
import webnn
import webnn.onnx as wo
from onnx import TensorProto, helper
from ort_compare import assert_matches_onnxruntime, graph_model


@pytest.mark.parametrize(
    "mode,ratio,ctm,runtime_rois,out",
    [
        ("avg", 2, "half_pixel", True, (7, 7)),
        ("avg", 0, "half_pixel", False, (3, 4)),
        ("max", 2, "output_half_pixel", True, (4, 4)),
        ("max", 0, "half_pixel", False, (5, 3)),
        ("avg", 1, "output_half_pixel", True, (2, 2)),
    ],
)
def test_roi_align_matches_onnxruntime(mode, ratio, ctm, runtime_rois, out):
    rng = np.random.default_rng(ratio * 10 + len(mode) + out[0])
    x = rng.standard_normal((2, 3, 12, 14)).astype(np.float32)
    rois = np.array(
        [[1.0, 2.0, 20.0, 18.0], [0.0, 0.0, 27.0, 23.0], [-4.0, 10.0, 9.5, 30.0],
         [5.3, 3.1, 6.0, 4.2]],
        np.float32,
    )  # fmt: skip
    batch = np.array([0, 1, 1, 0], np.int64)
    feeds, inits = {"x": x}, {"b": batch}
    (feeds if runtime_rois else inits)["r"] = rois
    node = helper.make_node(
        "RoiAlign", ["x", "r", "b"], ["y"], mode=mode, sampling_ratio=ratio,
        coordinate_transformation_mode=ctm, output_height=out[0], output_width=out[1],
        spatial_scale=0.5,
    )  # fmt: skip
    model = graph_model([node], feeds, {"y": TensorProto.FLOAT}, inits, {"": 16})
    assert_matches_onnxruntime(model, feeds, rtol=1e-5, atol=1e-5)


def test_roi_align_adaptive_grid_with_run_time_rois_is_refused():
    node = helper.make_node("RoiAlign", ["x", "r", "b"], ["y"], sampling_ratio=0)
    feeds = {"x": np.zeros((1, 1, 4, 4), np.float32), "r": np.zeros((2, 4), np.float32)}
    model = graph_model(
        [node], feeds, {"y": TensorProto.FLOAT}, {"b": np.zeros(2, np.int64)}, {"": 16}
    )
    context = webnn.ML().create_context(accelerated=False, backend="cpu")
    with pytest.raises(wo.OnnxImportError, match="sampling_ratio=0"):
        wo.load(context, model)


@pytest.mark.parametrize(
    "x_shape,r_shape,b_len",
    [((1, 1, 4, 4), (2, 5), 2), ((1, 1, 4, 4), (2, 4), 3), ((1, 4, 4), (2, 4), 2)],
)
def test_roi_align_refuses_inputs_of_other_shapes(x_shape, r_shape, b_len):
    # Found by probing: rois with 5 columns imported (the first 4 were read).
    node = helper.make_node("RoiAlign", ["x", "r", "b"], ["y"], sampling_ratio=2)
    feeds = {"x": np.zeros(x_shape, np.float32), "r": np.zeros(r_shape, np.float32)}
    inits = {"b": np.zeros(b_len, np.int64)}
    model = graph_model([node], feeds, {"y": TensorProto.FLOAT}, inits, {"": 16})
    context = webnn.ML().create_context(accelerated=False, backend="cpu")
    with pytest.raises(wo.OnnxImportError, match=r"RoiAlign.*expected \[N, C, H, W\], \[R, 4\]"):
        wo.load(context, model)
