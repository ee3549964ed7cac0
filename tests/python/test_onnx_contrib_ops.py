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
