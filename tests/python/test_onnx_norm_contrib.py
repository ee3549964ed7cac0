"""com.microsoft SkipLayerNormalization / SkipSimplifiedLayerNormalization and (ai.onnx-domain,
ORT-contrib) SimplifiedLayerNormalization, every output, compared with ONNX Runtime on both
backends: with and without bias and beta, broadcast skip inputs, several epsilons and axes."""

import numpy as np
import pytest

ort = pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")
import webnn
import webnn.onnx as wo
from onnx import TensorProto, helper, numpy_helper


def _run(op_type, domain, inputs, outputs, feeds, inits, **attrs):
    node = helper.make_node(op_type, inputs, outputs, domain=domain, **attrs)
    graph = helper.make_graph(
        [node],
        "g",
        [
            helper.make_tensor_value_info(k, TensorProto.FLOAT, list(v.shape))
            for k, v in feeds.items()
        ],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs if o],
        [numpy_helper.from_array(v, k) for k, v in inits.items()],
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
    )
    model.ir_version = 8
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [o for o in outputs if o]
    want = dict(zip(names, session.run(None, feeds)))
    for backend in ("cpu", "reference"):
        context = webnn.ML().create_context(accelerated=False, backend=backend)
        got = context.compute(wo.load(context, model), feeds)
        for name, w in want.items():
            g = got[name]
            assert g.size == w.size, (backend, name, g.shape, w.shape)
            np.testing.assert_allclose(
                g.reshape(w.shape), w, rtol=1e-5, atol=1e-5 * float(np.abs(w).max()),
                err_msg=f"{backend} {name}",
            )  # fmt: skip


@pytest.mark.parametrize("simplified", [False, True])
@pytest.mark.parametrize(
    "skip_shape,bias,beta,eps",
    [
        ((2, 5, 16), True, True, 1e-12),
        ((1, 5, 16), False, True, 1e-5),
        ((5, 16), True, False, 1e-6),
    ],
)
def test_skip_layer_norm_matches_onnxruntime(simplified, skip_shape, bias, beta, eps):
    rng = np.random.default_rng(len(skip_shape) + bias * 2 + beta)
    hidden = 16
    feeds = {
        "x": rng.standard_normal((2, 5, hidden)).astype(np.float32) * 3 + 1,
        "skip": rng.standard_normal(skip_shape).astype(np.float32),
    }
    inits = {"gamma": rng.standard_normal(hidden).astype(np.float32)}
    inputs = ["x", "skip", "gamma"]
    if not simplified:
        if beta:
            inits["beta"] = rng.standard_normal(hidden).astype(np.float32)
        inputs.append("beta" if beta else "")
    if bias:
        inits["bias"] = rng.standard_normal(hidden).astype(np.float32)
        inputs.append("bias")
    while not inputs[-1]:
        inputs.pop()
    op_type = "SkipSimplifiedLayerNormalization" if simplified else "SkipLayerNormalization"
    outputs = ["y", "" if simplified else "mean", "inv_std", "sum"]
    _run(op_type, "com.microsoft", inputs, outputs, feeds, inits, epsilon=eps)


@pytest.mark.parametrize("axis,shape", [(-1, (2, 3, 8)), (1, (2, 3, 4)), (2, (3, 2, 5, 4))])
def test_simplified_layer_norm_matches_onnxruntime(axis, shape):
    rng = np.random.default_rng(abs(axis) + len(shape))
    feeds = {"x": rng.standard_normal(shape).astype(np.float32)}
    norm_shape = shape[axis:]
    inits = {"scale": rng.standard_normal(norm_shape).astype(np.float32)}
    _run("SimplifiedLayerNormalization", "", ["x", "scale"], ["y", "inv_std"], feeds, inits,
         axis=axis, epsilon=1e-5)  # fmt: skip
