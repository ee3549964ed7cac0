"""Minimal reproducers of failures found while importing real pretrained models from PyPI
wheels (tests/python/test_onnx_more_models.py), each built with onnx.helper and compared with
ONNX Runtime."""

import numpy as np
import pytest

ort = pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")
import webnn
import webnn.onnx as wo
from onnx import TensorProto, helper, numpy_helper


def _run_both(model, feeds):
    data = model.SerializeToString()
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])
    theirs = dict(zip([o.name for o in session.get_outputs()], session.run(None, feeds)))
    context = webnn.ML().create_context(accelerated=False, backend="cpu")
    graph = wo.load(context, data)
    return context.compute(graph, feeds), theirs


@pytest.mark.parametrize(
    "direction,batch,steps,per_channel",
    [
        ("forward", 1, 5, False),
        ("bidirectional", 1, 4, True),
        ("reverse", 1, 3, False),
        ("forward", 2, 3, False),
    ],
)
def test_dynamic_quantize_lstm(direction, batch, steps, per_channel):
    """com.microsoft DynamicQuantizeLSTM, which ONNX Runtime's quantize_dynamic makes of every
    LSTM (silero VAD v6 of faster-whisper, ddddocr's common_old.onnx): was unsupported. Its
    run-time uint8 quantization of X and of each step's h must be reproduced, a float LSTM on
    dequantized weights is off by ~1e-2. Compared with a single-threaded ONNX Runtime: with
    more threads and batch > 1 it quantizes h per slice of the batch, one slice per thread."""
    rng = np.random.default_rng(steps)
    size, hidden = 6, 5
    dirs = 2 if direction == "bidirectional" else 1
    # 7-bit weights (quantize_dynamic's reduce_range): with full-range int8 weights ONNX
    # Runtime's u8s8 kernels on CPUs without VNNI saturate 16-bit pair sums (off by ~10%).
    w = rng.integers(-63, 64, (dirs, size, 4 * hidden)).astype(np.int8)
    r = rng.integers(-63, 64, (dirs, hidden, 4 * hidden)).astype(np.int8)
    scale_shape = (dirs, 4 * hidden) if per_channel else (dirs,)
    inits = [
        numpy_helper.from_array(w, "W"),
        numpy_helper.from_array(r, "R"),
        numpy_helper.from_array(rng.standard_normal((dirs, 8 * hidden)).astype(np.float32), "B"),
        numpy_helper.from_array(rng.uniform(0.002, 0.01, scale_shape).astype(np.float32), "Ws"),
        numpy_helper.from_array(np.zeros(scale_shape, np.int8), "Wz"),
        numpy_helper.from_array(rng.uniform(0.002, 0.01, scale_shape).astype(np.float32), "Rs"),
        numpy_helper.from_array(np.zeros(scale_shape, np.int8), "Rz"),
    ]
    node = helper.make_node(
        "DynamicQuantizeLSTM",
        ["X", "W", "R", "B", "", "h0", "c0", "", "Ws", "Wz", "Rs", "Rz"],
        ["Y", "Yh", "Yc"],
        domain="com.microsoft",
        hidden_size=hidden,
        direction=direction,
    )
    f32 = TensorProto.FLOAT
    graph = helper.make_graph(
        [node],
        "dq_lstm",
        [
            helper.make_tensor_value_info("X", f32, [steps, batch, size]),
            helper.make_tensor_value_info("h0", f32, [dirs, batch, hidden]),
            helper.make_tensor_value_info("c0", f32, [dirs, batch, hidden]),
        ],
        [
            helper.make_tensor_value_info("Y", f32, None),
            helper.make_tensor_value_info("Yh", f32, None),
            helper.make_tensor_value_info("Yc", f32, None),
        ],
        inits,
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
    )
    feeds = {
        "X": rng.standard_normal((steps, batch, size)).astype(np.float32),
        "h0": 0.5 * rng.standard_normal((dirs, batch, hidden)).astype(np.float32),
        "c0": rng.standard_normal((dirs, batch, hidden)).astype(np.float32),
    }
    ours, theirs = _run_both(model, feeds)
    for name, want in theirs.items():
        assert ours[name].shape == want.shape
        err = float(np.max(np.abs(ours[name] - want)))
        assert err <= 1e-3 * float(np.max(np.abs(want))), f"{name}: max error {err:.3g}"


@pytest.mark.parametrize(
    "values",
    [
        np.zeros((2, 3), np.float32),  # an empty range (a ReLU's all-zero output): scale 1
        np.full((2, 3), 2.5, np.float32),
        np.full((2, 3), -3.0, np.float32),
        np.array([[0, 1e-30, 0], [0, 0, 0]], np.float32),
        np.array([[-1.0, 0.25, 3.0], [0.5, -0.75, 2.0]], np.float32),
    ],
)
def test_dynamic_quantize_linear_edge_ranges(values):
    """DynamicQuantizeLinear of an all-zero tensor: ONNX Runtime takes scale 1 (and zero point
    0) where the range is empty; ours gave scale 0. Every output is compared exactly."""
    graph = helper.make_graph(
        [helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "s", "z"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [
            helper.make_tensor_value_info("y", TensorProto.UINT8, [2, 3]),
            helper.make_tensor_value_info("s", TensorProto.FLOAT, []),
            helper.make_tensor_value_info("z", TensorProto.UINT8, []),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    ours, theirs = _run_both(model, {"x": values})
    for name in ("y", "s", "z"):
        np.testing.assert_array_equal(ours[name], theirs[name], err_msg=name)
