"""TopK against ONNX Runtime on both backends (webnn/onnx/ops/topk.py): the rank form (short
axes, K beyond the arg-max rounds) with ties, NaN and infinities, the arg-max rounds on long
axes, the sorting network (K beyond the rounds on an axis too long to rank whole), and the
limits refused with a clear error."""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
import webnn
import webnn.onnx as wo
from onnx import TensorProto, helper
from webnn.onnx.ops import topk

RNG = np.random.default_rng(10)
ELEM = {"float32": TensorProto.FLOAT, "int32": TensorProto.INT32, "int64": TensorProto.INT64}


def _model(shape, k, dtype="float32", opset=17, **attrs):
    inputs = [helper.make_tensor_value_info("x", ELEM[dtype], shape)]
    inits = []
    if opset >= 10:
        node = helper.make_node("TopK", ["x", "k"], ["values", "indices"], **attrs)
        inits = [onnx.numpy_helper.from_array(np.array([k], np.int64), "k")]
    else:
        node = helper.make_node("TopK", ["x"], ["values", "indices"], k=k, **attrs)
    graph = helper.make_graph(
        [node],
        "g",
        inputs,
        [
            helper.make_tensor_value_info("values", ELEM[dtype], None),
            helper.make_tensor_value_info("indices", TensorProto.INT64, None),
        ],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model.SerializeToString()


def _compare(data, x, backend):
    want = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, {"x": x})
    ctx = webnn.ML().create_context(accelerated=False, backend=backend)
    got = ctx.compute(wo.load(ctx, data), {"x": x})
    np.testing.assert_array_equal(got["indices"], want[1])
    np.testing.assert_array_equal(got["values"], want[0])


def _with_specials(shape, dtype):
    """Few distinct values (many ties); floats also NaN, +inf and -inf."""
    x = RNG.integers(-3, 4, shape).astype(dtype)
    if dtype == "float32":
        flat = x.reshape(-1)
        spots = RNG.choice(flat.size, size=min(6, flat.size), replace=False)
        flat[spots] = [np.nan, np.inf, -np.inf, np.nan, -np.inf, np.inf][: len(spots)]
    else:
        info = np.iinfo(dtype)
        x.reshape(-1)[:2] = [info.min, info.max]
    return x


