"""ai.onnx.ml outputs WebNN cannot hold, finished on the host by InferenceSession: string class
labels (LinearClassifier, SVMClassifier, TreeEnsembleClassifier with classlabels_strings),
ZipMap's list of maps, LabelEncoder to strings; and the numeric encoders (LabelEncoder,
OneHotEncoder) in the graph. Compared with ONNX Runtime's session on both backends (string
arrays equal, map keys equal and values within 1e-5); webnn.onnx.load refuses host outputs."""

import numpy as np
import pytest

ort = pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")
import webnn
import webnn.onnx as wo
from onnx import TensorProto, helper
from ort_compare import BACKENDS

RNG = np.random.default_rng(5)
X = RNG.uniform(-1, 1, (6, 3)).astype(np.float32)
OPSETS = [helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 3)]


def _seq_map(key_type):
    value = helper.make_tensor_type_proto(TensorProto.FLOAT, [])
    return helper.make_sequence_type_proto(helper.make_map_type_proto(key_type, value))


def _model(nodes, inputs, outputs, opsets=OPSETS):
    graph = helper.make_graph(nodes, "g", inputs, outputs)
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 8
    return model


def _x_input(x=X, elem=TensorProto.FLOAT, name="X"):
    return helper.make_tensor_value_info(name, elem, list(x.shape))


def _same(got, want, where):
    if isinstance(want, list):  # ZipMap
        assert isinstance(got, list) and len(got) == len(want), where
        for g, w in zip(got, want):
            assert list(g) == list(w), where  # same keys, same order
            np.testing.assert_allclose(list(g.values()), list(w.values()), rtol=1e-5,
                                       atol=1e-6, err_msg=where)  # fmt: skip
        return
    assert got.dtype == want.dtype and got.shape == want.shape, (where, got, want)
    if want.dtype == object or not np.issubdtype(want.dtype, np.floating):
        np.testing.assert_array_equal(got, want, err_msg=where)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=where)


def assert_session_matches_onnxruntime(model, feeds):
    want = ort.InferenceSession(model.SerializeToString()).run(None, feeds)
    for backend in BACKENDS:
        context = webnn.ML().create_context(accelerated=False, backend=backend)
        got = wo.InferenceSession(model, context=context).run(None, feeds)
        for i, (g, w) in enumerate(zip(got, want)):
            _same(g, w, f"{backend}: output {i}")
    return want


LABELS = ["cat", "dog", "emu"]


def _linear_classifier(labels, rows):
    return helper.make_node(
        "LinearClassifier", ["X"], ["label", "scores"], domain="ai.onnx.ml",
        coefficients=RNG.uniform(-1, 1, rows * 3).tolist(), intercepts=[0.1] * rows,
        classlabels_strings=labels, post_transform="LOGISTIC",
    )  # fmt: skip


@pytest.mark.parametrize("labels,rows", [(LABELS, 3), (["no", "yes"], 1)])
def test_linear_classifier_string_labels_and_zipmap(labels, rows):
    nodes = [
        _linear_classifier(labels, rows),
        helper.make_node(
            "ZipMap", ["scores"], ["probs"], domain="ai.onnx.ml", classlabels_strings=labels
        ),
    ]
    outputs = [
        helper.make_tensor_value_info("label", TensorProto.STRING, [6]),
        helper.make_value_info("probs", _seq_map(TensorProto.STRING)),
    ]
    want = assert_session_matches_onnxruntime(_model(nodes, [_x_input()], outputs), {"X": X})
    assert len(set(want[0].tolist())) > 1


def test_svm_and_tree_classifiers_with_string_labels_and_an_int_zipmap():
    svm = helper.make_node(
        "SVMClassifier", ["X"], ["l1", "s1"], domain="ai.onnx.ml",
        classlabels_strings=LABELS, coefficients=RNG.uniform(-1, 1, 2 * 5).tolist(),
        kernel_params=[0.5, 0.0, 0.0], kernel_type="RBF", rho=[0.1, -0.2, 0.05],
        support_vectors=RNG.uniform(-1, 1, 5 * 3).tolist(), vectors_per_class=[2, 1, 2],
    )  # fmt: skip
    tree = helper.make_node(
        "TreeEnsembleClassifier", ["X"], ["l2", "s2"], domain="ai.onnx.ml",
        classlabels_strings=LABELS, nodes_treeids=[0, 0, 0], nodes_nodeids=[0, 1, 2],
        nodes_featureids=[1, 0, 0], nodes_values=[0.0, 0.0, 0.0],
        nodes_modes=["BRANCH_LEQ", "LEAF", "LEAF"], nodes_truenodeids=[1, 0, 0],
        nodes_falsenodeids=[2, 0, 0], class_treeids=[0, 0, 0, 0], class_nodeids=[1, 1, 2, 2],
        class_ids=[0, 2, 1, 2], class_weights=[0.7, 0.3, 0.6, 0.4],
    )  # fmt: skip
    zipmap = helper.make_node("ZipMap", ["s2"], ["m2"], domain="ai.onnx.ml",
                              classlabels_int64s=[10, 20, 30])  # fmt: skip
    outputs = [
        helper.make_tensor_value_info("l1", TensorProto.STRING, [6]),
        helper.make_tensor_value_info("s1", TensorProto.FLOAT, None),
        helper.make_tensor_value_info("l2", TensorProto.STRING, [6]),
        helper.make_value_info("m2", _seq_map(TensorProto.INT64)),
    ]
    model = _model([svm, tree, zipmap], [_x_input()], outputs)
    want = assert_session_matches_onnxruntime(model, {"X": X})
    assert set(want[2].tolist()) == {"cat", "dog"}


