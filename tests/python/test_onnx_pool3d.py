"""3-D LpPool and the Indices output of 3-D MaxPool (decomposed over the depth axis into 2-D
pools and strided slices), compared with ONNX Runtime on both backends."""

import numpy as np
import pytest

ort = pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")
import webnn
import webnn.onnx as wo
from onnx import TensorProto, helper


def _run(op_type, attrs, x, n_outputs, opset=18):
    outs = ["y", "i"][:n_outputs]
    node = helper.make_node(op_type, ["x"], outs, **attrs)
    out_types = [TensorProto.FLOAT, TensorProto.INT64][:n_outputs]
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
        [helper.make_tensor_value_info(o, t, None) for o, t in zip(outs, out_types)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    want = session.run(None, {"x": x})
    results = []
    for backend in ("cpu", "reference"):
        context = webnn.ML().create_context(accelerated=False, backend=backend)
        got = context.compute(wo.load(context, model), {"x": x})
        results.append([got[o] for o in outs])
    return want, results


LP_CASES = [
    ({"kernel_shape": [2, 2, 2], "p": 2}, (1, 2, 4, 5, 6)),
    (
        {"kernel_shape": [3, 2, 2], "p": 1, "strides": [2, 1, 2], "pads": [1, 0, 1, 1, 1, 0]},
        (2, 3, 5, 4, 5),
    ),
    ({"kernel_shape": [2, 3, 2], "p": 3, "dilations": [2, 1, 1]}, (1, 2, 6, 5, 4)),
    ({"kernel_shape": [2, 2, 2], "p": 2, "strides": [2, 2, 2], "ceil_mode": 1}, (1, 1, 5, 5, 7)),
    ({"kernel_shape": [3, 3, 3], "p": 2, "auto_pad": "SAME_UPPER"}, (1, 2, 4, 4, 4)),
]


@pytest.mark.parametrize("attrs,shape", LP_CASES)
def test_lp_pool_3d_matches_onnxruntime(attrs, shape):
    x = np.random.default_rng(len(shape) + sum(shape)).standard_normal(shape).astype(np.float32)
    (want,), results = _run("LpPool", attrs, x, 1)
    for (got,) in results:
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


MAX_CASES = [
    ({"kernel_shape": [2, 2, 2]}, (1, 2, 4, 5, 6)),
    (
        {"kernel_shape": [3, 2, 2], "strides": [2, 1, 2], "pads": [1, 0, 1, 1, 1, 0]},
        (2, 3, 5, 4, 5),
    ),
    ({"kernel_shape": [2, 2, 2], "dilations": [1, 2, 1], "storage_order": 1}, (1, 2, 4, 6, 5)),
    ({"kernel_shape": [2, 3, 2], "strides": [2, 2, 2], "ceil_mode": 1}, (1, 1, 5, 6, 7)),
]


@pytest.mark.parametrize("attrs,shape", MAX_CASES)
@pytest.mark.parametrize("ties", [False, True])
def test_max_pool_3d_indices_match_onnxruntime(attrs, shape, ties):
    rng = np.random.default_rng(sum(shape))
    x = rng.standard_normal(shape).astype(np.float32)
    if ties:  # repeated values: the first maximum in row-major order must win, as in ORT
        x = np.round(x).astype(np.float32)
    (want_y, want_i), results = _run("MaxPool", attrs, x, 2)
    for got_y, got_i in results:
        np.testing.assert_array_equal(got_y, want_y)
        np.testing.assert_array_equal(got_i, want_i)
