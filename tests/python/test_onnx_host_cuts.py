"""Value-dependent-size operators on run-time values: an InferenceSession runs them on the host
between graphs (webnn/onnx/host_cuts.py, host_segments.py), compared with ONNX Runtime."""

import threading

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
import webnn.onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh
from webnn.onnx import InferenceSession, OnnxImportError

BACKENDS = ["cpu", "reference"]


def _model(nodes, inputs, outputs, inits=(), opset=17):
    graph = h.make_graph(nodes, "g", inputs, outputs, list(inits))
    return h.make_model(graph, opset_imports=[h.make_opsetid("", opset)]).SerializeToString()


def _vi(name, elem, shape=None):
    return h.make_tensor_value_info(name, elem, shape)


def _same_as_ort(data, feeds, backend, exact=True):
    ref = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    ours = InferenceSession(data, providers=[backend])
    for feed in feeds:
        want = ref.run(None, feed)
        got = ours.run(None, feed)
        for w, g, out in zip(want, got, ref.get_outputs()):
            assert g.dtype == w.dtype and g.shape == w.shape, (out.name, g.shape, w.shape)
            if exact:
                np.testing.assert_array_equal(g, w, err_msg=out.name)
            else:
                np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6, err_msg=out.name)
    return ours


def _detector(center_point_box=0, batches=1, classes=2, n=40):
    """A toy detector tail: boxes scaled, scores through a sigmoid, NMS, the picked boxes."""
    nodes = [
        h.make_node("Mul", ["boxes", "scale"], ["scaled"]),
        h.make_node("Sigmoid", ["logits"], ["scores"]),
        h.make_node(
            "NonMaxSuppression",
            ["scaled", "scores", "max_out", "iou", "score_th"],
            ["selected"],
            center_point_box=center_point_box,
        ),
        h.make_node("Gather", ["selected", "two"], ["box_index"], axis=1),
        h.make_node("Gather", ["selected", "zero"], ["batch_index"], axis=1),
        h.make_node("Reshape", ["scaled", "flat"], ["all_boxes"]),
        h.make_node("Mul", ["batch_index", "n"], ["offset"]),
        h.make_node("Add", ["offset", "box_index"], ["row"]),
        h.make_node("Gather", ["all_boxes", "row"], ["picked"], axis=0),
        h.make_node("ReduceMax", ["picked"], ["extent"], keepdims=0),
    ]
    inits = [
        nh.from_array(np.array(2.0, np.float32), "scale"),
        nh.from_array(np.array([7], np.int64), "max_out"),
        nh.from_array(np.array([0.4], np.float32), "iou"),
        nh.from_array(np.array([0.6], np.float32), "score_th"),
        nh.from_array(np.array(2, np.int64), "two"),
        nh.from_array(np.array(0, np.int64), "zero"),
        nh.from_array(np.array([-1, 4], np.int64), "flat"),
        nh.from_array(np.array(n, np.int64), "n"),
    ]
    inputs = [_vi("boxes", T.FLOAT, [batches, n, 4]), _vi("logits", T.FLOAT, [batches, classes, n])]
    outputs = [_vi("picked", T.FLOAT), _vi("selected", T.INT64), _vi("extent", T.FLOAT)]
    return _model(nodes, inputs, outputs, inits)


def _detector_feeds(rng, batches, classes, n, count):
    feeds = []
    for _ in range(count):
        xy = rng.uniform(0, 10, (batches, n, 2)).astype(np.float32)
        wh = rng.uniform(0.5, 4, (batches, n, 2)).astype(np.float32)
        boxes = np.concatenate([xy, xy + wh], -1)
        logits = rng.normal(0, 1.5, (batches, classes, n)).astype(np.float32)
        feeds.append({"boxes": boxes, "logits": logits})
    return feeds


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("center_point_box", [0, 1])
def test_non_max_suppression_on_run_time_scores_matches_onnxruntime(backend, center_point_box):
    rng = np.random.default_rng(center_point_box)
    data = _detector(center_point_box, batches=2, classes=3)
    feeds = _detector_feeds(rng, 2, 3, 40, 6)
    ours = _same_as_ort(data, feeds, backend)
    # The selection count differs between feeds; the first graph was imported once, and it
    # ends where the host node starts (its outputs are what the rest reads).
    assert ours.import_count == 1
    (graph,) = ours.compiled_graphs()
    assert set(graph.output_descriptors) == {"scaled", "scores"}


def test_load_without_a_session_still_names_the_node():
    data = _detector()
    with pytest.raises(OnnxImportError, match="NonMaxSuppression"):
        webnn.onnx.load(webnn.ML().create_context(), data)


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_empty_selection_flows_through_the_rest(backend):
    """No box over the threshold: the rest holds empty tensors (ReduceMax of none is -inf)."""
    data = _detector()
    empty = {
        "boxes": np.tile(np.array([0, 0, 1, 1], np.float32), (1, 40, 1)),
        "logits": np.full((1, 2, 40), -5.0, np.float32),  # every score under the threshold
    }
    rng = np.random.default_rng(1)
    ours = _same_as_ort(data, [empty, *_detector_feeds(rng, 1, 2, 40, 2), empty], backend)
    assert ours.run(["selected"], empty)[0].shape == (0, 3)


