"""Hostile attributes and run-time values for the newer converters (issue 8): tree ensembles
(v5 tables, cycles, shared nodes, deep trees), SVMs, TfIdfVectorizer, host-side Range and the
InferenceSession's declared shapes and string outputs. Each is refused by an OnnxImportError
naming the node (or graph input / output) and the reason, quickly; the valid ones match ORT."""

import time

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
import webnn
import webnn.onnx as wo
from onnx import TensorProto as T
from onnx import helper
from onnx import numpy_helper as nh

X = np.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 0.25]], np.float32)


@pytest.fixture(scope="module")
def ctx():
    return webnn.ML().create_context(accelerated=False, backend="cpu")


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def model(nodes, inputs, outputs, inits=(), ml=None, opset=17):
    ops = [helper.make_opsetid("", opset)]
    if ml:
        ops.append(helper.make_opsetid("ai.onnx.ml", ml))
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    return helper.make_model(graph, opset_imports=ops, ir_version=10)


def refused(ctx, m, *needles, feeds=None, base_dir=None):
    """The OnnxImportError's message, checked to contain every needle."""
    with pytest.raises(wo.OnnxImportError) as info:
        session = wo.InferenceSession(m, context=ctx, base_dir=base_dir)
        session.run(None, feeds if feeds is not None else {"x": X})
    text = str(info.value)
    for needle in needles:
        assert needle in text, text
    return text


# -- TreeEnsemble (ai.onnx.ml opset 5) ------------------------------------------------------
def tree_v5(n_splits, true_ids, true_leaf, false_ids, false_leaf, leaf_weights, **extra):
    attrs = {
        "nodes_featureids": [0] * n_splits,
        "nodes_splits": nh.from_array(np.linspace(-1, 1, n_splits).astype(np.float32)),
        "nodes_modes": nh.from_array(np.zeros(n_splits, np.uint8)),
        "nodes_truenodeids": true_ids,
        "nodes_trueleafs": true_leaf,
        "nodes_falsenodeids": false_ids,
        "nodes_falseleafs": false_leaf,
        "leaf_targetids": [0] * len(leaf_weights),
        "leaf_weights": nh.from_array(np.asarray(leaf_weights, np.float32)),
        "tree_roots": [0],
        "n_targets": 1,
        "aggregate_function": 1,
        "post_transform": 0,
    }
    attrs.update(extra)
    node = helper.make_node("TreeEnsemble", ["x"], ["y"], domain="ai.onnx.ml", name="te", **attrs)
    return model([node], [vi("x", T.FLOAT, [2, 3])], [vi("y", T.FLOAT, [2, 1])], ml=5, opset=21)


def test_tree_v5_split_with_two_parents_is_refused_at_once(ctx):
    # Each split's children are both the next split: 40 levels are 2^40 root-to-leaf paths;
    # unrolling it into a tree hung the import.
    n = 40
    ids = list(range(1, n)) + [0]
    m = tree_v5(n, ids, [0] * (n - 1) + [1], ids, [0] * (n - 1) + [1], [1.0])
    start = time.perf_counter()
    refused(ctx, m, "node 'te' (ai.onnx.ml::TreeEnsemble", "node 39 is reached twice")
    assert time.perf_counter() - start < 5


def test_tree_v5_cycle_is_refused(ctx):
    m = tree_v5(2, [0, 1], [1, 1], [1, 0], [0, 0], [1.0, 2.0])
    refused(ctx, m, "node 'te'", "is reached twice")


def test_tree_v5_negative_mode_is_refused(ctx):
    # -1 indexed the mode table from its end (BRANCH_MEMBER) instead of being refused.
    m = tree_v5(2, [0, 1], [1, 1], [1, 2], [0, 1], [1.0, 2.0, 3.0],
                nodes_modes=nh.from_array(np.array([0, -1], np.int8)),
                membership_values=nh.from_array(np.array([1.0, np.nan], np.float32)))  # fmt: skip
    refused(ctx, m, "node 'te'", "node mode -1 (0-6)")


def test_tree_v5_deep_tree_matches_ort(ctx):
    # 3000 levels (a split per level, the true child a leaf): past Python's recursion limit,
    # where the import failed with RecursionError.
    ort = pytest.importorskip("onnxruntime")
    n = 3000
    m = tree_v5(n, list(range(n)), [1] * n, list(range(1, n)) + [n], [0] * (n - 1) + [1],
                np.arange(n + 1, dtype=np.float32))  # fmt: skip
    x = np.array([[0.3, 0, 0], [2.0, 0, 0]], np.float32)
    want = ort.InferenceSession(m.SerializeToString()).run(None, {"x": x})[0]
    got = wo.InferenceSession(m, context=ctx).run(None, {"x": x})[0]
    np.testing.assert_array_equal(got, want)


