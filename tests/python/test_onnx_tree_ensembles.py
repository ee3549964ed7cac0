"""ai.onnx.ml TreeEnsembleRegressor / TreeEnsembleClassifier (random forests, gradient boosting as
skl2onnx and onnxmltools write them), built with onnx.helper from random trees and compared with
ONNX Runtime on both backends: outputs within 1e-6 of max|ORT| (float sums in another order),
labels equal."""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
import webnn
import webnn.onnx as wo
from onnx import TensorProto, helper


@pytest.fixture(autouse=True, params=["dense", "walk"])
def evaluator(request, monkeypatch):
    """Every test runs with both tree evaluators: the dense tables and the walk (walk.py),
    whichever the cost rule would pick."""
    from webnn.onnx.ops import walk

    monkeypatch.setattr(walk, "walk_is_cheaper", lambda forest: request.param == "walk")
    return request.param


FEATURES = 5


def _random_trees(rng, trees, depth, outputs, mode="BRANCH_LEQ", all_outputs=True):
    """Node and weight attribute lists of `trees` random trees (unbalanced: a node becomes a
    leaf early with probability 0.25), weights on every output or one output per leaf."""
    keys = ("treeids", "nodeids", "featureids", "values", "modes", "truenodeids",
            "falsenodeids", "missing_value_tracks_true")  # fmt: skip
    nodes = {k: [] for k in keys}
    weights = {k: [] for k in ("treeids", "nodeids", "ids", "weights")}
    for t in range(trees):
        _grow(rng, nodes, weights, t, [0], 0, depth, outputs, mode, all_outputs)
    return nodes, weights


def _grow(rng, nodes, weights, t, next_id, level, depth, outputs, mode, all_outputs):
    node = next_id[0]
    next_id[0] += 1
    leaf = level == depth or (level > 0 and rng.random() < 0.25)
    for k, v in zip(nodes, (t, node, 0, 0.0, "LEAF", 0, 0, 0)):
        nodes[k].append(v)
    at = len(nodes["treeids"]) - 1
    if leaf:
        targets = range(outputs) if all_outputs else [int(rng.integers(outputs))]
        for k in targets:
            for key, v in zip(weights, (t, node, k, float(rng.uniform(-1, 1)))):
                weights[key].append(v)
        return node
    nodes["featureids"][at] = int(rng.integers(FEATURES))
    nodes["values"][at] = float(np.float32(rng.uniform(-1, 1)))
    nodes["modes"][at] = mode
    nodes["missing_value_tracks_true"][at] = int(rng.integers(2))
    more = (depth, outputs, mode, all_outputs)
    nodes["truenodeids"][at] = _grow(rng, nodes, weights, t, next_id, level + 1, *more)
    nodes["falsenodeids"][at] = _grow(rng, nodes, weights, t, next_id, level + 1, *more)
    return node


def _model(op_type, attrs, outputs):
    node = helper.make_node(op_type, ["X"], [o.name for o in outputs], domain="ai.onnx.ml",
                            **attrs)  # fmt: skip
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [7, FEATURES])], outputs
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 3)]
    )
    model.ir_version = 8
    return model.SerializeToString()


def _inputs():
    x = np.random.default_rng(1).uniform(-1.2, 1.2, (7, FEATURES)).astype(np.float32)
    x[2, 1] = np.nan  # missing values follow missing_value_tracks_true
    x[3, 0] = x[4, 4] = np.float32(0.0)
    return x


def _compare(data, x):
    want = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, {"X": x})
    for backend in ("cpu", "reference"):
        ctx = webnn.ML().create_context(accelerated=False, backend=backend)
        graph = wo.load(ctx, data)
        names = [o.name for o in onnx.load_from_string(data).graph.output]
        got = ctx.compute(graph, {"X": x})
        for name, w in zip(names, want):
            if np.issubdtype(w.dtype, np.floating):
                np.testing.assert_allclose(got[name], w, rtol=0, atol=1e-6 * np.abs(w).max())
            else:
                np.testing.assert_array_equal(got[name], w, err_msg=f"{name} on {backend}")


