"""quantize_static's QOperator format end to end (QLinearConv, QLinearAveragePool, QLinearConcat,
QLinearSigmoid, QLinearMul, QGemm, QLinearSoftmax, uint8 MaxPool / Resize between them) and
com.microsoft QLinearAveragePool alone, compared with ONNX Runtime."""

import numpy as np
import pytest

ort = pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")
import webnn
import webnn.onnx as wo
from onnx import TensorProto, helper
from ort_compare import assert_matches_onnxruntime, exact, graph_model, onnxruntime_outputs

QLINEAR_OPSETS = {"": 17, "com.microsoft": 1}


def _small_cnn(rng):
    inits, nodes = {}, []

    def conv(name, x, cin, cout):
        w = (rng.standard_normal((cout, cin, 3, 3)) * 0.3).astype(np.float32)
        b = (rng.standard_normal(cout) * 0.1).astype(np.float32)
        inits.update({name + "_w": w, name + "_b": b})
        nodes.append(helper.make_node("Conv", [x, name + "_w", name + "_b"], [name], pads=[1] * 4))

    conv("c1", "x", 3, 8)
    nodes.append(helper.make_node("Relu", ["c1"], ["r1"]))
    nodes.append(helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]))
    conv("c2", "p1", 8, 8)
    nodes.append(helper.make_node("AveragePool", ["c2"], ["p2"], kernel_shape=[3, 3], pads=[1] * 4))
    inits["scales"] = np.array([1, 1, 2, 2], np.float32)
    nodes.append(helper.make_node("Resize", ["p2", "", "scales"], ["u"], mode="nearest"))
    nodes.append(helper.make_node("Concat", ["u", "r1"], ["cat"], axis=1))
    nodes.append(helper.make_node("Sigmoid", ["cat"], ["sg"]))
    nodes.append(helper.make_node("Mul", ["cat", "sg"], ["silu"]))
    nodes.append(helper.make_node("GlobalAveragePool", ["silu"], ["gp"]))
    nodes.append(helper.make_node("Flatten", ["gp"], ["f"]))
    gw = (rng.standard_normal((16, 5)) * 0.3).astype(np.float32)
    inits.update(gw=gw, gb=np.zeros(5, np.float32))
    nodes.append(helper.make_node("Gemm", ["f", "gw", "gb"], ["g"]))
    nodes.append(helper.make_node("Softmax", ["g"], ["y"], axis=1))
    x_spec = {"x": np.zeros((1, 3, 16, 16), np.float32)}
    return graph_model(nodes, x_spec, {"y": TensorProto.FLOAT}, inits, {"": 13})


@pytest.mark.parametrize("fmt", ["QOperator", "QDQ"])
@pytest.mark.parametrize("activation", ["QUInt8", "QInt8"])
def test_statically_quantized_cnn_matches_onnxruntime(fmt, activation, tmp_path):
    from onnxruntime.quantization import (
        CalibrationDataReader,
        QuantFormat,
        QuantType,
        quantize_static,
    )

    rng = np.random.default_rng(0)
    src, path = str(tmp_path / "cnn.onnx"), str(tmp_path / f"cnn_{fmt}.onnx")
    onnx.save(_small_cnn(rng), src)
    data = [{"x": rng.standard_normal((1, 3, 16, 16)).astype(np.float32)} for _ in range(4)]

    class Reader(CalibrationDataReader):
        def get_next(self):
            return data.pop() if data else None

    quantize_static(src, path, Reader(), quant_format=getattr(QuantFormat, fmt),
                    activation_type=getattr(QuantType, activation),
                    weight_type=QuantType.QInt8)  # fmt: skip
    if fmt == "QOperator":
        assert "QLinearAveragePool" in {n.op_type for n in onnx.load(path).graph.node}
    x = {"x": rng.standard_normal((1, 3, 16, 16)).astype(np.float32)}
    want = onnxruntime_outputs(path, x)["y"]
    context = webnn.ML().create_context(accelerated=False, backend="cpu")
    got = context.compute(wo.load(context, path), x)["y"]
    step = 1 / 256  # the quantized softmax output's scale
    assert float(np.max(np.abs(got - want))) <= step * 1.01


