"""TopK sorted on the host by an InferenceSession (host_topk.py, host_cuts.py) where the graph
forms would be slow (K of hundreds over thousands of elements), against ONNX Runtime: values
and indices equal, with ties, NaN, infinities, signed zeros and integer extremes; K computed
at run time; dynamic sizes; a detector-like head reading the selection afterwards; and
webnn.onnx.load (one graph, never cut) giving the same result."""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
import webnn
import webnn.onnx as wo
from onnx import TensorProto, helper
from ort_compare import BACKENDS
from webnn.onnx import host_topk

RNG = np.random.default_rng(31)
ELEM = {
    "float32": TensorProto.FLOAT,
    "float64": TensorProto.DOUBLE,
    "int32": TensorProto.INT32,
    "int64": TensorProto.INT64,
    "uint8": TensorProto.UINT8,
}


def _model(shape, k, dtype="float32", dims=None, **attrs):
    x = helper.make_tensor_value_info("x", ELEM[dtype], dims or shape)
    outs = [helper.make_tensor_value_info("values", ELEM[dtype], None),
            helper.make_tensor_value_info("indices", TensorProto.INT64, None)]  # fmt: skip
    node = helper.make_node("TopK", ["x", "k"], ["values", "indices"], **attrs)
    kinit = onnx.numpy_helper.from_array(np.array([k], np.int64), "k")
    graph = helper.make_graph([node], "g", [x], outs, [kinit])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _ort(model, feeds):
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def _specials(shape, dtype):
    """Few distinct values (ties everywhere); floats also NaN, +-inf and -0."""
    x = RNG.integers(-4, 5, shape).astype(dtype)
    flat = x.reshape(-1)
    spots = RNG.choice(flat.size, size=min(40, flat.size), replace=False)
    if np.issubdtype(x.dtype, np.floating):
        flat[spots] = np.resize([np.nan, np.inf, -np.inf, -0.0, 0.0], len(spots))
    else:
        info = np.iinfo(x.dtype)
        flat[spots] = np.resize([info.min, info.max], len(spots))
    return x


HOST_SORTS = []  # one entry per host_topk.run call (the fixture below counts them)


@pytest.fixture(autouse=True)
def _count_host_sorts(monkeypatch):
    real = host_topk.run

    def counted(*args):
        HOST_SORTS.append(1)
        return real(*args)

    monkeypatch.setattr(host_topk, "run", counted)


def _session_matches(model, feeds):
    want = _ort(model, feeds)
    for backend in BACKENDS:
        sess = wo.InferenceSession(model, providers=[backend])
        before = len(HOST_SORTS)
        got = sess.run(None, feeds)
        assert len(HOST_SORTS) == before + 1, "the TopK did not run on the host"
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and g.shape == w.shape, backend
            np.testing.assert_array_equal(g, w, err_msg=backend)
    return want


@pytest.mark.parametrize("largest", [1, 0])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "uint8"])
def test_long_axis_matches_onnxruntime(dtype, largest):
    shape, k = [2, 5000], 300
    assert host_topk.prefers_host(shape, 1, k)
    _session_matches(_model(shape, k, dtype, largest=largest), {"x": _specials(shape, dtype)})


@pytest.mark.parametrize("k", [17, 100, 255, 256, 257, 1999, 2000])
def test_k_around_the_graph_forms_bounds(k):
    shape = [3, 2000]
    x = RNG.standard_normal(shape).astype(np.float32)
    x[:, ::9] = 0.5  # ties across the k-th value
    _session_matches(_model(shape, k), {"x": x})


def test_axis_zero_and_a_middle_axis():
    x = _specials([1200, 3], "float32")
    _session_matches(_model([1200, 3], 300, axis=0), {"x": x})
    y = _specials([2, 900, 2], "float32")
    _session_matches(_model([2, 900, 2], 200, axis=1, largest=0), {"x": y})


def test_dynamic_sizes_run_on_the_host():
    # The graph forms need a static axis; the host step does not.
    model = _model(None, 50, dims=["batch", "boxes"])
    for boxes in (700, 1500):
        _session_matches(model, {"x": RNG.standard_normal([2, boxes]).astype(np.float32)})


