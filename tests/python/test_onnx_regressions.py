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
    "direction,batch,steps,per_channel,full_range",
    [
        ("forward", 1, 5, False, False),
        ("bidirectional", 1, 4, True, False),
        ("reverse", 1, 3, False, False),
        ("forward", 2, 3, False, False),
        ("forward", 1, 5, False, True),
        ("bidirectional", 1, 3, True, True),
    ],
)
def test_dynamic_quantize_lstm(direction, batch, steps, per_channel, full_range):
    """com.microsoft DynamicQuantizeLSTM, which ONNX Runtime's quantize_dynamic makes of every
    LSTM (silero VAD v6 of faster-whisper, ddddocr's common_old.onnx): was unsupported. Its
    run-time uint8 quantization of X and of each step's h must be reproduced, a float LSTM on
    dequantized weights is off by ~1e-2. Compared with a single-threaded ONNX Runtime: with
    more threads and batch > 1 it quantizes h per slice of the batch, one slice per thread."""
    rng = np.random.default_rng(steps)
    size, hidden = 6, 5
    dirs = 2 if direction == "bidirectional" else 1
    # 7-bit weights (quantize_dynamic's reduce_range) never saturate ONNX Runtime's u8s8 pair
    # sums; full-range ones do on CPUs without VNNI, which the importer reproduces there
    # (webnn/onnx/ops/ort_u8s8.py), so both must match ORT on any machine.
    lo, hi = (-128, 128) if full_range else (-63, 64)
    size = 16 if full_range else size  # enough pairs that some saturate
    w = rng.integers(lo, hi, (dirs, size, 4 * hidden)).astype(np.int8)
    r = rng.integers(lo, hi, (dirs, hidden, 4 * hidden)).astype(np.int8)
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


def _u8s8_weights(rng, k, n):
    """Full-range int8 weights with pairs of large same-sign values (what saturates ONNX
    Runtime's u8s8 pair sums on CPUs without VNNI)."""
    b = rng.integers(-128, 128, (k, n)).astype(np.int8)
    b[0:2, 0] = 127
    b[2:4, 1] = -128
    return b