@pytest.mark.parametrize(
    "attrs,shape,channels_last",
    [
        ({"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}, (1, 4, 7, 9), 0),
        ({"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "count_include_pad": 1}, (2, 3, 6, 6), 0),
        ({"kernel_shape": [2, 3], "strides": [2, 2], "ceil_mode": 1}, (1, 2, 7, 8), 0),
        ({"kernel_shape": [3, 3], "strides": [2, 2], "auto_pad": "SAME_UPPER"}, (1, 5, 6, 3), 1),
        ({"kernel_shape": [3], "pads": [1, 1]}, (2, 3, 11), 0),
    ],
)
def test_qlinear_average_pool_matches_onnxruntime(attrs, shape, channels_last):
    rng = np.random.default_rng(sum(shape))
    x = rng.integers(0, 256, shape).astype(np.uint8)
    inits = {
        "xs": np.array(0.05, np.float32),
        "xz": np.array(128, np.uint8),
        "ys": np.array(0.03, np.float32),
        "yz": np.array(120, np.uint8),
    }
    node = helper.make_node(
        "QLinearAveragePool", ["x", "xs", "xz", "ys", "yz"], ["y"], domain="com.microsoft",
        channels_last=channels_last, **attrs,
    )  # fmt: skip
    model = graph_model([node], {"x": x}, {"y": TensorProto.UINT8}, inits, QLINEAR_OPSETS)
    assert_matches_onnxruntime(model, {"x": x}, check=exact)


@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
def test_qlinear_where_matches_onnxruntime(dtype):
    rng = np.random.default_rng(int(dtype == np.int8))
    info = np.iinfo(dtype)
    feeds = {
        "c": rng.integers(0, 2, (2, 1, 5)).astype(bool),
        "x": rng.integers(info.min, info.max + 1, (2, 3, 5)).astype(dtype),
        "y": rng.integers(info.min, info.max + 1, (1, 3, 5)).astype(dtype),
    }
    zp = {np.uint8: (128, 100, 131), np.int8: (0, -5, 3)}[dtype]
    inits = {
        "xs": np.array(0.031, np.float32),
        "xz": np.array(zp[0], dtype),
        "ys": np.array(0.017, np.float32),
        "yz": np.array(zp[1], dtype),
        "zs": np.array(0.023, np.float32),
        "zz": np.array(zp[2], dtype),
    }
    node = helper.make_node(
        "QLinearWhere", ["c", "x", "xs", "xz", "y", "ys", "yz", "zs", "zz"], ["z"],
        domain="com.microsoft",
    )  # fmt: skip
    t = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    model = graph_model([node], feeds, {"z": t}, inits, QLINEAR_OPSETS)
    assert_matches_onnxruntime(model, feeds, check=exact)


@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
@pytest.mark.parametrize(
    "shape_a,shape_b,b_const",
    [
        ((2, 8, 9, 9), (2, 8, 9, 9), False),
        ((2, 8, 9, 9), (), True),  # hard-swish's x + 3
        ((2, 8, 9, 9), (1,), False),
        ((2, 8, 9, 9), (1, 8, 1, 1), False),  # a per-channel bias: b one value per span
        ((1,), (2, 8, 9, 9), False),
    ],
)
def test_qlinear_add_rounds_like_onnxruntime(dtype, shape_a, shape_b, b_const):
    """QLinearAdd bit-identical to ONNX Runtime's FMA kernel, on scales that make near-ties
    (k/255 ratios, as quantize_static gives a ReLU6 or the constant 3) and on random ones."""
    rng = np.random.default_rng(len(shape_b) + 7 * b_const)
    lo, hi = np.iinfo(dtype).min, np.iinfo(dtype).max
    elem = TensorProto.UINT8 if dtype == np.uint8 else TensorProto.INT8
    for trial in range(6):
        if trial % 2:
            scales = rng.uniform(0.002, 0.1, 3).astype(np.float32)
        else:
            scales = np.array([rng.integers(1, 40) / 255, 3 / 255, 6 / 255], np.float32)
        zps = rng.integers(lo + 40, hi - 40, 3).astype(dtype)
        a = rng.integers(lo, hi + 1, shape_a).astype(dtype)
        b = rng.integers(lo, hi + 1, shape_b).astype(dtype)
        inits = {"sa": scales[0], "za": zps[0], "sb": scales[1], "zb": zps[1],
                 "sc": scales[2], "zc": zps[2]}  # fmt: skip
        feeds = {"a": a}
        if b_const:
            inits["b"] = b
        else:
            feeds["b"] = b
        node = helper.make_node("QLinearAdd", ["a", "sa", "za", "b", "sb", "zb", "sc", "zc"],
                                ["y"], domain="com.microsoft")  # fmt: skip
        model = graph_model([node], feeds, {"y": elem}, inits, QLINEAR_OPSETS)
        assert_matches_onnxruntime(model, feeds, check=exact)


@pytest.mark.parametrize("op_type", ["QuantizeLinear", "DequantizeLinear"])
def test_per_tensor_quantization_ignores_axis(op_type):
    """A per-tensor scale with axis=1 on a 1-D tensor (what quantize_static writes for
    YOLOv8's 1-D head tensors): ONNX uses axis only per axis, and so does ONNX Runtime."""
    rng = np.random.default_rng(3)
    if op_type == "QuantizeLinear":
        x, out = rng.standard_normal(7).astype(np.float32) * 3, TensorProto.UINT8
    else:
        x, out = rng.integers(0, 256, 7).astype(np.uint8), TensorProto.FLOAT
    inits = {"s": np.array(0.05, np.float32), "z": np.array(17, np.uint8)}
    node = helper.make_node(op_type, ["x", "s", "z"], ["y"], axis=1)
    model = graph_model([node], {"x": x}, {"y": out}, inits, {"": 17})
    assert_matches_onnxruntime(model, {"x": x}, check=exact)


def test_qdq_add_and_average_pool_fuse_like_onnxruntime():
    """DQ -> Add -> Q and DQ -> AveragePool -> Q (uint8) run as ONNX Runtime's optimizer runs
    them (QLinearAdd, QLinearAveragePool): bit-identical to ORT's default session. Scales
    k/255 with the constant 3 (hard-swish's x + 3) make the near-ties where the float form
    rounds the other way."""
    rng = np.random.default_rng(8)
    inits = {"s_x": np.array(0.0627451, np.float32), "z_x": np.array(131, np.uint8),
             "three": np.array(255, np.uint8), "s_3": np.array(3 / 255, np.float32),
             "z_0": np.array(0, np.uint8), "s_y": np.array(6 / 255, np.float32),
             "s_p": np.array(0.05, np.float32), "z_p": np.array(7, np.uint8)}  # fmt: skip
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "s_x", "z_x"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "s_x", "z_x"], ["xd"]),
        helper.make_node("DequantizeLinear", ["three", "s_3", "z_0"], ["td"]),
        helper.make_node("Add", ["xd", "td"], ["sum"]),
        helper.make_node("QuantizeLinear", ["sum", "s_y", "z_0"], ["sq"]),
        helper.make_node("DequantizeLinear", ["sq", "s_y", "z_0"], ["sd"]),
        helper.make_node("AveragePool", ["sd"], ["p"], kernel_shape=[3, 3], pads=[1] * 4),
        helper.make_node("QuantizeLinear", ["p", "s_p", "z_p"], ["pq"]),
        helper.make_node("DequantizeLinear", ["pq", "s_p", "z_p"], ["y"]),
    ]
    x = (rng.standard_normal((2, 8, 12, 12)) * 3).astype(np.float32)
    model = graph_model(nodes, {"x": x}, {"y": TensorProto.FLOAT}, inits, {"": 17})
    assert_matches_onnxruntime(model, {"x": x}, check=exact)


@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
@pytest.mark.parametrize("axis,shape", [(-1, (3, 5, 16)), (1, (2, 16, 7))])
def test_qlinear_softmax_and_its_qdq_form_match_onnxruntime(dtype, axis, shape):
    """QLinearSoftmax as ONNX Runtime's table kernel, bit-identical (the float form is one step
    off in ~5% of the elements), alone and fused from DQ -> Softmax -> Q (YOLOv8's DFL head)."""
    rng = np.random.default_rng(abs(axis) + len(shape))
    lo, hi = np.iinfo(dtype).min, np.iinfo(dtype).max
    elem = TensorProto.UINT8 if dtype == np.uint8 else TensorProto.INT8
    x = rng.integers(lo, hi + 1, shape).astype(dtype)
    y_zp = np.array(0 if dtype == np.uint8 else -128, dtype)
    inits = {"sx": np.array(0.0731, np.float32), "zx": np.array(lo + 100, dtype),
             "sy": np.array(1 / 256, np.float32), "zy": y_zp}  # fmt: skip
    node = helper.make_node("QLinearSoftmax", ["x", "sx", "zx", "sy", "zy"], ["y"],
                            domain="com.microsoft", axis=axis, opset=13)  # fmt: skip
    model = graph_model([node], {"x": x}, {"y": elem}, inits, QLINEAR_OPSETS)
    assert_matches_onnxruntime(model, {"x": x}, check=exact)
    nodes = [
        helper.make_node("DequantizeLinear", ["x", "sx", "zx"], ["xd"]),
        helper.make_node("Softmax", ["xd"], ["p"], axis=axis),
        helper.make_node("QuantizeLinear", ["p", "sy", "zy"], ["pq"]),
        helper.make_node("DequantizeLinear", ["pq", "sy", "zy"], ["y"]),
    ]
    qdq = graph_model(nodes, {"x": x}, {"y": TensorProto.FLOAT}, inits, {"": 17})
    assert_matches_onnxruntime(qdq, {"x": x}, check=exact)


_SOFTMAX_CASES = [
    # axis, shape, x_scale, y_scale, y_zp (uint8 / int8)
    (-1, (2, 3, 400), 0.0731, 1 / 256, (0, -128)),
    (-1, (4, 33), 0.5, 1 / 255, (3, 0)),
    (-1, (40, 5), 0.5, 1 / 256, (0, 40)),  # int8: rint(ratio) + y_zp up to 296, saturated
    (0, (7, 5, 3), 0.013, 0.0039, (10, 40)),
    (2, (2, 3, 17, 4), 0.21, 1 / 100, (0, -20)),
    (-1, (3, 1), 0.1, 1 / 256, (0, -128)),  # one-element rows: every value is the top
    (-1, (2, 1024), 1.7, 1 / 256, (0, -128)),  # x_scale large: most of the table underflows
]


@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
@pytest.mark.parametrize("case", range(len(_SOFTMAX_CASES)))
def test_qlinear_softmax_random_matches_onnxruntime_exactly(dtype, case):
    """The float32-op decomposition of QLinearSoftmax (ops/quantization.py) against ONNX
    Runtime's kernel on full-range random inputs: bit-identical, for both types, several axes
    and row lengths, int8 outputs past 127 before saturation (ORT 1.32 saturates them on every
    axis; the wrap the int32 form modelled differed there) and rows of one element."""
    axis, shape, sx, sy, zps = _SOFTMAX_CASES[case]
    rng = np.random.default_rng(100 + case)
    lo, hi = np.iinfo(dtype).min, np.iinfo(dtype).max
    elem = TensorProto.UINT8 if dtype == np.uint8 else TensorProto.INT8
    x = rng.integers(lo, hi + 1, shape).astype(dtype)
    x.reshape(-1)[:: max(1, x.size // 7)] = hi  # some rows reach the type's top
    y_zp = np.array(zps[0] if dtype == np.uint8 else zps[1], dtype)
    inits = {"sx": np.array(sx, np.float32), "zx": np.array(lo + 7, dtype),
             "sy": np.array(sy, np.float32), "zy": y_zp}  # fmt: skip
    node = helper.make_node("QLinearSoftmax", ["x", "sx", "zx", "sy", "zy"], ["y"],
                            domain="com.microsoft", axis=axis, opset=13)  # fmt: skip
    model = graph_model([node], {"x": x}, {"y": elem}, inits, QLINEAR_OPSETS)
    assert_matches_onnxruntime(model, {"x": x}, check=exact)


@pytest.mark.parametrize("y_zp", [-128, 0])
def test_qlinear_softmax_from_int8_qdq_run_as_uint8_saturates(y_zp):
    """An int8 Q -> DQ -> Softmax -> Q -> DQ chain that ORT's optimizer runs as uint8 (+128,
    webnn_from_qdq): saturated; with y_zp 0 most row maxima land above 127. Bit-identical to
    ORT."""
    rng = np.random.default_rng(7 - y_zp)
    xf = (rng.standard_normal((3, 4, 64)) * 4).astype(np.float32)
    inits = {"sx": np.array(0.05, np.float32), "zx": np.array(-3, np.int8),
             "sy": np.array(1 / 256, np.float32), "zy": np.array(y_zp, np.int8)}  # fmt: skip
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "sx", "zx"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "sx", "zx"], ["xd"]),
        helper.make_node("Softmax", ["xd"], ["p"], axis=-1),
        helper.make_node("QuantizeLinear", ["p", "sy", "zy"], ["pq"]),
        helper.make_node("DequantizeLinear", ["pq", "sy", "zy"], ["y"]),
    ]
    model = graph_model(nodes, {"x": xf}, {"y": TensorProto.FLOAT}, inits, {"": 17})
    assert_matches_onnxruntime(model, {"x": xf}, check=exact)