def _with_external_splits(m, location):
    attr = next(a for a in m.graph.node[0].attribute if a.name == "nodes_splits")
    attr.t.ClearField("raw_data")
    attr.t.ClearField("float_data")
    attr.t.data_location = T.EXTERNAL
    entry = attr.t.external_data.add()
    entry.key, entry.value = "location", location
    return m


@pytest.mark.parametrize("location", ["", "/etc/passwd", "../w.bin", "missing.bin"])
def test_tree_v5_tensor_attribute_external_data_is_checked(ctx, tmp_path, location):
    # Found by the fuzzer: onnx's to_array read an attribute's external data relative to the
    # working directory (any path), raising onnx's ValidationError for an empty location.
    m = _with_external_splits(tree_v5(1, [0], [1], [1], [1], [1.0, 2.0]), location)
    refused(ctx, m, "node 'te'", "attribute 'nodes_splits'", base_dir=tmp_path)


def test_tree_v5_tensor_attribute_external_data_from_the_model_directory(ctx, tmp_path):
    np.array([0.5], np.float32).tofile(tmp_path / "splits.bin")
    m = _with_external_splits(tree_v5(1, [0], [1], [1], [1], [1.0, 2.0]), "splits.bin")
    got = wo.InferenceSession(m, context=ctx, base_dir=tmp_path).run(None, {"x": X})[0]
    np.testing.assert_array_equal(got, [[2.0], [1.0]])  # x0 <= 0.5: the true leaf (1.0)


# -- SVMClassifier --------------------------------------------------------------------------
def test_svm_negative_vectors_per_class_is_refused(ctx):
    # [2, -1, 2] sums to 3 vectors: the counts were used as slice lengths, a silent result.
    node = helper.make_node(
        "SVMClassifier", ["x"], ["label", "scores"], domain="ai.onnx.ml", name="svc",
        classlabels_ints=[0, 1, 2], kernel_type="RBF", kernel_params=[0.5, 0.0, 3.0],
        vectors_per_class=[2, -1, 2], support_vectors=[0.1] * 9,
        coefficients=[1.0, -1.0, 0.5, 0.2, 0.3, -0.7], rho=[0.1, 0.2, 0.3],
    )  # fmt: skip
    m = model([node], [vi("x", T.FLOAT, [2, 3])],
              [vi("label", T.INT64, [2]), vi("scores", T.FLOAT, [2, 3])], ml=1)  # fmt: skip
    refused(ctx, m, "node 'svc' (ai.onnx.ml::SVMClassifier", "negative count")


def test_string_labels_declared_int64_say_so(ctx):
    # The model declares its label output int64 but the classifier's labels are strings:
    # numpy's "invalid literal for int()" came out of run.
    node = helper.make_node(
        "SVMClassifier", ["x"], ["label", "scores"], domain="ai.onnx.ml", name="svc",
        classlabels_strings=["a", "b"], kernel_type="LINEAR",
        coefficients=[1.0, -2.0, 0.5, 0.2, 0.3, -0.7], rho=[0.1],
    )  # fmt: skip
    m = model([node], [vi("x", T.FLOAT, [2, 3])],
              [vi("label", T.INT64, [2]), vi("scores", T.FLOAT, [2, 2])], ml=1)  # fmt: skip
    refused(ctx, m, "graph output 'label'", "returns strings")


# -- TfIdfVectorizer ------------------------------------------------------------------------
TOKENS = np.array([[2, 3, 5, 4, 2, 3], [5, 4, 4, 2, 3, 5]], np.int64)


def tfidf(**over):
    attrs = {"mode": "TF", "min_gram_length": 1, "max_gram_length": 2, "max_skip_count": 0,
             "ngram_counts": [0, 3], "ngram_indexes": [0, 1, 2, 3, 4],
             "pool_int64s": [2, 3, 5, 2, 3, 5, 4]}  # fmt: skip
    attrs.update(over)
    node = helper.make_node("TfIdfVectorizer", ["x"], ["y"], name="tfidf", **attrs)
    return model([node], [vi("x", T.INT64, [2, 6])], [vi("y", T.FLOAT, None)])