@pytest.mark.parametrize("rows", [5, 24])  # 2 x 24 rows: the cpu backend's int8 GEMM
@pytest.mark.parametrize("a_zero,b_zero,k", [(0, 0, 64), (137, 0, 63), (137, 3, 7), (0, -5, 32)])
def test_matmul_integer_u8s8_matches_onnxruntime_exactly(a_zero, b_zero, k, rows):
    """uint8 x int8 MatMulInteger (quantize_dynamic's form) with full-range weights: ONNX
    Runtime's kernels on CPUs without VNNI saturate adjacent product pairs to int16; the
    importer reproduces that where they do (webnn/onnx/ops/ort_u8s8.py) and is exact elsewhere,
    so the int32 result must equal ORT's on any machine."""
    rng = np.random.default_rng(k)
    b = _u8s8_weights(rng, k, 7)
    inits = [
        numpy_helper.from_array(b, "B"),
        numpy_helper.from_array(np.array(a_zero, np.uint8), "za"),
        numpy_helper.from_array(np.array(b_zero, np.int8), "zb"),
    ]
    graph = helper.make_graph(
        [helper.make_node("MatMulInteger", ["A", "B", "za", "zb"], ["Y"])],
        "g",
        [helper.make_tensor_value_info("A", TensorProto.UINT8, [2, rows, k])],
        [helper.make_tensor_value_info("Y", TensorProto.INT32, [2, rows, 7])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    a = rng.integers(0, 256, (2, rows, k)).astype(np.uint8)
    a[:, :, 0:4] = 255
    ours, theirs = _run_both(model, {"A": a})
    np.testing.assert_array_equal(ours["Y"], theirs["Y"])


@pytest.mark.parametrize("risky_per_column", [1, 2])
def test_matmul_integer_u8s8_few_saturating_pairs_matches_onnxruntime(risky_per_column):
    """Weights where each column has one or two pairs that can saturate ORT's u8s8 kernel
    (quantize_dynamic's LSTM weights, e.g. tashkeel's): the importer's correction then has one
    slot per column (a reshape, no reduction) or two (a sum over the middle axis)."""
    rng = np.random.default_rng(risky_per_column)
    k, n = 40, 9
    b = rng.integers(-60, 61, (k, n)).astype(np.int8)  # pairs of these never saturate
    for col in range(n):
        for r in range(risky_per_column):
            j = 2 * ((3 * col + 7 * r) % (k // 2))
            b[j : j + 2, col] = (127, 100) if (col + r) % 2 else (-128, -90)
    inits = [numpy_helper.from_array(b, "B"), numpy_helper.from_array(np.array(9, np.uint8), "za")]
    graph = helper.make_graph(
        [helper.make_node("MatMulInteger", ["A", "B", "za"], ["Y"])],
        "g",
        [helper.make_tensor_value_info("A", TensorProto.UINT8, [3, k])],
        [helper.make_tensor_value_info("Y", TensorProto.INT32, [3, n])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    a = rng.integers(0, 256, (3, k)).astype(np.uint8)
    a[0] = 255  # every risky pair saturates in row 0
    ours, theirs = _run_both(model, {"A": a})
    np.testing.assert_array_equal(ours["Y"], theirs["Y"])


def test_qlinear_matmul_u8s8_full_range_matches_onnxruntime():
    """QLinearMatMul uint8 x int8 (what ONNX Runtime fuses a QDQ MatMul into): within one
    output step of ORT, and bit-identical here (the requantization is ORT's)."""
    rng = np.random.default_rng(3)
    k, n = 48, 6
    b = _u8s8_weights(rng, k, n)
    f = np.float32
    inits = [
        numpy_helper.from_array(np.array(0.02, f), "as"),
        numpy_helper.from_array(np.array(120, np.uint8), "az"),
        numpy_helper.from_array(b, "B"),
        numpy_helper.from_array(np.array(0.01, f), "bs"),
        numpy_helper.from_array(np.array(0, np.int8), "bz"),
        numpy_helper.from_array(np.array(2.5, f), "ys"),
        numpy_helper.from_array(np.array(128, np.uint8), "yz"),
    ]
    node = helper.make_node("QLinearMatMul", ["A", "as", "az", "B", "bs", "bz", "ys", "yz"], ["Y"])
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("A", TensorProto.UINT8, [4, k])],
        [helper.make_tensor_value_info("Y", TensorProto.UINT8, [4, n])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    a = rng.integers(0, 256, (4, k)).astype(np.uint8)
    a[:, 0:4] = 255
    ours, theirs = _run_both(model, {"A": a})
    np.testing.assert_array_equal(ours["Y"], theirs["Y"])


@pytest.mark.parametrize(
    "channels,kernel,group,pad,x_zero",
    [(6, 1, 1, 0, 0), (3, 3, 1, 1, 17), (4, 3, 2, 1, 200), (5, 2, 1, 0, 3), (8, 3, 8, 1, 90)],
)
def test_qlinear_conv_u8s8_full_range_matches_onnxruntime(channels, kernel, group, pad, x_zero):
    """QLinearConv uint8 x int8 with full-range weights (quantize_static without reduce_range,
    fused from QDQ): ONNX Runtime's kernels on CPUs without VNNI saturate product pairs along
    (kernel position, channel), padding with the zero point; its depthwise kernel does not.
    Bit-identical to ORT on any machine."""
    rng = np.random.default_rng(channels * kernel)
    out_channels, size = 8, 6
    x = rng.integers(0, 256, (1, channels, size, size)).astype(np.uint8)
    x[:, :, :2, :2] = 255
    w = rng.integers(-128, 128, (out_channels, channels // group, kernel, kernel)).astype(np.int8)
    w[0], w[1] = 127, -128
    f = np.float32
    inits = [
        numpy_helper.from_array(w, "w"),
        numpy_helper.from_array(np.array(0.05, f), "xs"),
        numpy_helper.from_array(np.array(x_zero, np.uint8), "xz"),
        numpy_helper.from_array(np.array(0.01, f), "ws"),
        numpy_helper.from_array(np.array(0, np.int8), "wz"),
        numpy_helper.from_array(np.array(2.0, f), "ys"),
        numpy_helper.from_array(np.array(128, np.uint8), "yz"),
    ]
    node = helper.make_node(
        "QLinearConv",
        ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"],
        ["y"],
        group=group,
        pads=[pad] * 4,
    )
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.UINT8, list(x.shape))],
        [helper.make_tensor_value_info("y", TensorProto.UINT8, None)],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    ours, theirs = _run_both(model, {"x": x})
    np.testing.assert_array_equal(ours["y"], theirs["y"])


@pytest.mark.parametrize(
    "attrs",
    [
        {"kernel_shape": [2, 2], "strides": [2, 2]},
        {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]},
        {"kernel_shape": [3, 3], "strides": [1, 1], "dilations": [2, 2]},
        {"kernel_shape": [3, 2], "strides": [2, 1], "ceil_mode": 1},
        {"kernel_shape": [2, 2], "strides": [2, 2], "storage_order": 1},
        {"kernel_shape": [3], "strides": [2], "pads": [1, 1]},
    ],
)
def test_max_pool_indices_match_onnxruntime(attrs):
    """MaxPool's Indices output (SegNet-style encoders feed it to MaxUnpool): was refused.
    Pads, dilations, ceil mode, column-major storage order and 1-D pools, exact against ORT."""
    shape = [2, 3, 11] if len(attrs["kernel_shape"]) == 1 else [2, 3, 7, 9]
    graph = helper.make_graph(
        [helper.make_node("MaxPool", ["x"], ["y", "i"], **attrs)],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
            helper.make_tensor_value_info("i", TensorProto.INT64, None),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)])
    model.ir_version = 8
    x = np.random.default_rng(len(str(attrs))).standard_normal(shape).astype(np.float32)
    ours, theirs = _run_both(model, {"x": x})
    np.testing.assert_array_equal(ours["y"], theirs["y"])
    np.testing.assert_array_equal(ours["i"], theirs["i"])


@pytest.mark.parametrize(
    "attrs",
    [
        {},
        {"strides": [2, 2, 2]},
        {"strides": [2, 1, 2], "pads": [1, 0, 1, 1, 0, 0], "output_padding": [1, 0, 1]},
        {"dilations": [2, 1, 1], "group": 2},
        {"strides": [3, 2, 1], "pads": [1, 1, 0, 0, 1, 0]},
    ],
)
def test_conv_transpose_3d_matches_onnxruntime(attrs):
    """3-D ConvTranspose (volumetric decoders, 3-D U-Nets): was refused; now decomposed over
    the depth axis into 2-D transposed convolutions."""
    rng = np.random.default_rng(len(str(attrs)))
    group = attrs.get("group", 1)
    x = rng.standard_normal((2, 4, 3, 5, 4)).astype(np.float32)
    w = rng.standard_normal((4, 3, 3, 2, 3)).astype(np.float32)
    b = rng.standard_normal(3 * group).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"], **attrs)],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    ours, theirs = _run_both(model, {"x": x})
    assert ours["y"].shape == theirs["y"].shape
    np.testing.assert_allclose(ours["y"], theirs["y"], rtol=1e-5, atol=1e-5)


def test_conv_integer_run_time_per_channel_w_zero_point():
    """ConvInteger whose per-output-channel w_zero_point is a graph input (the onnx node test
    test_convinteger_with_padding, unclaimed until 0-d inputs counted as tensors): the
    run-time zero point was subtracted along the filter's last axis (numpy broadcasting of a
    1-D operand) instead of per output channel. ORT refuses per-channel zero points here, so
    the expectation is numpy's exact integer convolution."""
    rng = np.random.default_rng(5)
    x = rng.integers(0, 256, (1, 3, 6, 5)).astype(np.uint8)
    w = rng.integers(0, 256, (4, 3, 3, 3)).astype(np.uint8)  # kw = 3 < 4 output channels
    x_zp, w_zp = np.uint8(7), rng.integers(0, 256, 4).astype(np.uint8)
    u8 = TensorProto.UINT8
    graph = helper.make_graph(
        [helper.make_node("ConvInteger", ["x", "w", "xz", "wz"], ["y"], pads=[1, 1, 1, 1])],
        "g",
        [
            helper.make_tensor_value_info("x", u8, list(x.shape)),
            helper.make_tensor_value_info("w", u8, list(w.shape)),
            helper.make_tensor_value_info("xz", u8, []),
            helper.make_tensor_value_info("wz", u8, [4]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.INT32, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    xs = np.pad(x.astype(np.int64) - int(x_zp), [(0, 0), (0, 0), (1, 1), (1, 1)])
    ws = w.astype(np.int64) - w_zp.astype(np.int64).reshape(4, 1, 1, 1)
    want = np.zeros((1, 4, 6, 5), np.int64)
    for i in range(6):
        for j in range(5):
            want[0, :, i, j] = np.einsum("chw,ochw->o", xs[0, :, i : i + 3, j : j + 3], ws)
    context = webnn.ML().create_context(accelerated=False, backend="cpu")
    feeds = {"x": x, "w": w, "xz": np.asarray(x_zp), "wz": w_zp}
    got = context.compute(wo.load(context, model.SerializeToString()), feeds)["y"]
    np.testing.assert_array_equal(got, want)


def _dropout_model(training_input):
    f32 = TensorProto.FLOAT
    inputs = [helper.make_tensor_value_info("x", f32, [2, 3])]
    inits = [numpy_helper.from_array(np.float32(0.25), "ratio")]
    if training_input:
        inputs.append(helper.make_tensor_value_info("t", TensorProto.BOOL, []))
    graph = helper.make_graph(
        [helper.make_node("Dropout", ["x", "ratio", "t"], ["y"])],
        "g",
        inputs,
        [helper.make_tensor_value_info("y", f32, None)],
        inits if training_input else inits + [numpy_helper.from_array(np.array(True), "t")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_dropout_training_mode_is_refused_not_the_identity():
    """Dropout with training_mode true (a constant, or a graph input) was imported as the
    identity unless its mask output was used: a silently wrong result for a random op."""
    context = webnn.ML().create_context(accelerated=False, backend="cpu")
    for training_input in (False, True):
        with pytest.raises(wo.OnnxImportError, match="Dropout|training_mode"):
            wo.load(context, _dropout_model(training_input).SerializeToString())
    # training_mode false given at import: the identity, as ONNX Runtime computes it
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    model = _dropout_model(True)
    graph = wo.load(context, model.SerializeToString(), constants={"t": np.array(False)})
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    want = session.run(None, {"x": x, "t": np.array(False)})[0]
    np.testing.assert_array_equal(context.compute(graph, {"x": x})["y"], want)


@pytest.mark.parametrize(
    "op,attrs,shape",
    [
        ("MaxPool", {}, [1, 2, 1, 6]),  # the PP-OCR classifier on a 32-pixel-high line
        ("MaxPool", {}, [1, 1, 3, 3]),  # kernel 4 over 3 rows and columns
        ("AveragePool", {}, [1, 2, 1, 6]),
        ("MaxPool", {"pads": [0, 1, 0, 0]}, [1, 1, 1, 5]),  # the window reaches a pad too
        ("LpPool", {"p": 2}, [1, 1, 1, 4]),
    ],
)
def test_pool_window_longer_than_the_input_gives_one_output_like_onnxruntime(op, attrs, shape):
    """A pooling window longer than the (padded) input by less than a stride: ONNX Runtime's
    integer arithmetic truncates (span / stride) toward zero and gives one output over the
    elements that exist, the importer's floor gave zero and the builder refused the node (with
    a message saying [0,n] must equal the floor-rounded [0,n]). Found by
    test_threads_models.py feeding the PP-OCR classifier a 32-pixel-high line."""
    kernel = [2, 2] if shape[2] == 1 else [4, 4]
    node = helper.make_node(op, ["x"], ["y"], kernel_shape=kernel, strides=[2, 2], **attrs)
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    x = np.random.default_rng(2).standard_normal(shape).astype(np.float32)
    ours, theirs = _run_both(model, {"x": x})
    assert ours["y"].shape == theirs["y"].shape and theirs["y"].size > 0
    np.testing.assert_allclose(ours["y"], theirs["y"], rtol=1e-6, atol=1e-6)
