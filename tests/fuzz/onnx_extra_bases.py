"""Small hand-made base models for the ONNX importer fuzz target: operators the onnx node tests
do not cover (SVMs, v3 tree ensembles, ZipMap, string labels, OneHotEncoder) and shapes that
reach the converters' host and bounded paths (a run-time NonMaxSuppression feeding a Gather,
scatters with run-time indices and a reduction, TopK over a long axis, pool auto_pad, double
models). The structured mutations change their attributes and wiring like any base's."""

import numpy as np


def _models():
    from onnx import TensorProto as T
    from onnx import helper as h
    from onnx import numpy_helper as nh

    def vi(name, elem, shape):
        return h.make_tensor_value_info(name, elem, shape)

    def model(nodes, inputs, outputs, inits=(), ml=None, opset=17):
        ops = [h.make_opsetid("", opset)]
        if ml:
            ops.append(h.make_opsetid("ai.onnx.ml", ml))
        g = h.make_graph(nodes, "g", inputs, outputs, list(inits))
        return h.make_model(g, opset_imports=ops, ir_version=10)

    x = [vi("x", T.FLOAT, [2, 3])]
    ml = {"domain": "ai.onnx.ml"}
    out = {}
    out["svm_classifier_rbf_proba"] = model(
        [h.make_node("SVMClassifier", ["x"], ["label", "scores"], **ml, classlabels_ints=[0, 1, 2],
                     kernel_type="RBF", kernel_params=[0.5, 0.0, 3.0], vectors_per_class=[1, 2, 1],
                     support_vectors=[0.1 * v for v in range(12)],
                     coefficients=[1.0, -1.0, 0.5, 0.2, 0.3, -0.7, 0.4, 0.1],
                     rho=[0.1, 0.2, 0.3], prob_a=[-1.0, -2.0, -1.5], prob_b=[0.1, 0.0, -0.1])],
        x, [vi("label", T.INT64, [2]), vi("scores", T.FLOAT, [2, 3])], ml=1)  # fmt: skip
    out["svm_classifier_linear_strings"] = model(
        [h.make_node("SVMClassifier", ["x"], ["label", "scores"], **ml,
                     classlabels_strings=["a", "b"], kernel_type="LINEAR",
                     coefficients=[1.0, -2.0, 0.5, 0.2, 0.3, -0.7], rho=[0.1],
                     post_transform="LOGISTIC")],
        x, [vi("label", T.STRING, [2]), vi("scores", T.FLOAT, [2, 2])], ml=1)  # fmt: skip
    out["svm_regressor_poly"] = model(
        [h.make_node("SVMRegressor", ["x"], ["y"], **ml, kernel_type="POLY",
                     kernel_params=[0.5, 1.0, 2.0], n_supports=2, support_vectors=[0.1] * 6,
                     coefficients=[1.0, -2.0], rho=[0.5])],
        x, [vi("y", T.FLOAT, [2, 1])], ml=1)  # fmt: skip
    tree = {"nodes_treeids": [0] * 5, "nodes_nodeids": [0, 1, 2, 3, 4],
            "nodes_featureids": [0, 1, 0, 0, 0],
            "nodes_modes": ["BRANCH_LEQ", "BRANCH_GT", "LEAF", "LEAF", "LEAF"],
            "nodes_values": [0.5, 1.0, 0, 0, 0], "nodes_truenodeids": [1, 2, 0, 0, 0],
            "nodes_falsenodeids": [4, 3, 0, 0, 0],
            "nodes_missing_value_tracks_true": [1, 0, 0, 0, 0]}  # fmt: skip
    out["tree_ensemble_classifier_zipmap"] = model(
        [h.make_node("TreeEnsembleClassifier", ["x"], ["label", "p"], **ml, **tree,
                     class_treeids=[0] * 6, class_nodeids=[2, 2, 3, 3, 4, 4],
                     class_ids=[0, 1] * 3, class_weights=[0.9, 0.1, 0.2, 0.8, 0.5, 0.5],
                     classlabels_strings=["no", "yes"]),
         h.make_node("ZipMap", ["p"], ["probs"], **ml, classlabels_strings=["no", "yes"])],
        x, [vi("label", T.STRING, [2]),
            h.make_tensor_sequence_value_info("probs", T.FLOAT, None)], ml=1)  # fmt: skip
    out["tree_ensemble_regressor"] = model(
        [h.make_node("TreeEnsembleRegressor", ["x"], ["y"], **ml, **tree, n_targets=2,
                     target_treeids=[0, 0, 0], target_nodeids=[2, 3, 4], target_ids=[0, 1, 1],
                     target_weights=[1.0, 2.0, 3.0], aggregate_function="MAX")],
        x, [vi("y", T.FLOAT, [2, 2])], ml=3)  # fmt: skip
    out["tree_ensemble_v5"] = model(
        [h.make_node("TreeEnsemble", ["x"], ["y"], **ml, nodes_featureids=[0, 1, 2],
                     nodes_splits=nh.from_array(np.array([0.5, 1.0, 0.0], np.float32)),
                     nodes_modes=nh.from_array(np.array([0, 3, 6], np.uint8)),
                     membership_values=nh.from_array(np.array([1.0, 2.0, np.nan], np.float32)),
                     nodes_truenodeids=[1, 0, 1], nodes_trueleafs=[0, 1, 1],
                     nodes_falsenodeids=[2, 1, 2], nodes_falseleafs=[0, 1, 1],
                     leaf_targetids=[0, 1, 0], leaf_weights=nh.from_array(
                         np.array([1.0, 2.0, 3.0], np.float32)),
                     tree_roots=[0, 2], n_targets=2, aggregate_function=1, post_transform=0)],
        x, [vi("y", T.FLOAT, [2, 2])], ml=5, opset=21)  # fmt: skip
    out["onehot_label_encoder"] = model(
        [h.make_node("OneHotEncoder", ["i"], ["oh"], **ml, cats_int64s=[1, 3, 5], zeros=1),
         h.make_node("LabelEncoder", ["i"], ["s"], **ml, keys_int64s=[1, 3],
                     values_strings=["one", "three"], default_string="?")],
        [vi("i", T.INT64, [2, 3])], [vi("oh", T.FLOAT, [2, 3, 3]), vi("s", T.STRING, [2, 3])],
        ml=2)  # fmt: skip
    out["nms_gather_host_cut"] = model(
        [h.make_node("NonMaxSuppression", ["boxes", "scores", "mo", "iou", "st"], ["sel"]),
         h.make_node("Gather", ["sel", "two"], ["bi"], axis=1),
         h.make_node("Squeeze", ["boxes", "zero"], ["b2"]),
         h.make_node("Gather", ["b2", "bi"], ["picked"], axis=0),
         h.make_node("NonZero", ["picked"], ["nz"])],
        [vi("boxes", T.FLOAT, [1, 4, 4]), vi("scores", T.FLOAT, [1, 1, 4])],
        [vi("picked", T.FLOAT, None), vi("nz", T.INT64, None)],
        [nh.from_array(np.array([3], np.int64), "mo"), nh.from_array(np.array([0.5], np.float32), "iou"),
         nh.from_array(np.array([0.0], np.float32), "st"), nh.from_array(np.array(2, np.int64), "two"),
         nh.from_array(np.array([0], np.int64), "zero")])  # fmt: skip
    out["scatter_reduce_runtime_topk"] = model(
        [h.make_node("ScatterElements", ["d", "i", "u"], ["s"], axis=1, reduction="add"),
         h.make_node("TopK", ["s", "k"], ["v", "vi"], axis=1, largest=0)],
        [vi("d", T.FLOAT, [2, 6]), vi("i", T.INT64, [2, 3]), vi("u", T.FLOAT, [2, 3])],
        [vi("v", T.FLOAT, [2, 4]), vi("vi", T.INT64, [2, 4])],
        [nh.from_array(np.array([4], np.int64), "k")], opset=18)  # fmt: skip
    out["scatter_nd_max_tfidf"] = model(
        [h.make_node("ScatterND", ["d", "i", "u"], ["s"], reduction="max"),
         h.make_node("TfIdfVectorizer", ["t"], ["tf"], mode="TFIDF", min_gram_length=1,
                     max_gram_length=2, max_skip_count=1, ngram_counts=[0, 3],
                     ngram_indexes=[0, 1, 2, 3, 4], pool_int64s=[2, 3, 5, 2, 3, 5, 4],
                     weights=[1.0, 0.5, 2.0, 1.5, 0.25])],
        [vi("d", T.FLOAT, [4, 3]), vi("i", T.INT64, [2, 1]), vi("u", T.FLOAT, [2, 3]),
         vi("t", T.INT64, [2, 6])], [vi("s", T.FLOAT, [4, 3]), vi("tf", T.FLOAT, [2, 5])],
        opset=18)  # fmt: skip
    out["pool_auto_pad_double"] = model(
        [h.make_node("MaxPool", ["p"], ["mp"], kernel_shape=[3, 3], strides=[2, 2],
                     auto_pad="SAME_UPPER"),
         h.make_node("AveragePool", ["p"], ["ap"], kernel_shape=[2, 3], strides=[1, 2],
                     auto_pad="SAME_LOWER", count_include_pad=1),
         h.make_node("Cast", ["ap"], ["apd"], to=T.DOUBLE),
         h.make_node("Mul", ["apd", "dw"], ["y"])],
        [vi("p", T.FLOAT, [1, 1, 5, 7])], [vi("mp", T.FLOAT, None), vi("y", T.DOUBLE, None)],
        [nh.from_array(np.array([1.5], np.float64), "dw")])  # fmt: skip
    out.update(_sequence_models(model, vi, T, h, nh))
    return out


