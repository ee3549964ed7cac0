"""BitCast (opset 26): WebNN has no bit reinterpretation, so it folds where its input is known
at import (the bits compared with numpy's view) and is refused with a run-time input."""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
import webnn
import webnn.onnx as wo
from onnx import TensorProto, helper, numpy_helper


def _model(source_is_constant):
    bits = np.array([1.0, -2.5, np.inf, 3e-41], np.float32)  # 3e-41: a subnormal
    nodes = [
        helper.make_node("BitCast", ["c" if source_is_constant else "f"], ["b"], to=6),
        helper.make_node("Add", ["b", "x"], ["y"]),
    ]
    inputs = [helper.make_tensor_value_info("x", TensorProto.INT32, [4])]
    if not source_is_constant:
        inputs.append(helper.make_tensor_value_info("f", TensorProto.FLOAT, [4]))
    graph = helper.make_graph(
        nodes,
        "g",
        inputs,
        [helper.make_tensor_value_info("y", TensorProto.INT32, [4])],
        [numpy_helper.from_array(bits, "c")] if source_is_constant else [],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 26)]), bits


def test_bitcast_of_a_constant_folds_to_its_bits():
    model, bits = _model(True)
    ctx = webnn.ML().create_context(accelerated=False, backend="cpu")
    x = np.array([1, 2, 3, 4], np.int32)
    got = ctx.compute(wo.load(ctx, model), {"x": x})["y"]
    np.testing.assert_array_equal(got, bits.view(np.int32) + x)


def test_bitcast_of_a_runtime_value_is_refused():
    model, _ = _model(False)
    ctx = webnn.ML().create_context(accelerated=False, backend="cpu")
    with pytest.raises(wo.OnnxImportError, match="BitCast.*no bit reinterpretation"):
        wo.load(ctx, model)
