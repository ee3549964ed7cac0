"""Einsum forms (contractions, batched products, diagonals, traces, reductions) against ONNX
Runtime on both backends. The ONNX node tests of Einsum are all double, so until double
models imported, nothing but these ran the two-operand contraction."""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
import webnn
import webnn.onnx as wo
from onnx import TensorProto, helper

RNG = np.random.default_rng(7)

# equation, operand shapes
FORMS = [
    ("bij,bjk->bik", [[5, 2, 3], [5, 3, 4]]),
    ("bij, bjk -> bik", [[1, 2, 3], [5, 3, 4]]),  # batch broadcast, spaces
    ("i,i", [[5], [5]]),  # inner product: a scalar
    ("i,j->ij", [[3], [4]]),  # outer product
    ("ij,jk", [[3, 4], [4, 2]]),  # implicit output
    ("bhqd,bhkd->bhqk", [[2, 3, 4, 8], [2, 3, 5, 8]]),  # attention scores
    ("bhqk,bhkd->bqhd", [[2, 3, 4, 5], [2, 3, 5, 8]]),
    ("...ii->...i", [[3, 5, 5]]),  # batch diagonal
    ("ii->i", [[4, 4]]),
    ("ii", [[4, 4]]),  # trace
    ("iij,jk->ik", [[3, 3, 4], [4, 2]]),  # diagonal then contraction
    ("ij->", [[3, 4]]),
    ("ijk->kji", [[2, 3, 4]]),
    ("ij,ij->ij", [[3, 4], [3, 4]]),  # element-wise product
    ("ab,bc,cd->ad", [[2, 3], [3, 4], [4, 5]]),  # three operands
]


def _model(equation, shapes):
    names = [f"x{i}" for i in range(len(shapes))]
    node = helper.make_node("Einsum", names, ["y"], equation=equation)
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in zip(names, shapes)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model.SerializeToString(), names


@pytest.mark.parametrize("backend", ["cpu", "reference"])
@pytest.mark.parametrize("equation,shapes", FORMS, ids=[f[0] for f in FORMS])
def test_einsum_matches_onnxruntime(equation, shapes, backend):
    data, names = _model(equation, shapes)
    feed = {n: RNG.standard_normal(s).astype(np.float32) for n, s in zip(names, shapes)}
    want = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, feed)[0]
    ctx = webnn.ML().create_context(accelerated=False, backend=backend)
    got = ctx.compute(wo.load(ctx, data), feed)["y"]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_einsum_diagonal_keeps_infinities():
    """The diagonal is gathered, not masked: an inf off the diagonal does not become NaN."""
    data, _ = _model("ii->i", [[3, 3]])
    x = np.arange(9, dtype=np.float32).reshape(3, 3)
    x[0, 1] = np.inf
    ctx = webnn.ML().create_context(accelerated=False, backend="cpu")
    got = ctx.compute(wo.load(ctx, data), {"x0": x})["y"]
    np.testing.assert_array_equal(got, np.diagonal(x))
