"""TensorScatter (opset 24 KV-cache update): linear and circular writes, write indices known at
import or fed at run time, the sequence axis in several places; compared with ONNX Runtime
where it has the operator, else with onnx's reference implementation, on both backends."""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
import webnn
import webnn.onnx as wo
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator


def _expected(model, feeds):
    try:
        import onnxruntime as ort

        session = ort.InferenceSession(
            model.SerializeToString(), providers=["CPUExecutionProvider"]
        )
        return session.run(None, feeds)[0]
    except Exception:  # noqa: BLE001 - an ORT without opset 24: onnx's reference instead
        return ReferenceEvaluator(model).run(None, feeds)[0]


@pytest.mark.parametrize(
    "cache,update,axis,mode,runtime",
    [
        ((2, 3, 8, 4), (2, 3, 2, 4), -2, "linear", True),
        ((2, 3, 8, 4), (2, 3, 3, 4), -2, "circular", True),
        ((2, 6, 5), (2, 2, 5), 1, "linear", False),
        ((3, 2, 4, 7), (3, 2, 4, 3), 3, "circular", False),
    ],
)
def test_tensor_scatter_matches(cache, update, axis, mode, runtime):
    rng = np.random.default_rng(sum(cache) + len(mode))
    length = cache[axis]
    seq = update[axis]
    high = length if mode == "circular" else length - seq + 1
    feeds = {
        "cache": rng.standard_normal(cache).astype(np.float32),
        "update": rng.standard_normal(update).astype(np.float32),
    }
    writes = rng.integers(0, high, cache[0]).astype(np.int64)
    inits = []
    if runtime:
        feeds["w"] = writes
    else:
        inits.append(numpy_helper.from_array(writes, "w"))
    vinfos = [
        helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype), list(v.shape))
        for k, v in feeds.items()
    ]
    node = helper.make_node("TensorScatter", ["cache", "update", "w"], ["y"], axis=axis, mode=mode)
    graph = helper.make_graph(
        [node], "g", vinfos, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 24)])
    model.ir_version = 11
    want = _expected(model, feeds)
    for backend in ("cpu", "reference"):
        context = webnn.ML().create_context(accelerated=False, backend=backend)
        got = context.compute(wo.load(context, model), feeds)["y"]
        np.testing.assert_array_equal(got, want, err_msg=backend)