@pytest.mark.parametrize("aggregate", ["SUM", "AVERAGE", "MIN", "MAX"])
@pytest.mark.parametrize("mode", ["BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT"])
def test_tree_ensemble_regressor_matches_onnxruntime(aggregate, mode):
    rng = np.random.default_rng(len(aggregate) * 7 + len(mode))
    # Every leaf weighs every target, as the exporters write them (with MIN/MAX a target that
    # no reached leaf weighs is an edge ONNX leaves open).
    nodes, weights = _random_trees(rng, 6, 4, 3, mode)
    x = _inputs()
    # Thresholds on some of the inputs' values: the comparison's equality case decides.
    nodes["values"][0] = float(x[3, nodes["featureids"][0]])
    attrs = {f"nodes_{k}": v for k, v in nodes.items()}
    attrs.update({f"target_{k}": v for k, v in weights.items()})
    attrs.update(n_targets=3, aggregate_function=aggregate, base_values=[0.5, -0.25, 1.0])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [7, 3])
    _compare(_model("TreeEnsembleRegressor", attrs, [y]), x)


@pytest.mark.parametrize("post", ["NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO"])
def test_tree_ensemble_classifier_multiclass_matches_onnxruntime(post):
    rng = np.random.default_rng(11)
    nodes, weights = _random_trees(rng, 5, 3, 4)
    attrs = {f"nodes_{k}": v for k, v in nodes.items()}
    attrs.update({f"class_{k}": v for k, v in weights.items()})
    attrs.update(classlabels_int64s=[3, 5, 7, 9], post_transform=post,
                 base_values=[0.1, 0.0, -0.1, 0.2])  # fmt: skip
    outs = [helper.make_tensor_value_info("label", TensorProto.INT64, [7]),
            helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, [7, 4])]  # fmt: skip
    _compare(_model("TreeEnsembleClassifier", attrs, outs), _inputs())


def test_tree_ensemble_regressor_sums_sparse_leaf_weights():
    # SUM over leaves that weigh one target each (a target no reached leaf weighs: its base).
    rng = np.random.default_rng(5)
    nodes, weights = _random_trees(rng, 8, 3, 3, all_outputs=False)
    attrs = {f"nodes_{k}": v for k, v in nodes.items()}
    attrs.update({f"target_{k}": v for k, v in weights.items()})
    attrs.update(n_targets=3, base_values=[0.5, -0.25, 1.0])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [7, 3])
    _compare(_model("TreeEnsembleRegressor", attrs, [y]), _inputs())


def _one_class_per_tree(nodes, weights, classes):
    """LightGBM's multiclass layout: tree t weighs class t % classes only (every leaf)."""
    weights["ids"] = [t % classes for t in weights["treeids"]]
    return nodes, weights


@pytest.mark.parametrize("post", ["SOFTMAX", "NONE"])
def test_tree_ensemble_classifier_one_class_per_tree_compact_walk(post, evaluator, monkeypatch):
    # The walk's node tables hold one weight and its class per node when every leaf weighs one
    # class (walk.py), so a forest whose dense [nodes, classes] rows exceed the table limit
    # still imports: the limit is shrunk here between the two sizes (a 9988-tree, 11-class
    # LightGBM model of luscinia 1.0.0 failed with 156 M table elements before).
    from webnn.onnx.ops import walk

    classes = 4
    rng = np.random.default_rng(21)
    nodes, weights = _one_class_per_tree(*_random_trees(rng, 12, 4, classes), classes)
    per_tree = max(nodes["nodeids"]) + 1
    if evaluator == "walk":
        monkeypatch.setattr(walk, "MAX_WALK_TABLE", 12 * 32 * 2)  # >= trees * nodes, < * classes
    assert per_tree <= 32
    attrs = {f"nodes_{k}": v for k, v in nodes.items()}
    attrs.update({f"class_{k}": v for k, v in weights.items()})
    attrs.update(classlabels_int64s=list(range(classes)), post_transform=post,
                 base_values=[0.0] * classes)  # fmt: skip
    outs = [helper.make_tensor_value_info("label", TensorProto.INT64, [7]),
            helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, [7, classes])]  # fmt: skip
    _compare(_model("TreeEnsembleClassifier", attrs, outs), _inputs())


