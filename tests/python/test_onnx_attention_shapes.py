"""The opset-23 Attention refuses inputs ONNX does not define (found by probing the importer:
a query of batch 1 with keys of batch 2 imported and broadcast; zero heads divided by zero)."""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
import webnn
import webnn.onnx as wo
from onnx import TensorProto, helper
from ort_compare import graph_model


@pytest.mark.parametrize(
    "q,k,attrs,message",
    [
        ((1, 2, 3, 8), (2, 2, 4, 8), {}, "one rank and batch expected"),
        ((1, 3, 8), (1, 4, 8), {"q_num_heads": 0, "kv_num_heads": 0}, "positive q_num_heads"),
    ],
)
def test_attention_refuses_inputs_it_does_not_define(q, k, attrs, message):
    node = helper.make_node("Attention", ["q", "k", "v"], ["y"], **attrs)
    feeds = {n: np.zeros(s, np.float32) for n, s in (("q", q), ("k", k), ("v", k))}
    model = graph_model([node], feeds, {"y": TensorProto.FLOAT}, {}, {"": 23}, ir_version=10)
    context = webnn.ML().create_context(accelerated=False, backend="reference")
    with pytest.raises(wo.OnnxImportError, match=f"Attention.*{message}"):
        wo.load(context, model)