def test_k_computed_at_run_time():
    # K = boxes // 4 from the input's shape: not known until the feed.
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["boxes"])
    nodes = [
        helper.make_node("Shape", ["x"], ["n"]),
        helper.make_node("Div", ["n", "four"], ["k"]),
        helper.make_node("TopK", ["x", "k"], ["values", "indices"]),
    ]
    four = onnx.numpy_helper.from_array(np.array([4], np.int64), "four")
    outs = [helper.make_tensor_value_info("values", TensorProto.FLOAT, None),
            helper.make_tensor_value_info("indices", TensorProto.INT64, None)]  # fmt: skip
    graph = helper.make_graph(nodes, "g", [x], outs, [four])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    for boxes in (4000, 6004):
        _session_matches(model, {"x": _specials([boxes], "float32")})


def test_detector_head_reads_the_selection():
    # scores [1, N] -> an exact step -> TopK 300 -> gather the selected boxes -> scale them
    n_boxes = 8400
    scores = helper.make_tensor_value_info("scores", TensorProto.FLOAT, [1, n_boxes])
    boxes = helper.make_tensor_value_info("boxes", TensorProto.FLOAT, [n_boxes, 4])
    nodes = [
        helper.make_node("Relu", ["scores"], ["p"]),  # ties at 0: half the boxes
        helper.make_node("TopK", ["p", "k"], ["top", "idx"]),
        helper.make_node("Squeeze", ["idx", "zero"], ["flat"]),
        helper.make_node("Gather", ["boxes", "flat"], ["picked"], axis=0),
        helper.make_node("Mul", ["picked", "scale"], ["out"]),
    ]
    inits = [onnx.numpy_helper.from_array(np.array([300], np.int64), "k"),
             onnx.numpy_helper.from_array(np.array([0], np.int64), "zero"),
             onnx.numpy_helper.from_array(np.float32(640.0), "scale")]  # fmt: skip
    outs = [helper.make_tensor_value_info("top", TensorProto.FLOAT, None),
            helper.make_tensor_value_info("out", TensorProto.FLOAT, None)]  # fmt: skip
    graph = helper.make_graph(nodes, "g", [scores, boxes], outs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    feeds = {"scores": RNG.standard_normal([1, n_boxes]).astype(np.float32),
             "boxes": RNG.uniform(0, 1, [n_boxes, 4]).astype(np.float32)}  # fmt: skip
    _session_matches(model, feeds)


def test_load_keeps_the_graph_form_with_the_same_result():
    shape, k = [1, 3000], 300
    model = _model(shape, k)
    x = _specials(shape, "float32")
    want = _ort(model, {"x": x})
    ctx = webnn.ML().create_context(accelerated=False, backend="cpu")
    got = ctx.compute(wo.load(ctx, model.SerializeToString()), {"x": x})
    np.testing.assert_array_equal(got["indices"], want[1])
    np.testing.assert_array_equal(got["values"], want[0])


def test_small_top_k_stays_in_the_graph():
    assert not host_topk.prefers_host([1, 8400], 1, 10)  # ten arg-max rounds
    assert not host_topk.prefers_host([4, 80], 1, 40)  # a few thousand comparisons
    assert host_topk.prefers_host([1, 8400], 1, 100)


def test_bad_k_at_run_time_is_a_clear_error():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["boxes"])
    nodes = [
        helper.make_node("Shape", ["x"], ["n"]),
        helper.make_node("Mul", ["n", "two"], ["k"]),  # K = 2 x the axis: out of range
        helper.make_node("TopK", ["x", "k"], ["values", "indices"]),
    ]
    two = onnx.numpy_helper.from_array(np.array([2], np.int64), "two")
    outs = [helper.make_tensor_value_info("values", TensorProto.FLOAT, None),
            helper.make_tensor_value_info("indices", TensorProto.INT64, None)]  # fmt: skip
    graph = helper.make_graph(nodes, "g", [x], outs, [two])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    sess = wo.InferenceSession(model)
    with pytest.raises(wo.OnnxImportError, match=r"TopK.*K=2000 is outside \[0, 1000\]"):
        sess.run(None, {"x": np.zeros([1000], np.float32)})


@pytest.mark.parametrize("largest", [1, 0])
def test_signed_zeros_tie_by_index(largest):
    # +0 and -0 are equal: the selection and its order go by index, whichever the sign.
    x = np.zeros([1, 4000], np.float32)
    x[0, RNG.choice(4000, 2000, replace=False)] = -0.0
    x[0, :50] = RNG.standard_normal(50)
    _session_matches(_model([1, 4000], 300, largest=largest), {"x": x})