def test_tree_ensemble_classifier_two_classes_weighted_both():
    rng = np.random.default_rng(12)
    nodes, weights = _random_trees(rng, 4, 3, 2)
    weights["weights"] = [abs(w) for w in weights["weights"]]  # forest probabilities
    attrs = {f"nodes_{k}": v for k, v in nodes.items()}
    attrs.update({f"class_{k}": v for k, v in weights.items()})
    attrs.update(classlabels_int64s=[0, 1])
    outs = [helper.make_tensor_value_info("label", TensorProto.INT64, [7]),
            helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, [7, 2])]  # fmt: skip
    _compare(_model("TreeEnsembleClassifier", attrs, outs), _inputs())


@pytest.mark.parametrize(
    "positive,post,base",
    [(True, "NONE", []), (False, "NONE", []), (False, "LOGISTIC", [0.02]), (True, "NONE", [0.1])],
)
def test_tree_ensemble_classifier_one_score_binary_case(positive, post, base):
    # skl2onnx's binary forests (probabilities of the positive class on class id 0) and
    # gradient boosting (log-odds, one base value, LOGISTIC).
    rng = np.random.default_rng(13)
    nodes, weights = _random_trees(rng, 4, 3, 1)
    if positive:
        weights["weights"] = [abs(w) / 4 for w in weights["weights"]]
    attrs = {f"nodes_{k}": v for k, v in nodes.items()}
    attrs.update({f"class_{k}": v for k, v in weights.items()})
    attrs.update(classlabels_int64s=[4, 8], post_transform=post)
    if base:
        attrs["base_values"] = base
    outs = [helper.make_tensor_value_info("label", TensorProto.INT64, [7]),
            helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, [7, 2])]  # fmt: skip
    _compare(_model("TreeEnsembleClassifier", attrs, outs), _inputs())


def test_tree_ensemble_errors_name_the_reason():
    rng = np.random.default_rng(14)
    nodes, weights = _random_trees(rng, 2, 2, 1)
    attrs = {f"nodes_{k}": v for k, v in nodes.items()}
    attrs.update({f"class_{k}": v for k, v in weights.items()})
    attrs.update(classlabels_int64s=[0, 1], post_transform="PROBIT")
    outs = [helper.make_tensor_value_info("label", TensorProto.INT64, [7]),
            helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, [7, 2])]  # fmt: skip
    with pytest.raises(wo.OnnxImportError, match="TreeEnsembleClassifier.*PROBIT"):
        wo.load(webnn.ML().create_context(), _model("TreeEnsembleClassifier", attrs, outs))


def test_tree_ensemble_classifier_probit():
    # PROBIT with ORT's approximate inverse error function: weights kept so that every class
    # sum stays inside (0, 1), where it is defined.
    rng = np.random.default_rng(12)
    nodes, weights = _random_trees(rng, 4, 3, 3)
    weights["weights"] = [0.02 + 0.05 * abs(w) for w in weights["weights"]]
    attrs = {f"nodes_{k}": v for k, v in nodes.items()}
    attrs.update({f"class_{k}": v for k, v in weights.items()})
    attrs.update(classlabels_int64s=[3, 5, 7], post_transform="PROBIT")
    outs = [helper.make_tensor_value_info("label", TensorProto.INT64, [7]),
            helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, [7, 3])]  # fmt: skip
    _compare(_model("TreeEnsembleClassifier", attrs, outs), _inputs())