def _encoder_model(attrs, x, out_elem, opset=2, op_type="LabelEncoder"):
    node = helper.make_node(op_type, ["X"], ["Y"], domain="ai.onnx.ml", **attrs)
    elem = helper.np_dtype_to_tensor_dtype(x.dtype)
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", opset)]
    out = [helper.make_tensor_value_info("Y", out_elem, None)]
    return _model([node], [_x_input(x, elem)], out, opsets)


INTS = np.array([[3, 7, 1], [9, 3, 4]], np.int64)
FLOATS = np.array([0.5, np.nan, -2.0, 8.0, 0.5], np.float32)


@pytest.mark.parametrize(
    "attrs,x,out_elem,opset",
    [
        ({"keys_int64s": [1, 3, 9], "values_int64s": [10, 30, 90], "default_int64": -7},
         INTS, TensorProto.INT64, 2),
        ({"keys_int64s": [1, 3, 9], "values_floats": [0.1, 0.3, 0.9], "default_float": 2.5},
         INTS, TensorProto.FLOAT, 2),
        ({"keys_floats": [0.5, np.nan, 8.0], "values_int64s": [5, 6, 7]},
         FLOATS, TensorProto.INT64, 2),
        ({"keys_floats": [0.5, -2.0], "values_floats": [1.5, 3.0], "default_float": -1.0},
         FLOATS, TensorProto.FLOAT, 2),
        ({"keys_int64s": [1, 3, 9], "values_strings": ["one", "three", "nine"],
          "default_string": "?"}, INTS, TensorProto.STRING, 2),
        ({"keys_tensor": helper.make_tensor("k", TensorProto.INT64, [3], [1, 3, 9]),
          "values_tensor": helper.make_tensor("v", TensorProto.FLOAT, [3], [4, 5, 6]),
          "default_tensor": helper.make_tensor("d", TensorProto.FLOAT, [1], [-3])},
         INTS, TensorProto.FLOAT, 4),
        ({"keys_floats": [0.5, np.nan, 8.0], "values_int64s": [5, 6, 7]},
         FLOATS, TensorProto.INT64, 4),
    ],
    ids=["int-int", "int-float", "float-int-nan", "float-float", "int-string", "tensors",
         "nan-key-opset4"],
)  # fmt: skip
def test_label_encoder(attrs, x, out_elem, opset):
    assert_session_matches_onnxruntime(_encoder_model(attrs, x, out_elem, opset), {"X": x})


@pytest.mark.parametrize("x", [INTS, INTS[0], np.array([[3.0, 1.0], [9.0, 2.0]], np.float32)])
@pytest.mark.parametrize("zeros", [1, 0])
def test_one_hot_encoder(x, zeros):
    attrs = {"cats_int64s": [1, 3, 4, 9, 7, 2], "zeros": zeros}
    model = _encoder_model(attrs, x, TensorProto.FLOAT, 3, "OneHotEncoder")
    assert_session_matches_onnxruntime(model, {"X": x})
    context = webnn.ML().create_context(accelerated=False)
    got = context.compute(wo.load(context, model), {"X": x})["Y"]
    assert got.shape == x.shape + (6,) and got.sum() == x.size  # every value in one category


def test_load_refuses_host_outputs_and_a_node_reading_one_fails():
    nodes = [_linear_classifier(LABELS, 3)]
    outputs = [helper.make_tensor_value_info("label", TensorProto.STRING, [6])]
    model = _model(nodes, [_x_input()], outputs)
    context = webnn.ML().create_context(accelerated=False)
    with pytest.raises(wo.OnnxImportError, match="'label' \\(string tensor.*InferenceSession"):
        wo.load(context, model)
    reader = _model(
        nodes + [helper.make_node("Shape", ["label"], ["n"])],
        [_x_input()],
        [helper.make_tensor_value_info("n", TensorProto.INT64, None)],
    )
    with pytest.raises(wo.OnnxImportError, match="Shape.*reads a string tensor"):
        wo.InferenceSession(reader, context=context)


