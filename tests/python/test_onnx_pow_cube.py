"""Pow with a constant exponent 3 (the x**3 of tanh-approximated GELU in T5, GPT-2, ...) is
x * x * x, bit-identical to ONNX Runtime, which computes it that way."""

import numpy as np
import pytest

pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper
from ort_compare import assert_matches_onnxruntime, exact, graph_model


@pytest.mark.parametrize("exponent", [2.0, 3.0])
def test_pow_by_small_integer_matches_onnxruntime_bits(exponent):
    x = (np.random.default_rng(2).standard_normal((4, 999)) * 3).astype(np.float32)
    x[0, :4] = [0.0, -0.0, np.inf, -np.inf]
    node = helper.make_node("Pow", ["x", "e"], ["y"])
    inits = {"e": np.array(exponent, np.float32)}
    model = graph_model([node], {"x": x}, {"y": TensorProto.FLOAT}, inits)
    assert_matches_onnxruntime(model, {"x": x}, check=exact)
