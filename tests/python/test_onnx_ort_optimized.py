"""Models as ONNX Runtime's graph optimizer saves them (SessionOptions.optimized_model_filepath,
level ORT_ENABLE_EXTENDED): com.microsoft FusedConv / FusedGemm (fused activations and residual
adds) and, for quantize_dynamic models, MatMulIntegerToFloat / DynamicQuantizeMatMul. Each saved
model is imported and compared with ONNX Runtime running that same saved file, on both backends."""

import numpy as np
import pytest

ort = pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")
import webnn
import webnn.onnx as wo
from onnx import TensorProto, helper
from ort_compare import assert_matches_onnxruntime, graph_model, within_peak

MS_OPSETS = {"": 17, "com.microsoft": 1}


def _save_optimized(model, tmp_path, name):
    src, dst = str(tmp_path / f"{name}.onnx"), str(tmp_path / f"{name}_opt.onnx")
    onnx.save(model, src)
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    options.optimized_model_filepath = dst
    ort.InferenceSession(src, options, providers=["CPUExecutionProvider"])
    return dst


def _compare(path, feeds, expect_ops, rtol=1e-5):
    ops = {n.op_type for n in onnx.load(path).graph.node if n.domain == "com.microsoft"}
    assert set(expect_ops) <= ops, ops
    assert_matches_onnxruntime(path, feeds, check=within_peak(rtol))


def _conv(name, x, cin, cout, rng, inits, k=3):
    w = (rng.standard_normal((cout, cin, k, k)) * 0.3).astype(np.float32)
    b = rng.standard_normal(cout).astype(np.float32) * 0.1
    inits.update({f"{name}_w": w, f"{name}_b": b})
    return helper.make_node("Conv", [x, f"{name}_w", f"{name}_b"], [name], pads=[1, 1, 1, 1])


@pytest.mark.parametrize("act", ["Relu", "Clip", "LeakyRelu", "HardSigmoid", "Sigmoid", "Tanh"])
def test_fused_conv_and_gemm_match_onnxruntime(act, tmp_path):
    rng = np.random.default_rng(len(act))
    inits, nodes = {}, []
    nodes.append(_conv("c1", "x", 3, 8, rng, inits))
    attrs = {"LeakyRelu": {"alpha": 0.2}, "HardSigmoid": {"alpha": 0.3, "beta": 0.4}}.get(act, {})
    act_inputs = ["c1"]
    if act == "Clip":
        inits.update(lo=np.array(0.0, np.float32), hi=np.array(1.5, np.float32))
        act_inputs += ["lo", "hi"]
    nodes.append(helper.make_node(act, act_inputs, ["a1"], **attrs))
    nodes.append(_conv("c2", "a1", 8, 8, rng, inits))
    nodes.append(helper.make_node("Add", ["c2", "a1"], ["s2"]))  # residual: FusedConv's Z
    nodes.append(helper.make_node("Relu", ["s2"], ["a2"]))
    nodes.append(helper.make_node("GlobalAveragePool", ["a2"], ["p"]))
    nodes.append(helper.make_node("Flatten", ["p"], ["f"]))
    w = (rng.standard_normal((8, 5)) * 0.5).astype(np.float32)
    inits.update(gw=w, gb=np.ones(5, np.float32))
    nodes.append(helper.make_node("Gemm", ["f", "gw", "gb"], ["g"]))
    nodes.append(helper.make_node("Relu", ["g"], ["y"]))
    x_spec = {"x": np.zeros((2, 3, 12, 10), np.float32)}
    model = graph_model(nodes, x_spec, {"y": TensorProto.FLOAT}, inits)
    path = _save_optimized(model, tmp_path, f"cnn_{act}")
    x = rng.standard_normal((2, 3, 12, 10)).astype(np.float32)
    _compare(path, {"x": x}, ["FusedConv", "FusedGemm"])