def test_tfidf_valid_matches_ort(ctx):
    ort = pytest.importorskip("onnxruntime")
    m = tfidf(ngram_indexes=[4, 0, 2, 1, 3], max_skip_count=1)
    want = ort.InferenceSession(m.SerializeToString()).run(None, {"x": TOKENS})[0]
    got = wo.InferenceSession(m, context=ctx).run(None, {"x": TOKENS})[0]
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    "attrs, reason",
    [
        # -1 wrote to the last output column (a silent wrong result); 2^40 allocated a list of
        # 2^40 entries (MemoryError).
        ({"ngram_indexes": [0, -1, 2, 3, 4]}, "ngram_indexes [0, -1, 2, 3, 4]"),
        ({"ngram_indexes": [0, 1, 2, 3, 2**40]}, "output positions from 0 to"),
        # Descending, negative or past the pool: Python slices of the pool, silently.
        ({"ngram_counts": [3, 0]}, "ngram_counts [3, 0]"),
        ({"ngram_counts": [0, -2]}, "ngram_counts [0, -2]"),
        ({"ngram_counts": [0, 100]}, "ngram_counts [0, 100]"),
        ({"max_skip_count": -5}, "max_skip_count -5"),
    ],
)
def test_tfidf_bad_tables_are_refused(ctx, attrs, reason):
    refused(ctx, tfidf(**attrs), "node 'tfidf' (ai.onnx::TfIdfVectorizer", reason,
            feeds={"x": TOKENS})  # fmt: skip


# -- host-side Range and the session's declared shapes --------------------------------------
def range_from_run_time_limit():
    nodes = [
        helper.make_node("Cast", ["x"], ["limit"], to=T.INT64),
        helper.make_node("Range", ["start", "limit", "delta"], ["r"], name="rng"),
    ]
    inits = [nh.from_array(np.array(0, np.int64), "start"),
             nh.from_array(np.array(1, np.int64), "delta")]  # fmt: skip
    return model(nodes, [vi("x", T.FLOAT, [])], [vi("r", T.INT64, None)], inits)


def test_host_range_runs(ctx):
    session = wo.InferenceSession(range_from_run_time_limit(), context=ctx)
    got = session.run(None, {"x": np.array(5, np.float32)})[0]
    np.testing.assert_array_equal(got, np.arange(5))


def test_host_range_of_absurd_size_is_refused(ctx):
    # A run-time limit of 2^40: the reference evaluator allocated it (8 TB).
    refused(ctx, range_from_run_time_limit(), "node 'rng' (Range, run on the host)",
            "above the bound", feeds={"x": np.array(2**40, np.float32)})  # fmt: skip


def test_session_with_absurd_declared_input_shape_names_it(ctx):
    # The session imports a model of fixed input shapes at construction, from a feed of zeros
    # of those shapes: [2^40, 2^40] made numpy raise "array is too big".
    node = helper.make_node("Relu", ["d"], ["o"], name="relu")
    m = model([node], [vi("d", T.FLOAT, [2**40, 2**40])], [vi("o", T.FLOAT, None)])
    with pytest.raises(wo.OnnxImportError, match="graph input 'd': declared shape"):
        wo.InferenceSession(m, context=ctx)


# -- LabelEncoder / OneHotEncoder tables with repeated keys ---------------------------------
LABEL_INPUT = np.array([[1, 3, 5], [7, 3, 1]], np.int64)
WORDS = np.array([["a", "b", "c"], ["b", "a", "zz"]], object)


@pytest.mark.parametrize(
    "attrs, elem, out_elem, feed",
    [
        # ORT keeps the first value of a repeated key; the string paths kept the last.
        ({"keys_int64s": [1, 3, 1], "values_strings": ["x", "y", "z"]}, T.INT64, T.STRING,
         LABEL_INPUT),
        ({"keys_int64s": [3, 3], "values_int64s": [10, 30]}, T.INT64, T.INT64, LABEL_INPUT),
        ({"keys_strings": ["a", "b", "a"], "values_int64s": [10, 20, 30]}, T.STRING, T.INT64,
         WORDS),
        ({"keys_strings": ["b", "b"], "values_strings": ["p", "q"]}, T.STRING, T.STRING, WORDS),
    ],
)  # fmt: skip
def test_label_encoder_repeated_keys_match_ort(ctx, attrs, elem, out_elem, feed):
    ort = pytest.importorskip("onnxruntime")
    node = helper.make_node("LabelEncoder", ["i"], ["o"], domain="ai.onnx.ml", name="le", **attrs)
    m = model([node], [vi("i", elem, [2, 3])], [vi("o", out_elem, [2, 3])], ml=4)
    want = ort.InferenceSession(m.SerializeToString()).run(None, {"i": feed})[0]
    got = wo.InferenceSession(m, context=ctx).run(None, {"i": feed})[0]
    np.testing.assert_array_equal(got, want)


def test_one_hot_encoder_repeated_category_matches_ort(ctx):
    # ORT makes a repeated category hot in its last column only; both columns were hot.
    ort = pytest.importorskip("onnxruntime")
    node = helper.make_node("OneHotEncoder", ["i"], ["o"], domain="ai.onnx.ml", name="oh",
                            cats_int64s=[1, 3, 1, 5])  # fmt: skip
    m = model([node], [vi("i", T.INT64, [2, 3])], [vi("o", T.FLOAT, [2, 3, 4])], ml=1)
    want = ort.InferenceSession(m.SerializeToString()).run(None, {"i": LABEL_INPUT})[0]
    got = wo.InferenceSession(m, context=ctx).run(None, {"i": LABEL_INPUT})[0]
    np.testing.assert_array_equal(got, want)


