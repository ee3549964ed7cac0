"""The integer_matmul pass absorbing ONNX Runtime's u8s8 saturation correction
(graph/passes/integer_matmul.cc, python/webnn/onnx/ops/ort_u8s8.py): where the importer adds
the correction to a uint8 x int8 MatMulInteger / DynamicQuantizeMatMul product whose weights
are raw int8, the correction's nodes go and the cpu kernel computes ORT's pair-saturating sum
itself (cpu/qgemm.h, the pair-saturating tiles). The result must be the same bits as without
the pass (the correction as separate nodes) and, for MatMulInteger's int32, the same integers
as the reference backend. Cases: full-range weights (many saturating pairs per column, a
reduceSum), one risky pair per column (a reshape), weights that never saturate (no correction),
a weight zero point (raw weights differ from the product's: not absorbed), rank-3 inputs, odd
K, zero points as inputs or constants. The reruns force the importer's arithmetic either way on
the AVX2 and generic kernels and with 3 threads.
"""

import os

import numpy as np
import pytest
import rerun

pytest.importorskip("onnx")
import webnn
import webnn.onnx as wo
from onnx import TensorProto, helper, numpy_helper
from webnn.onnx.ops import ort_u8s8

WITHOUT = (
    "canonicalization,qdq_fusion,constant_folding,dynamic_quant_lstm,qdq_tables,"
    "batch_norm_folding,layout_assignment,fake_quantize,epilogue_fusion"
)

# Neither integer pass: the requantized products stay float, corrections as separate nodes.
WITHOUT_QDQ = WITHOUT.replace("qdq_fusion,", "")


def _load(data, backend="cpu", passes="all"):
    old = os.environ.get("WEBNN_PASSES")
    os.environ["WEBNN_PASSES"] = passes
    try:
        context = webnn.ML().create_context(accelerated=False, backend=backend)
        return context, wo.load(context, data)
    finally:
        if old is None:
            os.environ.pop("WEBNN_PASSES", None)
        else:
            os.environ["WEBNN_PASSES"] = old


def _run(data, feeds, backend="cpu", passes="all"):
    context, graph = _load(data, backend, passes)
    return context.compute(graph, feeds), graph.compile_stats