@pytest.mark.parametrize("per_channel", [False, True])
def test_dynamic_quantized_mlp_as_optimized_by_onnxruntime(per_channel, tmp_path):
    """quantize_dynamic of MatMul + Add layers, then ORT's optimizer: DynamicQuantizeMatMul
    (bias fused) and MatMulIntegerToFloat."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    rng = np.random.default_rng(7 + per_channel)
    inits, nodes = {}, []
    x = "x"
    for i, (k, m) in enumerate([(32, 48), (48, 40), (40, 16)]):
        w = (rng.standard_normal((k, m)) / np.sqrt(k)).astype(np.float32)
        b = rng.standard_normal(m).astype(np.float32) * 0.1
        inits.update({f"w{i}": w, f"b{i}": b})
        nodes.append(helper.make_node("MatMul", [x, f"w{i}"], [f"m{i}"]))
        nodes.append(helper.make_node("Add", [f"m{i}", f"b{i}"], [f"a{i}"]))
        x = f"a{i}"
        if i < 2:
            nodes.append(helper.make_node("Relu", [x], [f"r{i}"]))
            x = f"r{i}"
    x_spec = {"x": np.zeros((2, 6, 32), np.float32)}
    model = graph_model(nodes, x_spec, {x: TensorProto.FLOAT}, inits)
    src = str(tmp_path / "mlp.onnx")
    onnx.save(model, src)
    quantized = str(tmp_path / "mlp_int8.onnx")
    quantize_dynamic(src, quantized, weight_type=QuantType.QInt8, per_channel=per_channel)
    path = _save_optimized(onnx.load(quantized), tmp_path, "mlp_int8")
    feeds = {"x": rng.standard_normal((2, 6, 32)).astype(np.float32)}
    _compare(path, feeds, ["DynamicQuantizeMatMul"])


def _one_node(node, feeds, inits):
    return graph_model([node], feeds, {"y": TensorProto.FLOAT}, inits, MS_OPSETS)


def test_fused_conv_with_residual_input_matches_onnxruntime(tmp_path):
    rng = np.random.default_rng(3)
    feeds = {
        "x": rng.standard_normal((1, 4, 7, 9)).astype(np.float32),
        "z": rng.standard_normal((1, 6, 4, 5)).astype(np.float32),
    }
    inits = {
        "w": (rng.standard_normal((6, 2, 3, 3)) * 0.3).astype(np.float32),
        "b": rng.standard_normal(6).astype(np.float32),
    }
    node = helper.make_node(
        "FusedConv", ["x", "w", "b", "z"], ["y"], domain="com.microsoft", activation="LeakyRelu",
        activation_params=[0.1], strides=[2, 2], pads=[1, 1, 1, 1], group=2,
    )  # fmt: skip
    path = str(tmp_path / "fused_conv_z.onnx")
    onnx.save(_one_node(node, feeds, inits), path)
    _compare(path, feeds, ["FusedConv"])


@pytest.mark.parametrize("per_column,zero_points", [(False, False), (True, True)])
def test_matmul_integer_to_float_matches_onnxruntime(per_column, zero_points, tmp_path):
    rng = np.random.default_rng(4 + per_column)
    k, m = 24, 10
    feeds = {
        "a": rng.integers(0, 256, (2, 5, k)).astype(np.uint8),
        "a_scale": np.array(0.03, np.float32),
    }
    inits = {
        "b": rng.integers(-128, 128, (k, m)).astype(np.int8),
        "b_scale": (rng.uniform(0.01, 0.05, m) if per_column else np.array([0.02])).astype(
            np.float32
        ),
        "bias": rng.standard_normal(m).astype(np.float32),
    }
    inputs = ["a", "b", "a_scale", "b_scale", "", "", "bias"]
    if zero_points:
        feeds["a_zp"] = np.array(131, np.uint8)
        inits["b_zp"] = rng.integers(-3, 4, m).astype(np.int8)
        inputs[4:6] = ["a_zp", "b_zp"]
    node = helper.make_node("MatMulIntegerToFloat", inputs, ["y"], domain="com.microsoft")
    path = str(tmp_path / "mmitf.onnx")
    onnx.save(_one_node(node, feeds, inits), path)
    _compare(path, feeds, ["MatMulIntegerToFloat"])


def test_fused_activation_unknown_is_refused(tmp_path):
    feeds = {"x": np.zeros((1, 1, 3, 3), np.float32)}
    inits = {"w": np.ones((1, 1, 1, 1), np.float32)}
    node = helper.make_node("FusedConv", ["x", "w"], ["y"], domain="com.microsoft",
                            activation="Softplus")  # fmt: skip
    context = webnn.ML().create_context(accelerated=False, backend="cpu")
    with pytest.raises(wo.OnnxImportError, match="Softplus"):
        wo.load(context, _one_node(node, feeds, inits))


@pytest.mark.parametrize(
    "per_column,zero_points,mask,past,causal",
    [
        (False, False, None, 0, False),
        (True, True, "2d", 0, False),
        (False, True, "lengths", 0, False),
        (True, False, "2d", 3, True),
    ],
)
def test_q_attention_matches_onnxruntime(per_column, zero_points, mask, past, causal, tmp_path):
    """com.microsoft QAttention (quantize_dynamic of a model with fused Attention)."""
    rng = np.random.default_rng(per_column * 4 + zero_points * 2 + past)
    batch, seq, hidden, heads = 2, 5, 16, 2
    total = past + seq
    feeds = {
        "x": rng.integers(0, 256, (batch, seq, hidden)).astype(np.uint8),
        "x_scale": np.array(0.02, np.float32),
    }
    inits = {
        "w": rng.integers(-128, 128, (hidden, 3 * hidden)).astype(np.int8),
        "bias": rng.standard_normal(3 * hidden).astype(np.float32),
        "w_scale": (
            rng.uniform(0.005, 0.02, 3 * hidden) if per_column else np.array([0.01])
        ).astype(np.float32),
    }
    inputs = ["x", "w", "bias", "x_scale", "w_scale", "", "", "", ""]
    if mask == "2d":
        m = np.ones((batch, total), np.int32)
        m[1, -2:] = 0
        inits["m"] = m
        inputs[5] = "m"
    elif mask == "lengths":
        inits["m"] = np.array([total, total - 2], np.int32)
        inputs[5] = "m"
    if zero_points:
        feeds["x_zp"] = np.array(120, np.uint8)
        inputs[6] = "x_zp"
    if past:
        feeds["past"] = rng.standard_normal((2, batch, heads, past, hidden // heads)).astype(
            np.float32
        )
        inputs[8] = "past"
    while not inputs[-1]:
        inputs.pop()
    node = helper.make_node(
        "QAttention", inputs, ["y", "present"] if past else ["y"], domain="com.microsoft",
        num_heads=heads, unidirectional=int(causal),
    )  # fmt: skip
    model = _one_node(node, feeds, inits)
    if past:
        model.graph.output.append(helper.make_tensor_value_info("present", TensorProto.FLOAT, None))
    path = str(tmp_path / "qattention.onnx")
    onnx.save(model, path)
    _compare(path, feeds, ["QAttention"])


def test_quantized_fused_minilm_matches_onnxruntime(tmp_path):
    """paraphrase-MiniLM-L3 fused by ORT's transformer optimizer (Attention,
    EmbedLayerNormalization, SkipLayerNormalization, BiasGelu), then quantize_dynamic: QAttention
    and QEmbedLayerNormalization; compared with ORT's default (optimized) session."""
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.transformers import optimizer
    from onnxruntime.transformers.fusion_options import FusionOptions
    from test_onnx_models import _minilm_feeds, _minilm_path

    fused = optimizer.optimize_model(
        _minilm_path(), model_type="bert", num_heads=12, hidden_size=384, opt_level=0,
        optimization_options=FusionOptions("bert"),
    )  # fmt: skip
    src, path = str(tmp_path / "fused.onnx"), str(tmp_path / "fused_int8.onnx")
    fused.save_model_to_file(src)
    quantize_dynamic(src, path, weight_type=QuantType.QInt8,
                     extra_options={"DefaultTensorType": TensorProto.FLOAT})  # fmt: skip
    feeds = _minilm_feeds(path)
    ops = {n.op_type for n in onnx.load(path).graph.node}
    assert {"QAttention", "QEmbedLayerNormalization"} <= ops
    shapes = {k: list(v.shape) for k, v in feeds.items()}
    assert_matches_onnxruntime(path, feeds, check=within_peak(1e-3), input_shapes=shapes)
