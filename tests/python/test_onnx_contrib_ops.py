"""com.microsoft operators beyond the transformer optimizer's (tested in test_onnx_models.py),
each built with onnx.helper and compared with ONNX Runtime's own kernel."""

import numpy as np
import pytest

ort = pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")
import webnn
import webnn.onnx as wo
from onnx import TensorProto, helper, numpy_helper


@pytest.mark.parametrize(
    "bits,k,n,block,zero_points,bias",
    [
        (4, 64, 12, 32, None, False),
        (4, 72, 10, 16, "packed", True),  # K not a multiple of the block
        (8, 48, 6, 16, "packed", False),
        (4, 64, 8, 32, "float", False),
        (2, 64, 8, 16, "packed", False),
    ],
)
def test_matmul_nbits_matches_onnxruntime(bits, k, n, block, zero_points, bias):
    """MatMulNBits (weight-only 2/4/8-bit MatMul, what ORT's matmul_nbits_quantizer emits):
    packed weights, per-block scales, default / packed / float zero points, optional bias."""
    rng = np.random.default_rng(bits * k + n)
    blocks = -(-k // block)
    packed = rng.integers(0, 256, (n, blocks, block * bits // 8)).astype(np.uint8)
    scales = rng.uniform(0.01, 0.05, (n * blocks,)).astype(np.float32)
    inits = [numpy_helper.from_array(packed, "B"), numpy_helper.from_array(scales, "S")]
    inputs = ["A", "B", "S"]
    if zero_points == "packed":
        zp = rng.integers(0, 256, (n * -(-blocks * bits // 8),)).astype(np.uint8)
        inits.append(numpy_helper.from_array(zp, "Z"))
        inputs.append("Z")
    elif zero_points == "float":
        zp = rng.uniform(0, 15, (n * blocks,)).astype(np.float32)
        inits.append(numpy_helper.from_array(zp, "Z"))
        inputs.append("Z")
    if bias:
        inputs += [""] * (5 - len(inputs)) + ["bias"]
        inits.append(numpy_helper.from_array(rng.standard_normal(n).astype(np.float32), "bias"))
    node = helper.make_node(
        "MatMulNBits", inputs, ["Y"], domain="com.microsoft", K=k, N=n, bits=bits,
        block_size=block,
    )  # fmt: skip
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("A", TensorProto.FLOAT, [2, 3, k])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
        inits,
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
    )
    model.ir_version = 8
    a = rng.standard_normal((2, 3, k)).astype(np.float32)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (want,) = session.run(None, {"A": a})
    context = webnn.ML().create_context(accelerated=False, backend="cpu")
    got = context.compute(wo.load(context, model), {"A": a})["Y"]
    assert got.shape == want.shape
    assert float(np.max(np.abs(got - want))) <= 1e-5 * float(np.max(np.abs(want)))


@pytest.mark.parametrize(
    "q_len,kv_len,mask,attn_bias,causal,with_bias",
    [
        (5, 5, "lengths", False, False, True),
        (4, 7, "2d", True, False, True),  # cross attention with a padding mask and a bias
        (6, 6, None, False, True, False),
        (3, 5, "3d", False, False, False),
    ],
)
def test_multi_head_attention_matches_onnxruntime(
    q_len, kv_len, mask, attn_bias, causal, with_bias
):
    """com.microsoft MultiHeadAttention (ORT's transformer optimizer with
    use_multi_head_attention; cross attention in encoder-decoder models)."""
    rng = np.random.default_rng(q_len * 10 + kv_len)
    batch, heads, width = 2, 2, 8
    f = TensorProto.FLOAT
    inputs = ["q", "k", "v"]
    vinfos = [
        helper.make_tensor_value_info("q", f, [batch, q_len, width]),
        helper.make_tensor_value_info("k", f, [batch, kv_len, width]),
        helper.make_tensor_value_info("v", f, [batch, kv_len, width]),
    ]
    feeds = {
        "q": rng.standard_normal((batch, q_len, width)).astype(np.float32),
        "k": rng.standard_normal((batch, kv_len, width)).astype(np.float32),
        "v": rng.standard_normal((batch, kv_len, width)).astype(np.float32),
    }
    inits = []
    if with_bias:
        inits.append(
            numpy_helper.from_array(rng.standard_normal(3 * width).astype(np.float32), "b")
        )
    inputs.append("b" if with_bias else "")
    if mask == "lengths":
        inits.append(numpy_helper.from_array(np.array([kv_len, kv_len - 2], np.int32), "m"))
    elif mask == "2d":
        m = np.ones((batch, kv_len), np.int32)
        m[1, kv_len - 3 :] = 0
        inits.append(numpy_helper.from_array(m, "m"))
    elif mask == "3d":
        m = (rng.uniform(size=(batch, q_len, kv_len)) > 0.3).astype(np.int32)
        m[:, :, 0] = 1
        inits.append(numpy_helper.from_array(m, "m"))
    inputs.append("m" if mask else "")
    if attn_bias:
        vinfos.append(helper.make_tensor_value_info("ab", f, [1, heads, q_len, kv_len]))
        feeds["ab"] = rng.standard_normal((1, heads, q_len, kv_len)).astype(np.float32)
    inputs.append("ab" if attn_bias else "")
    while inputs and not inputs[-1]:
        inputs.pop()
    node = helper.make_node(
        "MultiHeadAttention", inputs, ["y"], domain="com.microsoft", num_heads=heads,
        unidirectional=int(causal),
    )  # fmt: skip
    graph = helper.make_graph(
        [node], "g", vinfos, [helper.make_tensor_value_info("y", f, None)], inits
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
    )
    model.ir_version = 8
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (want,) = session.run(None, feeds)
    context = webnn.ML().create_context(accelerated=False, backend="cpu")
    got = context.compute(wo.load(context, model), feeds)["y"]
    assert got.shape == want.shape
    assert float(np.max(np.abs(got - want))) <= 1e-5 * float(np.max(np.abs(want)))
