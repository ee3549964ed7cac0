"""ONNX Attention's scale and head sizes: a negative scale is computed by the definition
(ONNX Runtime 1.32 refuses it: "scale must be greater than 0 if specified"; the operator
allows any scale), and a hidden size that gives a head size of 0 is refused by name, without numpy
warnings (1 / sqrt(0), sqrt of a negative scale)."""

import warnings

import numpy as np
import pytest

ort = pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")
import webnn
import webnn.onnx as wo
from onnx import TensorProto, helper
from webnn.onnx.errors import OnnxImportError


def _model(q_shape, kv_shape, attrs):
    vi = helper.make_tensor_value_info
    node = helper.make_node("Attention", ["q", "k", "v"], ["y"], **attrs)
    graph = helper.make_graph(
        [node],
        "g",
        [
            vi("q", TensorProto.FLOAT, q_shape),
            vi("k", TensorProto.FLOAT, kv_shape),
            vi("v", TensorProto.FLOAT, kv_shape),
        ],
        [vi("y", TensorProto.FLOAT, None)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])


@pytest.mark.parametrize("scale", [-0.5, -2.0, 0.25])
@pytest.mark.parametrize("backend", ["cpu", "reference"])
def test_attention_scale_of_either_sign_matches_its_definition(scale, backend):
    rng = np.random.default_rng(3)
    feeds = {n: rng.standard_normal([1, 2, 3, 4]).astype(np.float32) for n in "qkv"}
    model = _model([1, 2, 3, 4], [1, 2, 3, 4], {"scale": scale})
    logits = scale * (feeds["q"].astype(np.float64) @ feeds["k"].transpose(0, 1, 3, 2))
    weights = np.exp(logits - logits.max(-1, keepdims=True))
    want = (weights / weights.sum(-1, keepdims=True)) @ feeds["v"]
    if scale > 0:  # where ONNX Runtime computes it, it agrees with the definition
        session = ort.InferenceSession(
            model.SerializeToString(), providers=["CPUExecutionProvider"]
        )
        np.testing.assert_allclose(session.run(None, feeds)[0], want, rtol=1e-5, atol=1e-5)
    context = webnn.ML().create_context(accelerated=False, backend=backend)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = context.compute(wo.load(context, model), feeds)["y"]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("hidden,heads", [(2, 4), (6, 4)])
def test_attention_hidden_size_that_does_not_split_into_heads_is_refused(hidden, heads):
    model = _model([1, 2, hidden], [1, 2, hidden], {"q_num_heads": heads, "kv_num_heads": heads})
    context = webnn.ML().create_context(accelerated=False, backend="reference")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(OnnxImportError, match=f"hidden size of {hidden} does not split"):
            wo.load(context, model)
