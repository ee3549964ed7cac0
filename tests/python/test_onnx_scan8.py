"""Scan-8 (a batch axis before the scan axis, optional sequence_lens) against ONNX Runtime on
both backends: a running sum and product per batch element, one scan input read in reverse,
and the refusal of shorter sequence_lens."""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import webnn
import webnn.onnx as wo
from onnx import TensorProto as T
from onnx import helper


def _model(with_lens):
    body = helper.make_graph(
        [
            helper.make_node("Add", ["s_in", "a"], ["s_out"]),
            helper.make_node("Mul", ["p_in", "b"], ["p_out"]),
            helper.make_node("Sub", ["s_out", "b"], ["y"]),
        ],
        "body",
        [helper.make_tensor_value_info(n, T.FLOAT, [3]) for n in ("s_in", "p_in", "a", "b")],
        [helper.make_tensor_value_info(n, T.FLOAT, [3]) for n in ("s_out", "p_out", "y")],
    )
    node = helper.make_node(
        "Scan",
        ["lens" if with_lens else "", "s0", "p0", "xa", "xb"],
        ["s", "p", "ys"],
        body=body,
        num_scan_inputs=2,
        directions=[0, 1],
    )
    inputs = [
        helper.make_tensor_value_info("s0", T.FLOAT, [2, 3]),
        helper.make_tensor_value_info("p0", T.FLOAT, [2, 3]),
        helper.make_tensor_value_info("xa", T.FLOAT, [2, 5, 3]),
        helper.make_tensor_value_info("xb", T.FLOAT, [2, 5, 3]),
    ]
    inits = [onnx.numpy_helper.from_array(np.array(with_lens or [5, 5], np.int64), "lens")]
    graph = helper.make_graph(
        [node],
        "g",
        inputs,
        [helper.make_tensor_value_info(n, T.FLOAT, None) for n in ("s", "p", "ys")],
        inits if with_lens else [],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 8)])
    model.ir_version = 4
    return model.SerializeToString()


@pytest.mark.parametrize("backend", ["cpu", "reference"])
@pytest.mark.parametrize("lens", [None, [5, 5]])
def test_scan_8_matches_onnxruntime(backend, lens):
    rng = np.random.default_rng(12)
    feeds = {
        k: rng.uniform(0.5, 1.5, s).astype(np.float32)
        for k, s in (("s0", [2, 3]), ("p0", [2, 3]), ("xa", [2, 5, 3]), ("xb", [2, 5, 3]))
    }
    data = _model(lens)
    want = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, feeds)
    ctx = webnn.ML().create_context(accelerated=False, backend=backend)
    got = ctx.compute(wo.load(ctx, data), feeds)
    for name, w in zip(("s", "p", "ys"), want):
        np.testing.assert_allclose(got[name], w, rtol=1e-6, atol=1e-6)


def test_scan_8_with_shorter_sequences_is_refused():
    ctx = webnn.ML().create_context(accelerated=False, backend="cpu")
    with pytest.raises(wo.OnnxImportError, match=r"sequence_lens \[5, 3\] shorter"):
        wo.load(ctx, _model([5, 3]))