@pytest.mark.parametrize("backend", BACKENDS)
def test_nonzero_then_gather_and_a_second_cut_at_unique(backend):
    """Two host nodes in a row: NonZero of a run-time mask, then Unique of the gathered values."""
    nodes = [
        h.make_node("Greater", ["x", "th"], ["mask"]),
        h.make_node("NonZero", ["mask"], ["where"]),
        h.make_node("Transpose", ["where"], ["coords"], perm=[1, 0]),
        h.make_node("GatherND", ["x", "coords"], ["vals"]),
        h.make_node("Floor", ["vals"], ["floored"]),
        h.make_node("Unique", ["floored"], ["u", "idx", "inv", "cnt"], sorted=1),
        h.make_node("Mul", ["u", "two"], ["u2"]),
    ]
    inits = [nh.from_array(np.array(0.5, np.float32), "th"),
             nh.from_array(np.array(2.0, np.float32), "two")]  # fmt: skip
    outputs = [_vi("where", T.INT64), _vi("vals", T.FLOAT), _vi("u2", T.FLOAT),
               _vi("idx", T.INT64), _vi("inv", T.INT64), _vi("cnt", T.INT64)]  # fmt: skip
    data = _model(nodes, [_vi("x", T.FLOAT, [3, 5])], outputs, inits)
    rng = np.random.default_rng(5)
    feeds = [{"x": rng.uniform(-3, 6, (3, 5)).astype(np.float32)} for _ in range(5)]
    _same_as_ort(data, feeds, backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_compress_and_range_on_run_time_values(backend):
    nodes = [
        h.make_node("ReduceSum", ["x"], ["total"], keepdims=0),
        h.make_node("Cast", ["total"], ["limit"], to=T.INT64),
        h.make_node("Range", ["zero", "limit", "one"], ["steps"]),
        h.make_node("Greater", ["y", "th"], ["keep"]),
        h.make_node("Compress", ["z", "keep"], ["kept"], axis=0),
        h.make_node("Relu", ["kept"], ["out"]),
    ]
    inits = [nh.from_array(np.array(0, np.int64), "zero"),
             nh.from_array(np.array(1, np.int64), "one"),
             nh.from_array(np.array(0.0, np.float32), "th")]  # fmt: skip
    inputs = [_vi("x", T.FLOAT, [4]), _vi("y", T.FLOAT, [6]), _vi("z", T.FLOAT, [6, 3])]
    data = _model(nodes, inputs, [_vi("steps", T.INT64), _vi("out", T.FLOAT)], inits)
    rng = np.random.default_rng(9)
    feeds = [
        {
            "x": rng.uniform(0, 4, 4).astype(np.float32),
            "y": rng.normal(size=6).astype(np.float32),
            "z": rng.normal(size=(6, 3)).astype(np.float32),
        }
        for _ in range(5)
    ]
    _same_as_ort(data, feeds, backend)


def test_a_host_node_on_values_known_at_import_still_folds():
    """NonZero of a constant needs no cut: one graph, as before."""
    nodes = [
        h.make_node("NonZero", ["c"], ["nz"]),
        h.make_node("Cast", ["nz"], ["nzf"], to=T.FLOAT),
        h.make_node("ReduceSum", ["nzf"], ["s"], keepdims=1),
        h.make_node("Add", ["x", "s"], ["y"]),
    ]
    inits = [nh.from_array(np.array([[0, 1], [2, 0]], np.float32), "c")]
    data = _model(nodes, [_vi("x", T.FLOAT, [1, 1])], [_vi("y", T.FLOAT, [1, 1])], inits)
    ours = _same_as_ort(data, [{"x": np.array([[1.5]], np.float32)}], "cpu")
    (graph,) = ours.compiled_graphs()
    assert list(graph.output_descriptors) == ["y"]  # the model's output: no cut before it


def test_runs_from_several_threads_agree_with_serial_runs():
    data = _detector(batches=1, classes=2)
    rng = np.random.default_rng(3)
    feeds = _detector_feeds(rng, 1, 2, 40, 8)
    sess = InferenceSession(data)
    serial = [sess.run(None, f) for f in feeds]
    results = [None] * len(feeds)

    def work(i):
        results[i] = sess.run(None, feeds[i])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(feeds))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads)
    for want, got in zip(serial, results):
        for w, g in zip(want, got):
            np.testing.assert_array_equal(g, w)


def test_a_bad_value_at_the_host_node_is_a_clear_error():
    """NonMaxSuppression with boxes of the wrong last size: the host node is named."""
    nodes = [
        h.make_node("Identity", ["b"], ["b1"]),
        h.make_node("NonMaxSuppression", ["b1", "s"], ["sel"]),
    ]
    data = _model(nodes, [_vi("b", T.FLOAT, [1, 3, 5]), _vi("s", T.FLOAT, [1, 1, 3])],
                  [_vi("sel", T.INT64)])  # fmt: skip
    sess = InferenceSession(data)
    with pytest.raises(ValueError, match="NonMaxSuppression"):
        sess.run(None, {"b": np.zeros((1, 3, 5), np.float32), "s": np.zeros((1, 1, 3), np.float32)})