def _weights(rng, kind, k, n):
    if kind == "full":
        return rng.integers(-128, 128, (k, n)).astype(np.int8)
    b = rng.integers(-60, 61, (k, n)).astype(np.int8)  # no pair of these can saturate
    if kind == "one_pair":
        for col in range(n):
            j = 2 * ((5 * col) % (k // 2))
            b[j : j + 2, col] = (127, 100) if col % 2 else (-128, -90)
    return b


def _matmul_integer(b, shape, za_input, zb):
    inits = [numpy_helper.from_array(b, "B")]
    inputs = [helper.make_tensor_value_info("A", TensorProto.UINT8, shape)]
    if za_input:
        inputs.append(helper.make_tensor_value_info("za", TensorProto.UINT8, []))
    else:
        inits.append(numpy_helper.from_array(np.array(131, np.uint8), "za"))
    names = ["A", "B", "za"]
    if zb:
        inits.append(numpy_helper.from_array(np.array(zb, np.int8), "zb"))
        names.append("zb")
    graph = helper.make_graph(
        [helper.make_node("MatMulInteger", names, ["Y"])],
        "g",
        inputs,
        [helper.make_tensor_value_info("Y", TensorProto.INT32, None)],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model.SerializeToString()


def _corrections(stats):
    return stats["ops_after"].get("clamp", 0) + stats["ops_after"].get("gather", 0)


CASES = [
    # weights, A shape, zero point of A as an input, weight zero point
    ("full", [48, 64], True, 0),
    ("full", [2, 24, 63], False, 0),
    ("one_pair", [40, 40], True, 0),
    ("never", [33, 50], False, 0),
    ("full", [48, 32], False, -5),
    # Fewer than 16 rows: rewritten only where the correction is absorbed.
    ("full", [1, 7, 63], False, 0),
    ("one_pair", [1, 40], True, 0),
    ("never", [3, 50], False, 0),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_matmul_integer_same_bits_with_and_without_the_pass(case):
    kind, shape, za_input, zb = CASES[case]
    rng = np.random.default_rng(case)
    b = _weights(rng, kind, shape[-1], 37)
    data = _matmul_integer(b, shape, za_input, zb)
    a = rng.integers(0, 256, shape).astype(np.uint8)
    a.reshape(-1, shape[-1])[0] = 255  # every risky pair saturates in that row
    feeds = {"A": a}
    if za_input:
        feeds["za"] = np.array(131, np.uint8)
    ours, stats = _run(data, feeds)
    unfused, stats0 = _run(data, feeds, passes=WITHOUT)
    corrected = ort_u8s8.saturating_machine() and kind != "never"
    rewritten = int(np.prod(shape[:-1])) >= 16 or (corrected and zb == 0)
    assert stats["passes"].get("integer_matmul", 0) == int(rewritten), stats["passes"]
    assert stats0["passes"].get("integer_matmul", 0) == 0
    np.testing.assert_array_equal(ours["Y"], unfused["Y"])
    want, _ = _run(data, feeds, backend="reference")
    np.testing.assert_array_equal(ours["Y"], want["Y"])
    assert (_corrections(stats0) > 0) == corrected, stats0["ops_after"]
    # Absorbed unless the weights carry a zero point (their raw values are not the product's).
    assert (_corrections(stats) > 0) == (corrected and zb != 0), stats["ops_after"]


@pytest.mark.parametrize("shape", [[2, 20, 96], [1, 7, 96], [1, 96]])
def test_dynamic_quantize_matmul_same_bits_with_and_without_the_pass(shape):
    rng = np.random.default_rng(7)
    b = _weights(rng, "full", 96, 40)
    node = helper.make_node(
        "DynamicQuantizeMatMul", ["A", "B", "bs", "", "bias"], ["Y"], domain="com.microsoft"
    )
    inits = [
        numpy_helper.from_array(b, "B"),
        numpy_helper.from_array(np.array([0.01], np.float32), "bs"),
        numpy_helper.from_array(rng.standard_normal(40).astype(np.float32), "bias"),
    ]
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("A", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
        inits,
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
    )
    model.ir_version = 8
    data = model.SerializeToString()
    feeds = {"A": rng.standard_normal(shape).astype(np.float32)}
    ours, stats = _run(data, feeds)
    unfused, stats0 = _run(data, feeds, passes=WITHOUT)
    # Fewer than 16 rows are rewritten only where the correction is absorbed.
    rewritten = int(np.prod(shape[:-1])) >= 16 or ort_u8s8.saturating_machine()
    assert stats["passes"].get("integer_matmul", 0) == int(rewritten), stats["passes"]
    np.testing.assert_array_equal(ours["Y"].view(np.uint32), unfused["Y"].view(np.uint32))
    assert _corrections(stats) == 0, stats["ops_after"]
    assert (_corrections(stats0) > 0) == ort_u8s8.saturating_machine()
    ort = pytest.importorskip("onnxruntime")
    if not os.environ.get("WEBNN_ONNX_U8S8"):
        # The importer follows ORT's arithmetic on this machine (unless the environment forces
        # one): the integer sums are ORT's, the float epilogue
        # (scale product, bias) within a few float32 roundings.
        session = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
        want = session.run(None, feeds)[0]
        np.testing.assert_allclose(ours["Y"], want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


@pytest.mark.skipif(rerun.nested(), reason="nested")
@pytest.mark.parametrize(
    "env",
    [
        {"WEBNN_ONNX_U8S8": "saturate", "WEBNN_CPU_ISA": "avx2"},
        {"WEBNN_ONNX_U8S8": "saturate", "WEBNN_CPU_ISA": "generic", "WEBNN_NUM_THREADS": "3"},
        {"WEBNN_ONNX_U8S8": "saturate", "WEBNN_NUM_THREADS": "1"},
        {"WEBNN_ONNX_U8S8": "exact"},
    ],
    ids=lambda e: ",".join(f"{k}={v}" for k, v in e.items()),
)
def test_both_u8s8_arithmetics(env):
    rerun.assert_file_passes(__file__, env)


@pytest.mark.parametrize("a_type", [TensorProto.UINT8, TensorProto.INT8])
def test_weights_that_never_saturate_are_exact(a_type):
    # Without VNNI such products run on the pair-saturating tiles (int8 x flipped by 128 to
    # uint8), which are exact when no pair of the weights can saturate: the integers must be
    # the reference's and ORT's.
    rng = np.random.default_rng(11)
    k, n = 75, 40
    b = rng.integers(-64, 65, (k, n)).astype(np.int8)  # |b0| + |b1| <= 128: never saturates
    np_type = np.uint8 if a_type == TensorProto.UINT8 else np.int8
    info = np.iinfo(np_type)
    graph = helper.make_graph(
        [helper.make_node("MatMulInteger", ["A", "B", "za"], ["Y"])],
        "g",
        [helper.make_tensor_value_info("A", a_type, [20, k])],
        [helper.make_tensor_value_info("Y", TensorProto.INT32, None)],
        [numpy_helper.from_array(b, "B"), numpy_helper.from_array(np.array(3, np_type), "za")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    data = model.SerializeToString()
    a = rng.integers(info.min, int(info.max) + 1, (20, k)).astype(np_type)
    a[0] = info.max  # the extremes of every pair
    a[1] = info.min
    ours, stats = _run(data, {"A": a})
    assert stats["passes"].get("integer_matmul", 0) == 1, stats["passes"]
    want = (a.astype(np.int64) - 3) @ b.astype(np.int64)
    np.testing.assert_array_equal(ours["Y"], want)
    ref, _ = _run(data, {"A": a}, backend="reference")
    np.testing.assert_array_equal(ours["Y"], ref["Y"])
    ort = pytest.importorskip("onnxruntime")
    session = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    np.testing.assert_array_equal(ours["Y"], session.run(None, {"A": a})[0])


def _qlinear_matmul(b, shape, x_type, zx, per_column):
    """QLinearMatMul of an x of x_type (zero point zx) by int8 weights b, uint8 output."""
    n = b.shape[1]
    sw = np.full(n if per_column else 1, 0.004, np.float32).reshape(-1 if per_column else [])
    if per_column:
        sw = sw * np.linspace(0.5, 1.5, n).astype(np.float32)
    inits = {"sx": np.array(0.02, np.float32), "zx": np.array(zx, x_type), "w": b, "sw": sw,
             "zw": np.zeros(sw.shape, np.int8), "sy": np.array(2.5, np.float32),
             "zy": np.array(128, np.uint8)}  # fmt: skip
    node = helper.make_node("QLinearMatMul", ["x", "sx", "zx", "w", "sw", "zw", "sy", "zy"], ["Y"])
    elem = TensorProto.UINT8 if x_type == np.uint8 else TensorProto.INT8
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", elem, shape)],
        [helper.make_tensor_value_info("Y", TensorProto.UINT8, None)],
        [numpy_helper.from_array(v, k) for k, v in inits.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model.SerializeToString()


@pytest.mark.parametrize(
    "kind,shape,per_column",
    [("full", [2, 30, 64], False), ("full", [40, 75], True), ("one_pair", [3, 40], True)],
)
def test_qlinear_matmul_absorbs_the_correction(kind, shape, per_column):
    """qdq_fusion takes a requantized uint8 x int8 product with the correction the importer
    adds where ORT saturates: one integer node, the same bytes as the unfused graph (whose
    correction nodes compute ORT's saturation in float32) and as the reference backend."""
    rng = np.random.default_rng(len(shape) + shape[-1])
    b = _weights(rng, kind, shape[-1], 48)
    data = _qlinear_matmul(b, shape, np.uint8, 7, per_column)
    x = rng.integers(0, 256, shape).astype(np.uint8)
    x.reshape(-1, shape[-1])[0] = 255  # every risky pair saturates in that row
    ours, stats = _run(data, {"x": x})
    unfused, stats0 = _run(data, {"x": x}, passes=WITHOUT_QDQ)
    corrected = ort_u8s8.saturating_machine()
    assert stats["passes"].get("qdq_fusion", 0) == 1, stats["passes"]
    assert stats["ops_after"] == {"matmul": 1}, stats["ops_after"]
    assert (_corrections(stats0) > 0) == corrected, stats0["ops_after"]
    np.testing.assert_array_equal(ours["Y"], unfused["Y"])
    ref, _ = _run(data, {"x": x}, backend="reference")
    np.testing.assert_array_equal(ours["Y"], ref["Y"])
    # ONNX's exact product, requantized as ORT does: ours where nothing saturates, and
    # different where the importer follows ORT's saturation (row 0 saturates every risky pair).
    sw = np.float32(0.004) * (np.linspace(0.5, 1.5, 48).astype(np.float32) if per_column else 1)
    m = (np.float32(0.02) * np.asarray(sw, np.float32)).astype(np.float32) / np.float32(2.5)
    exact = (x.astype(np.int64) - 7) @ b.astype(np.int64)
    want = np.clip(np.rint(exact.astype(np.float32) * m.astype(np.float32)) + 128, 0, 255)
    assert np.any(ours["Y"] != want) == corrected


@pytest.mark.parametrize("x_signed", [False, True])
def test_qdq_matmul_absorbs_the_correction_like_ort(x_signed):
    """DQ -> MatMul -> Q with int8 weights (fused to QLinearMatMul by webnn/onnx/qdq.py; int8
    activations are shifted to uint8 as ORT does): one integer node, the unfused graph's bytes,
    and ORT's bytes where the importer follows this machine's ORT."""
    rng = np.random.default_rng(3 + x_signed)
    k, n = 96, 40
    w = _weights(rng, "full", k, n)
    xt = np.int8 if x_signed else np.uint8
    zx = 3 if x_signed else 120
    sx = np.float32(0.03)
    inits = {"sx": np.array(sx), "zx": np.array(zx, xt), "w": w,
             "sw": np.array(0.004, np.float32), "zw": np.array(0, np.int8),
             "sy": np.array(0.5, np.float32), "zy": np.array(128, np.uint8)}  # fmt: skip
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "sx", "zx"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "sx", "zx"], ["xd"]),
        helper.make_node("DequantizeLinear", ["w", "sw", "zw"], ["wd"]),
        helper.make_node("MatMul", ["xd", "wd"], ["p"]),
        helper.make_node("QuantizeLinear", ["p", "sy", "zy"], ["Y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 25, k])],
        [helper.make_tensor_value_info("Y", TensorProto.UINT8, None)],
        [numpy_helper.from_array(v, name) for name, v in inits.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    data = model.SerializeToString()
    x = (rng.standard_normal((2, 25, k)) * 2.5).astype(np.float32)
    ours, stats = _run(data, {"x": x})
    unfused, _ = _run(data, {"x": x}, passes=WITHOUT_QDQ)
    assert stats["passes"].get("qdq_fusion", 0) >= 1, stats["passes"]
    assert _corrections(stats) == 0, stats["ops_after"]
    np.testing.assert_array_equal(ours["Y"], unfused["Y"])
    ort = pytest.importorskip("onnxruntime")
    want = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    if not os.environ.get("WEBNN_ONNX_U8S8"):  # the importer follows this machine's ORT
        np.testing.assert_array_equal(ours["Y"], want)


def qlinear_conv_model(rng, x_shape, o, groups, kernel, weight_max=128, **attrs):
    """QLinearConv of uint8 x by int8 weights in [-weight_max, weight_max) (full range by
    default: many saturating pairs), uint8 out."""
    c = x_shape[1]
    w = rng.integers(-weight_max, weight_max, [o, c // groups] + kernel).astype(np.int8)
    inits = {"sx": np.array(0.02, np.float32), "zx": np.array(9, np.uint8), "w": w,
             "sw": np.array(0.004, np.float32), "zw": np.array(0, np.int8),
             "sy": np.array(1.5, np.float32), "zy": np.array(128, np.uint8),
             "b": rng.integers(-900, 900, o).astype(np.int32)}  # fmt: skip
    node = helper.make_node(
        "QLinearConv", ["x", "sx", "zx", "w", "sw", "zw", "sy", "zy", "b"], ["Y"], group=groups,
        **attrs,
    )  # fmt: skip
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.UINT8, x_shape)],
        [helper.make_tensor_value_info("Y", TensorProto.UINT8, None)],
        [numpy_helper.from_array(v, k) for k, v in inits.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model.SerializeToString()


CONV_CASES = [  # x shape, output channels, groups, kernel, attributes
    ([2, 16, 50], 24, 1, [3], {"pads": [1, 1]}),
    ([1, 12, 41], 18, 3, [5], {"strides": [2], "pads": [2, 1]}),
    ([2, 16, 9, 11], 24, 1, [3, 3], {"pads": [1, 1, 1, 1]}),
    ([1, 10, 12, 9], 16, 2, [3, 2], {"strides": [2, 1], "dilations": [1, 2]}),
    ([1, 7, 8, 8], 20, 1, [1, 1], {}),  # odd K: the last pair holds one product
]


@pytest.mark.parametrize("case", range(len(CONV_CASES)))
def test_qlinear_conv_absorbs_the_correction(case):
    """qdq_fusion takes QLinearConv (1-D through its reshapes, 2-D, grouped, strided, dilated,
    padded with the zero point) with the importer's emulation of ORT's u8s8 saturation: one
    integer conv2d whose sums saturate pairs in ORT's order (kernel position, then channel),
    the same bytes as the unfused graph, the reference backend and this machine's ORT."""
    x_shape, o, groups, kernel, attrs = CONV_CASES[case]
    rng = np.random.default_rng(20 + case)
    data = qlinear_conv_model(rng, x_shape, o, groups, kernel, **attrs)
    x = rng.integers(0, 256, x_shape).astype(np.uint8)
    x[0, :, ...] = np.where(rng.random(x.shape[1:]) < 0.3, 255, x[0])  # saturates more pairs
    ours, stats = _run(data, {"x": x})
    unfused, stats0 = _run(data, {"x": x}, passes=WITHOUT_QDQ)
    corrected = ort_u8s8.saturating_machine()
    assert stats["passes"].get("qdq_fusion", 0) == 1, stats["passes"]
    views = {"reshape": 2} if len(x_shape) == 3 else {}
    assert stats["ops_after"] == {"conv2d": 1, **views}, stats["ops_after"]
    assert (stats0["ops_after"].get("clamp", 0) > 0) == corrected, stats0["ops_after"]
    np.testing.assert_array_equal(ours["Y"], unfused["Y"])
    ref, _ = _run(data, {"x": x}, backend="reference")
    np.testing.assert_array_equal(ours["Y"], ref["Y"])
    ort = pytest.importorskip("onnxruntime")
    if not os.environ.get("WEBNN_ONNX_U8S8"):  # the importer follows this machine's ORT
        want = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, {"x": x})
        np.testing.assert_array_equal(ours["Y"], want[0])


def test_qdq_conv_with_int8_activations_absorbs_the_correction():
    """DQ -> Conv -> Q with int8 activations (ORT shifts them to uint8; qdq.py fuses the group
    to QLinearConv as ORT does): the integer conv2d pads with the shifted zero point."""
    rng = np.random.default_rng(5)
    w = rng.integers(-128, 128, (20, 12, 3, 3)).astype(np.int8)
    inits = {"sx": np.array(0.05, np.float32), "zx": np.array(-4, np.int8), "w": w,
             "sw": np.array(0.004, np.float32), "zw": np.array(0, np.int8),
             "sy": np.array(0.9, np.float32), "zy": np.array(128, np.uint8)}  # fmt: skip
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "sx", "zx"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "sx", "zx"], ["xd"]),
        helper.make_node("DequantizeLinear", ["w", "sw", "zw"], ["wd"]),
        helper.make_node("Conv", ["xd", "wd"], ["p"], pads=[1, 1, 1, 1]),
        helper.make_node("QuantizeLinear", ["p", "sy", "zy"], ["Y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 12, 10, 10])],
        [helper.make_tensor_value_info("Y", TensorProto.UINT8, None)],
        [numpy_helper.from_array(v, name) for name, v in inits.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    data = model.SerializeToString()
    x = (rng.standard_normal((1, 12, 10, 10)) * 4).astype(np.float32)
    ours, stats = _run(data, {"x": x})
    unfused, _ = _run(data, {"x": x}, passes=WITHOUT_QDQ)
    assert stats["passes"].get("qdq_fusion", 0) >= 1, stats["passes"]
    assert stats["ops_after"].get("clamp", 0) == 0, stats["ops_after"]
    np.testing.assert_array_equal(ours["Y"], unfused["Y"])
    ort = pytest.importorskip("onnxruntime")
    if not os.environ.get("WEBNN_ONNX_U8S8"):
        want = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, {"x": x})
        np.testing.assert_array_equal(ours["Y"], want[0])