@pytest.mark.parametrize("backend", ["cpu", "reference"])
@pytest.mark.parametrize("dtype", sorted(ELEM))
@pytest.mark.parametrize("largest", [1, 0])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_rank_form_with_ties_nan_and_infinities(axis, largest, dtype, backend):
    shape = [7, 9, 5]
    k = max(1, shape[axis] // 2)  # axis <= 4 K: the rank form
    x = _with_specials(shape, dtype)
    _compare(_model(shape, k, dtype, axis=axis, largest=largest), x, backend)


@pytest.mark.parametrize("backend", ["cpu", "reference"])
@pytest.mark.parametrize("largest", [1, 0])
def test_k_beyond_the_arg_max_rounds(largest, backend):
    k = topk.MAX_ROUNDS + 44
    shape = [3, 700]
    x = RNG.integers(-50, 50, shape).astype(np.float32)  # ties
    _compare(_model(shape, k, largest=largest), x, backend)


@pytest.mark.parametrize("backend", ["cpu", "reference"])
@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_arg_max_rounds_on_a_long_axis(dtype, backend):
    shape = [2, 5000]  # a detector's boxes: 5000 > 4 K, so K rounds
    x = RNG.permutation(np.arange(10000)).reshape(shape).astype(dtype)
    x[0, :30] = 7  # ties on the first row
    _compare(_model(shape, 12, dtype, axis=1), x, backend)


@pytest.mark.parametrize("backend", ["cpu", "reference"])
@pytest.mark.parametrize("dtype", ["float32", "int64"])
@pytest.mark.parametrize("largest", [1, 0])
def test_sorting_network_for_k_beyond_the_rounds_on_a_long_axis(largest, dtype, backend):
    """K = 300 of 3000 (not a power of two: padded) on axis 0, with ties, NaN, infinities and
    the integer extremes: the bitonic sort, equal to ORT."""
    shape = [3000, 2]
    x = _with_specials(shape, dtype)
    x[:, 1] = RNG.permutation(3000)
    _compare(_model(shape, 300, dtype, axis=0, largest=largest), x, backend)


@pytest.mark.parametrize("backend", ["cpu", "reference"])
@pytest.mark.parametrize("dtype", ["float32", "int64"])
@pytest.mark.parametrize("largest", [1, 0])
@pytest.mark.parametrize("size", [4104, 4201])  # both padded to 8192
def test_sorting_network_on_a_detectors_boxes(size, largest, dtype, backend):
    """An NMS-free detector's K = 300 of its boxes (isbnx: 300 of 8400): size^2 is above the
    rank bound, so the sorting network; ties, NaN, infinities and equal values far apart keep
    ONNX's lower-index-first order."""
    assert size * size > topk.MAX_RANK_ELEMENTS
    x = _with_specials([1, size], dtype)
    x[0, ::7] = RNG.integers(-3, 4, x[0, ::7].shape)  # more ties, spread over every chunk
    if dtype == "float32":
        x[0, 1000::600] = np.nan
        x[0, 3000::350] = np.inf
        x[0, size - 5 :] = -np.inf
    _compare(_model([1, size], 300, dtype, largest=largest), x, backend)


def test_opset_1_k_attribute():
    x = RNG.standard_normal([4, 6]).astype(np.float32)
    _compare(_model([4, 6], 3, opset=1), x, "cpu")


def test_limits_are_refused_clearly():
    ctx = webnn.ML().create_context(accelerated=False, backend="cpu")
    with pytest.raises(wo.OnnxImportError, match=r"K=1000 over an axis of 131072.*above the b"):
        wo.load(ctx, _model([64, 131072], 1000))
    with pytest.raises(wo.OnnxImportError, match=r"K=7 is larger than the axis size 6"):
        wo.load(ctx, _model([2, 6], 7))
    with pytest.raises(wo.OnnxImportError, match=r"K=0: the outputs would be empty"):
        wo.load(ctx, _model([2, 6], 0))


@pytest.mark.parametrize("backend", ["cpu", "reference"])
@pytest.mark.parametrize("largest", [1, 0])
def test_arg_max_rounds_order_nan_as_onnxruntime(largest, backend):
    """NaN first when largest, after every number when smallest (no infinities here, and
    K below the count of numbers)."""
    shape = [2, 1000]
    x = RNG.standard_normal(shape).astype(np.float32)
    x[0, [3, 50]] = np.nan
    x[1, 900] = np.nan
    _compare(_model(shape, 6, largest=largest), x, backend)


@pytest.mark.parametrize("k", [np.array([2.0], np.float32), np.array([[2]], np.int64)])
def test_a_k_that_is_not_one_integer_in_1d_is_refused_as_onnxruntime_refuses_it(k):
    model = onnx.load_from_string(_model([2, 6], 2))
    model.graph.initializer[0].CopyFrom(onnx.numpy_helper.from_array(k, "k"))
    data = model.SerializeToString()
    with pytest.raises(Exception):  # noqa: B017  (ORT's own error classes vary by version)
        ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(
            None, {"x": np.zeros([2, 6], np.float32)}
        )
    ctx = webnn.ML().create_context(accelerated=False, backend="cpu")
    with pytest.raises(wo.OnnxImportError, match=r"TopK.*K must be one integer in a 1-D tensor"):
        wo.load(ctx, data)


def _run_time_k_model():
    """TopK whose K is computed at run time from an input (K = max(n) + 1: n has two values,
    so the session does not fold it as it folds one-value integer inputs), after a Relu."""
    one = onnx.numpy_helper.from_array(np.array([1], np.int64), "one")
    nodes = [
        helper.make_node("ReduceMax", ["n"], ["m"], keepdims=1),
        helper.make_node("Add", ["m", "one"], ["k"]),
        helper.make_node("Relu", ["x"], ["r"]),
        helper.make_node("TopK", ["r", "k"], ["values", "indices"], axis=1),
        helper.make_node("Neg", ["values"], ["neg"]),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 50]),
            helper.make_tensor_value_info("n", TensorProto.INT64, [2]),
        ],
        [
            helper.make_tensor_value_info("neg", TensorProto.FLOAT, None),
            helper.make_tensor_value_info("indices", TensorProto.INT64, None),
        ],
        [one],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model.SerializeToString()


@pytest.mark.parametrize("backend", ["cpu", "reference"])
def test_k_computed_at_run_time_in_a_session(backend):
    """The session cuts before the TopK and folds K in the rest: one graph per K value."""
    data = _run_time_k_model()
    want_session = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    ctx = webnn.ML().create_context(accelerated=False, backend=backend)
    session = wo.InferenceSession(data, context=ctx)
    for n in (4, 9, 4):
        x = RNG.standard_normal([3, 50]).astype(np.float32)
        feeds = {"x": x, "n": np.array([n, 1], np.int64)}
        got = session.run(None, feeds)
        want = want_session.run(None, feeds)
        assert got[0].shape == (3, n + 1)
        np.testing.assert_array_equal(got[1], want[1])
        np.testing.assert_array_equal(got[0], want[0])
    assert len(session.compiled_graphs()) == 1  # one first segment: K is no part of its key


def test_k_computed_at_run_time_is_refused_by_load():
    ctx = webnn.ML().create_context(accelerated=False, backend="cpu")
    with pytest.raises(wo.OnnxImportError, match=r"TopK.*input 1 \('k', K\) must be known"):
        wo.load(ctx, _run_time_k_model())
