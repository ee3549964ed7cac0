"""SVMClassifier with Platt probabilities and many classes, run by webnn.onnx.InferenceSession
(which couples the probabilities on the host, host_svm.py) and compared with ONNX Runtime:
labels equal, scores within 1e-5 of max|ORT|. skl2onnx's SVC(probability=True) form with
string labels and a ZipMap after the classifier is included; webnn.onnx.load, whose graph
unrolls the coupling, refuses more classes than svm.MAX_UNROLLED_CLASSES by name."""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
import webnn
import webnn.onnx as wo
from onnx import TensorProto, helper
from ort_compare import BACKENDS
from test_onnx_svm import CLASSIFIER_OUT, FEATURES, _classifier_attrs, _model, _x
from webnn.onnx.ops.svm import MAX_UNROLLED_CLASSES


def _ort(model, feeds):
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(model.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])  # fmt: skip
    return session.run(None, feeds)


def _session_matches(model, x, rtol=1e-5):
    want = _ort(model, {"X": x})
    for backend in BACKENDS:
        got = wo.InferenceSession(model, providers=[backend]).run(None, {"X": x})
        np.testing.assert_array_equal(got[0], want[0], err_msg=backend)
        err = float(np.max(np.abs(got[1] - want[1])))
        assert got[1].shape == want[1].shape, backend
        assert err <= rtol * max(1.0, float(np.max(np.abs(want[1])))), (backend, err)
    return want


@pytest.mark.parametrize("classes", [3, 7, 17, 40, 120])
@pytest.mark.parametrize("kernel", ["RBF", "POLY"])
def test_many_class_probabilities_match_onnxruntime(classes, kernel):
    attrs = _classifier_attrs(classes + len(kernel), classes, kernel, True, "NONE")
    model = _model("SVMClassifier", attrs, CLASSIFIER_OUT)
    want = _session_matches(model, _x(classes))
    assert np.ptp(want[1]) > 1e-3 / classes  # not a degenerate model


@pytest.mark.parametrize("post", ["LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO", "PROBIT"])
def test_post_transforms_of_host_probabilities(post):
    attrs = _classifier_attrs(21, 5, "RBF", True, post)
    _session_matches(_model("SVMClassifier", attrs, CLASSIFIER_OUT), _x(4))


def test_two_hundred_classes_and_many_rows():
    # The case that took 56 s to import when the coupling was unrolled in the graph.
    attrs = _classifier_attrs(2, 200, "RBF", True, "NONE", per_class=[2] * 200)
    model = _model("SVMClassifier", attrs, [
        helper.make_tensor_value_info("label", TensorProto.INT64, None),
        helper.make_tensor_value_info("scores", TensorProto.FLOAT, None)], rows=300)  # fmt: skip
    x = np.random.default_rng(7).uniform(-2, 2, (300, FEATURES)).astype(np.float32)
    want = _ort(model, {"X": x})
    session = wo.InferenceSession(model)
    got = session.run(None, {"X": x})
    np.testing.assert_array_equal(got[0], want[0])
    assert float(np.max(np.abs(got[1] - want[1]))) <= 1e-5


def test_string_labels_and_zipmap_as_skl2onnx_writes_them():
    # skl2onnx's SVC(probability=True) on string classes: label strings, probabilities read by
    # a ZipMap (a later node: the session cuts the graph there and ZipMaps in a second one).
    classes = 24
    attrs = _classifier_attrs(4, classes, "RBF", True, "NONE")
    names = [f"class_{i}" for i in range(classes)]
    attrs["classlabels_strings"] = names
    del attrs["classlabels_ints"]
    nodes = [
        helper.make_node(
            "SVMClassifier", ["X"], ["label", "probability_tensor"], domain="ai.onnx.ml", **attrs
        ),
        helper.make_node("Cast", ["label"], ["output_label"], to=TensorProto.STRING),
        helper.make_node(
            "ZipMap",
            ["probability_tensor"],
            ["output_probability"],
            domain="ai.onnx.ml",
            classlabels_strings=names,
        ),
    ]
    x_info = helper.make_tensor_value_info("X", TensorProto.FLOAT, [None, FEATURES])
    outputs = [
        helper.make_tensor_value_info("output_label", TensorProto.STRING, [None]),
        helper.make_value_info(
            "output_probability",
            helper.make_sequence_type_proto(
                helper.make_map_type_proto(
                    TensorProto.STRING, helper.make_tensor_type_proto(TensorProto.FLOAT, [])
                )
            ),
        ),
    ]
    model = helper.make_model(
        helper.make_graph(nodes, "svc", [x_info], outputs),
        opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 3)],
    )
    model.ir_version = 8
    x = _x(3)
    want_labels, want_maps = _ort(model, {"X": x})
    session = wo.InferenceSession(model)
    for rows in (x, x[:2]):  # a second shape: its own first graph, the same rest
        got_labels, got_maps = session.run(None, {"X": rows})
        assert list(got_labels) == list(want_labels[: len(rows)])
        assert len(got_maps) == len(rows)
        for got, want in zip(got_maps, want_maps):
            assert sorted(got) == sorted(want)
            assert max(abs(got[k] - want[k]) for k in want) <= 1e-5
    with pytest.raises(wo.OnnxImportError, match="InferenceSession"):
        wo.load(
            webnn.ML().create_context(accelerated=False), model, input_shapes={"X": [3, FEATURES]}
        )


def test_load_unrolls_up_to_the_bound_and_refuses_more_classes():
    context = webnn.ML().create_context(accelerated=False)
    small = _model("SVMClassifier", _classifier_attrs(1, 4, "RBF", True, "NONE"), CLASSIFIER_OUT)
    x = _x(2)
    got = context.compute(wo.load(context, small), {"X": x})
    want = _ort(small, {"X": x})
    np.testing.assert_array_equal(got["label"], want[0])
    assert float(np.max(np.abs(got["scores"] - want[1]))) <= 1e-5
    classes = MAX_UNROLLED_CLASSES + 1
    big = _model("SVMClassifier", _classifier_attrs(1, classes, "RBF", True, "NONE"),
                 CLASSIFIER_OUT)  # fmt: skip
    with pytest.raises(wo.OnnxImportError, match=rf"SVMClassifier.*{classes} classes.*Inference"):
        wo.load(context, big)
