"""Opset-27 state-carrying sequence operators (Mamba / Gated DeltaNet decoders):
CausalConvWithState and LinearAttention, prefill then decode steps with the state carried,
compared with onnx's reference implementation (ONNX Runtime has no opset 27 yet) on both
backends."""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
import webnn
import webnn.onnx as wo
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator


def _model(op_type, inputs, feeds, **attrs):
    node = helper.make_node(op_type, inputs, ["y", "state"], **attrs)
    graph = helper.make_graph(
        [node],
        "g",
        [
            helper.make_tensor_value_info(k, TensorProto.FLOAT, list(v.shape))
            for k, v in feeds.items()
        ],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in ("y", "state")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 27)])
    model.ir_version = 13
    return model


def _check(model, feeds):
    want = ReferenceEvaluator(model).run(None, feeds)
    for backend in ("cpu", "reference"):
        context = webnn.ML().create_context(accelerated=False, backend=backend)
        got = context.compute(wo.load(context, model), feeds)
        for name, w in zip(("y", "state"), want):
            np.testing.assert_allclose(got[name], w, rtol=1e-4, atol=1e-5, err_msg=backend)
    return want


@pytest.mark.parametrize("k,activation", [(4, "silu"), (3, "none"), (2, "swish")])
def test_causal_conv_with_state_prefill_then_decode(k, activation):
    rng = np.random.default_rng(k)
    batch, channels = 2, 6
    state = None
    for length in (7, 1, 1):
        feeds = {
            "x": rng.standard_normal((batch, channels, length)).astype(np.float32),
            "w": rng.standard_normal((channels, 1, k)).astype(np.float32),
            "b": rng.standard_normal(channels).astype(np.float32),
        }
        inputs = ["x", "w", "b"]
        if state is not None:
            feeds["past"] = state
            inputs.append("past")
        model = _model("CausalConvWithState", inputs, feeds, activation=activation)
        state = _check(model, feeds)[1]


@pytest.mark.parametrize(
    "rule,hq,hkv,per_key_decay",
    [("linear", 2, 2, False), ("gated", 4, 2, True), ("delta", 2, 1, False),
     ("gated_delta", 4, 2, False)],
)  # fmt: skip
def test_linear_attention_prefill_then_decode(rule, hq, hkv, per_key_decay):
    rng = np.random.default_rng(len(rule) + hq)
    batch, dk, dv = 2, 8, 4
    state = None
    for t in (5, 1):
        feeds = {
            "q": rng.standard_normal((batch, t, hq * dk)).astype(np.float32) * 0.5,
            "k": rng.standard_normal((batch, t, hkv * dk)).astype(np.float32) * 0.5,
            "v": rng.standard_normal((batch, t, hkv * dv)).astype(np.float32),
        }
        inputs = ["q", "k", "v", ""]
        if state is not None:
            feeds["past"] = state
            inputs[3] = "past"
        if rule in ("gated", "gated_delta"):
            width = hkv * dk if per_key_decay else hkv
            feeds["g"] = -rng.uniform(0.01, 0.5, (batch, t, width)).astype(np.float32)
            inputs.append("g")
        elif rule == "delta":
            inputs.append("")
        if rule in ("delta", "gated_delta"):
            feeds["beta"] = rng.uniform(0.1, 0.9, (batch, t, hkv)).astype(np.float32)
            inputs.append("beta")
        while not inputs[-1]:
            inputs.pop()
        model = _model("LinearAttention", inputs, feeds, update_rule=rule, q_num_heads=hq,
                       kv_num_heads=hkv)  # fmt: skip
        state = _check(model, feeds)[1]