def test_empty_constant_graph_output_names_the_output(ctx):
    # Range(5, 0, 1) folds to an empty tensor, which WebNN cannot hold: the message said so
    # without naming the output.
    node = helper.make_node("Range", ["s", "l", "d"], ["r"], name="rng")
    inits = [nh.from_array(np.array(v, np.int64), k) for k, v in (("s", 5), ("l", 0), ("d", 1))]
    m = model([node], [], [vi("r", T.INT64, None)], inits)
    with pytest.raises(wo.OnnxImportError, match="graph output 'r': an empty tensor"):
        wo.load(ctx, m)


def test_host_nodes_growing_their_values_stop_at_the_bound(ctx, monkeypatch):
    # NonZero of a [2, n] tensor is up to [2, 2n]: a chain of NonZero -> Cast grows at every
    # host step; fifty steps ran the machine out of memory (24 GB) before the bound.
    from webnn.onnx import host_cuts

    monkeypatch.setattr(host_cuts, "MAX_HOST_ELEMENTS", 64)
    nodes = [helper.make_node("Relu", ["x"], ["a0"])]
    for i in range(8):
        nodes += [helper.make_node("NonZero", [f"a{i}"], [f"b{i}"], name=f"nz{i}"),
                  helper.make_node("Cast", [f"b{i}"], [f"a{i + 1}"], to=T.FLOAT)]  # fmt: skip
    m = model(nodes, [vi("x", T.FLOAT, [2, 3])], [vi("a8", T.FLOAT, None)])
    text = refused(ctx, m, "(NonZero, run on the host)", "above the bound of 64 elements")
    assert "node 'nz" in text


# -- scatters with a reduction and indices known at import ----------------------------------
@pytest.mark.parametrize("reduction", ["add", "mul", "max", "min"])
def test_scatter_elements_reduction_constant_index_out_of_range_is_refused(ctx, reduction):
    # ORT refuses index 5 of an axis of 3; the gather/scatter rounds clamped it, silently.
    node = helper.make_node("ScatterElements", ["d", "i", "u"], ["o"], axis=1,
                            reduction=reduction, name="sc")  # fmt: skip
    idx = nh.from_array(np.array([[0, 5, -1], [1, 1, 1]], np.int64), "i")
    m = model([node], [vi("d", T.FLOAT, [2, 3]), vi("u", T.FLOAT, [2, 3])],
              [vi("o", T.FLOAT, [2, 3])], [idx], opset=18)  # fmt: skip
    feeds = {"d": np.ones([2, 3], np.float32), "u": np.full([2, 3], 2.0, np.float32)}
    refused(ctx, m, "node 'sc' (ai.onnx::ScatterElements", "entry [0, 1] is out of range",
            feeds=feeds)  # fmt: skip


def test_scatter_nd_reduction_constant_index_out_of_range_is_refused(ctx):
    node = helper.make_node("ScatterND", ["d", "i", "u"], ["o"], reduction="add", name="snd")
    idx = nh.from_array(np.array([[1], [-5]], np.int64), "i")
    m = model([node], [vi("d", T.FLOAT, [4, 3]), vi("u", T.FLOAT, [2, 3])],
              [vi("o", T.FLOAT, [4, 3])], [idx], opset=18)  # fmt: skip
    feeds = {"d": np.zeros([4, 3], np.float32), "u": np.ones([2, 3], np.float32)}
    refused(ctx, m, "node 'snd' (ai.onnx::ScatterND", "entry [1, 0] is out of range",
            feeds=feeds)  # fmt: skip


def test_scatter_elements_reduction_constant_repeated_indices_match_ort(ctx):
    ort = pytest.importorskip("onnxruntime")
    node = helper.make_node("ScatterElements", ["d", "i", "u"], ["o"], axis=1, reduction="mul")
    idx = nh.from_array(np.array([[0, 2, -1], [1, 1, 1]], np.int64), "i")
    m = model([node], [vi("d", T.FLOAT, [2, 3]), vi("u", T.FLOAT, [2, 3])],
              [vi("o", T.FLOAT, [2, 3])], [idx], opset=18)  # fmt: skip
    feeds = {"d": np.full([2, 3], 1.5, np.float32),
             "u": np.array([[2, 3, 4], [0.1, 0.2, 0.3]], np.float32)}  # fmt: skip
    want = ort.InferenceSession(m.SerializeToString()).run(None, feeds)[0]
    got = wo.InferenceSession(m, context=ctx).run(None, feeds)[0]
    np.testing.assert_array_equal(got, want)