def _sequence_models(model, vi, T, h, nh):
    """Sequences and optionals held at import (python/webnn/onnx): split / map / concat as torch
    exports them, insert and erase at negative positions, a Loop appending to a sequence that
    starts empty, SequenceMap, Optional. Tensor inputs only: the target feeds tensors."""

    def i64(name, v):
        return nh.from_array(np.array(v, np.int64), name)

    seq = h.make_tensor_sequence_value_info
    x = [vi("x", T.FLOAT, [2, 6])]
    out = {}
    out["seq_split_at_construct_concat"] = model(
        [h.make_node("SplitToSequence", ["x", "sizes"], ["parts"], axis=1),
         h.make_node("SequenceLength", ["parts"], ["n"]),
         h.make_node("SequenceAt", ["parts", "one"], ["p1"]),
         h.make_node("SequenceAt", ["parts", "minus1"], ["p2"]),
         h.make_node("Mul", ["p1", "p1"], ["q1"]),
         h.make_node("SequenceConstruct", ["q1", "p2", "q1"], ["s"]),
         h.make_node("ConcatFromSequence", ["s"], ["cat"], axis=-1),
         h.make_node("SplitToSequence", ["x"], ["rows"], axis=0, keepdims=0),
         h.make_node("ConcatFromSequence", ["rows"], ["stacked"], axis=1, new_axis=1)],
        x, [vi("cat", T.FLOAT, [2, 8]), vi("stacked", T.FLOAT, [6, 2]), vi("n", T.INT64, [])],
        [i64("sizes", [1, 3, 2]), i64("one", 1), i64("minus1", -1)])  # fmt: skip
    out["seq_empty_insert_erase"] = model(
        [h.make_node("SequenceEmpty", [], ["e"], dtype=T.FLOAT),
         h.make_node("SequenceInsert", ["e", "x"], ["s1"]),
         h.make_node("SequenceInsert", ["s1", "y", "zero"], ["s2"]),
         h.make_node("SequenceInsert", ["s2", "x", "minus1"], ["s3"]),
         h.make_node("SequenceErase", ["s3", "minus2"], ["s4"]),
         h.make_node("SequenceErase", ["s4"], ["s5"]),
         h.make_node("SequenceAt", ["s3", "minus1"], ["at"]),
         h.make_node("ConcatFromSequence", ["s5"], ["cat"], axis=0, new_axis=1),
         h.make_node("SequenceLength", ["s3"], ["n"])],
        [vi("x", T.FLOAT, [2, 3]), vi("y", T.FLOAT, [2, 3])],
        [vi("cat", T.FLOAT, [1, 2, 3]), vi("at", T.FLOAT, [2, 3]), vi("n", T.INT64, [])],
        [i64("zero", 0), i64("minus1", -1), i64("minus2", -2)])  # fmt: skip
    body = h.make_graph(
        [h.make_node("Cast", ["i"], ["fi"], to=T.FLOAT),
         h.make_node("Mul", ["x", "fi"], ["scaled"]),
         h.make_node("SequenceInsert", ["acc", "scaled"], ["acc_out"]),
         h.make_node("Identity", ["cond"], ["cond_out"])],
        "body", [vi("i", T.INT64, []), vi("cond", T.BOOL, []), seq("acc", T.FLOAT, None)],
        [vi("cond_out", T.BOOL, []), seq("acc_out", T.FLOAT, None)])  # fmt: skip
    out["seq_loop_appends"] = model(
        [h.make_node("SequenceEmpty", [], ["e"], dtype=T.FLOAT),
         h.make_node("Loop", ["trip", "", "e"], ["s"], body=body),
         h.make_node("ConcatFromSequence", ["s"], ["stacked"], axis=0, new_axis=1),
         h.make_node("SequenceLength", ["s"], ["n"])],
        [vi("x", T.FLOAT, [3])], [vi("stacked", T.FLOAT, [4, 3]), vi("n", T.INT64, [])],
        [i64("trip", 4)])  # fmt: skip
    map_body = h.make_graph(
        [h.make_node("Relu", ["a"], ["r"]), h.make_node("Add", ["r", "t"], ["o"])],
        "map", [vi("a", T.FLOAT, [1, 6]), vi("t", T.FLOAT, [6])], [vi("o", T.FLOAT, [1, 6])])  # fmt: skip
    out["seq_map_with_a_tensor"] = model(
        [h.make_node("SplitToSequence", ["x"], ["parts"], axis=0),
         h.make_node("SequenceMap", ["parts", "b"], ["mapped"], body=map_body),
         h.make_node("ConcatFromSequence", ["mapped"], ["cat"], axis=0)],
        x + [vi("b", T.FLOAT, [6])], [vi("cat", T.FLOAT, [2, 6])])  # fmt: skip
    opt = h.make_tensor_type_proto(T.FLOAT, [2, 6])
    out["optional_wrap_and_unwrap"] = model(
        [h.make_node("Optional", ["x"], ["o"]),
         h.make_node("OptionalHasElement", ["o"], ["has"]),
         h.make_node("OptionalGetElement", ["o"], ["got"]),
         h.make_node("Optional", [], ["none"], type=opt),
         h.make_node("OptionalHasElement", ["none"], ["has_none"]),
         h.make_node("Neg", ["got"], ["y"])],
        x, [vi("y", T.FLOAT, [2, 6]), vi("has", T.BOOL, []), vi("has_none", T.BOOL, [])],
        opset=18)  # fmt: skip
    return out


def extra_models():
    """(name, ModelProto) of the hand-made bases, sorted by name."""
    return sorted(_models().items())