def test_string_inputs_are_refused_by_name():
    model = _encoder_model({"keys_int64s": [1], "values_floats": [1.0]}, INTS, TensorProto.FLOAT, 2)
    model.graph.node[0].ClearField("attribute")
    model.graph.node[0].attribute.extend([
        helper.make_attribute("keys_strings", ["a"]),
        helper.make_attribute("values_int64s", [1]),
    ])  # fmt: skip
    with pytest.raises(wo.OnnxImportError, match="string keys"):
        wo.load(webnn.ML().create_context(accelerated=False), model)


def test_convert_refuses_host_outputs(tmp_path):
    nodes = [_linear_classifier(LABELS, 3)]
    outputs = [helper.make_tensor_value_info("label", TensorProto.STRING, [6])]
    with pytest.raises(wo.OnnxImportError, match="'label' \\(string tensor"):
        wo.convert(_model(nodes, [_x_input()], outputs), tmp_path / "m.webnn")
    assert not (tmp_path / "m.webnn").exists()


WORDS = np.array([["b", "zz", "a"], ["c", "a", ""]], dtype=object)


def _string_model(nodes, outputs, opset=2):
    x = helper.make_tensor_value_info("S", TensorProto.STRING, list(WORDS.shape))
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", opset)]
    return _model(nodes, [x], outputs, opsets)


@pytest.mark.parametrize(
    "attrs,out_elem,opset",
    [
        ({"keys_strings": ["a", "b", "c"], "values_int64s": [1, 2, 3], "default_int64": 42},
         TensorProto.INT64, 2),
        ({"keys_strings": ["a", "c"], "values_floats": [0.5, 1.5]}, TensorProto.FLOAT, 2),
        ({"keys_strings": ["a", "b"], "values_strings": ["x", "y"], "default_string": "?"},
         TensorProto.STRING, 2),
        ({"keys_tensor": helper.make_tensor("k", TensorProto.STRING, [3], [b"a", b"b", b"c"]),
          "values_tensor": helper.make_tensor("v", TensorProto.INT64, [3], [0, 1, 2]),
          "default_tensor": helper.make_tensor("d", TensorProto.INT64, [1], [-5])},
         TensorProto.INT64, 4),
    ],
    ids=["string-int", "string-float", "string-string", "tensors"],
)  # fmt: skip
def test_label_encoder_from_a_string_input(attrs, out_elem, opset):
    node = helper.make_node("LabelEncoder", ["S"], ["Y"], domain="ai.onnx.ml", **attrs)
    model = _string_model([node], [helper.make_tensor_value_info("Y", out_elem, None)], opset)
    want = assert_session_matches_onnxruntime(model, {"S": WORDS})
    assert len(np.unique(want[0])) > 1
    # A str (not object) array is accepted too, as ORT accepts it.
    got = wo.InferenceSession(model).run(None, {"S": WORDS.astype(str)})[0]
    np.testing.assert_array_equal(got, want[0])


def test_category_mapper_both_ways_and_two_readers_of_one_input():
    cats = {"cats_strings": ["a", "b", "zz"], "cats_int64s": [7, 8, 9]}
    nodes = [
        helper.make_node(
            "CategoryMapper", ["S"], ["ids"], domain="ai.onnx.ml", default_int64=-3, **cats
        ),
        helper.make_node(
            "LabelEncoder",
            ["S"],
            ["codes"],
            domain="ai.onnx.ml",
            keys_strings=["c", ""],
            values_int64s=[100, 200],
        ),
        helper.make_node(
            "CategoryMapper", ["ids"], ["back"], domain="ai.onnx.ml", default_string="none", **cats
        ),
    ]
    outputs = [
        helper.make_tensor_value_info("ids", TensorProto.INT64, None),
        helper.make_tensor_value_info("codes", TensorProto.INT64, None),
        helper.make_tensor_value_info("back", TensorProto.STRING, None),
    ]
    model = _string_model(nodes, outputs)
    want = assert_session_matches_onnxruntime(model, {"S": WORDS})
    assert "none" in want[2] and -3 in want[0]
    with pytest.raises(wo.OnnxImportError, match="string inputs 'S'.*InferenceSession"):
        wo.load(webnn.ML().create_context(accelerated=False), model)


def test_a_string_input_read_by_another_operator_is_refused():
    nodes = [
        helper.make_node(
            "LabelEncoder", ["S"], ["Y"], domain="ai.onnx.ml", keys_strings=["a"], values_int64s=[1]
        ),
        helper.make_node("Identity", ["S"], ["T"]),
    ]
    outputs = [helper.make_tensor_value_info("Y", TensorProto.INT64, None),
               helper.make_tensor_value_info("T", TensorProto.STRING, None)]  # fmt: skip
    with pytest.raises(wo.OnnxImportError, match="graph input 'S': type tensor\\(string\\)"):
        wo.InferenceSession(_string_model(nodes, outputs))
