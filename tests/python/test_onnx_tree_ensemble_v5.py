"""ai.onnx.ml opset 5 TreeEnsemble from random trees (every node mode including BRANCH_MEMBER,
NaN inputs with nodes_missing_value_tracks_true, several targets, each aggregate function and
post_transform as ONNX Runtime numbers them), compared with ONNX Runtime on both backends; the
v3 operators' *_as_tensor forms; and the float32 thresholds that stand for double ones,
checked against float64 comparisons."""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
import webnn
import webnn.onnx as wo
from onnx import TensorProto, helper
from ort_compare import BACKENDS, onnxruntime_outputs
from webnn.onnx.ops.trees import float32_threshold


@pytest.fixture(autouse=True, params=["dense", "walk"])
def evaluator(request, monkeypatch):
    """Every test runs with both tree evaluators: the dense tables and the walk (walk.py),
    whichever the cost rule would pick."""
    from webnn.onnx.ops import walk

    monkeypatch.setattr(walk, "walk_is_cheaper", lambda forest: request.param == "walk")
    return request.param


FEATURES = 4
ROWS = 16


def _inputs(seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, (ROWS, FEATURES)).astype(np.float32)
    x[:, :2] = rng.integers(0, 6, (ROWS, 2))  # categories, for BRANCH_MEMBER and BRANCH_EQ
    x[rng.random((ROWS, FEATURES)) < 0.1] = np.nan
    return x


def _random_v5(seed, trees, depth, targets, modes):
    rng = np.random.default_rng(seed)
    nodes = {k: [] for k in ("featureids", "splits", "modes", "truenodeids", "falsenodeids",
                             "trueleafs", "falseleafs", "missing_value_tracks_true")}  # fmt: skip
    leaves = {"targetids": [], "weights": []}
    members = []

    def grow(level):
        if level == depth or (level > 0 and rng.random() < 0.2):
            leaves["targetids"].append(int(rng.integers(targets)))
            leaves["weights"].append(float(rng.uniform(-1, 1)))
            return len(leaves["weights"]) - 1, 1
        at = len(nodes["modes"])
        mode = int(rng.choice(modes))
        categorical = mode in (4, 5, 6)
        feature = int(rng.integers(2)) if categorical else int(rng.integers(2, FEATURES))
        split = float(rng.integers(0, 6)) if categorical else float(np.float32(rng.uniform(-1, 1)))
        if mode == 6:
            members.extend(sorted(rng.choice(6, int(rng.integers(1, 4)), replace=False)))
            members.append(np.nan)
        for k, v in zip(nodes, (feature, split, mode, 0, 0, 0, 0, int(rng.integers(2)))):
            nodes[k].append(v)
        yes, yes_leaf = grow(level + 1)
        no, no_leaf = grow(level + 1)
        nodes["truenodeids"][at], nodes["trueleafs"][at] = yes, yes_leaf
        nodes["falsenodeids"][at], nodes["falseleafs"][at] = no, no_leaf
        return at, 0

    roots = [grow(0)[0] for _ in range(trees)]
    attrs = {f"nodes_{k}": v for k, v in nodes.items() if k not in ("splits", "modes")}
    attrs["nodes_splits"] = helper.make_tensor("s", TensorProto.FLOAT, [len(nodes["splits"])],
                                               nodes["splits"])  # fmt: skip
    attrs["nodes_modes"] = helper.make_tensor("m", TensorProto.UINT8, [len(nodes["modes"])],
                                              nodes["modes"])  # fmt: skip
    attrs["leaf_targetids"] = leaves["targetids"]
    attrs["leaf_weights"] = helper.make_tensor("w", TensorProto.FLOAT, [len(leaves["weights"])],
                                               leaves["weights"])  # fmt: skip
    if members:
        attrs["membership_values"] = helper.make_tensor("mv", TensorProto.FLOAT, [len(members)],
                                                        members)  # fmt: skip
    attrs["tree_roots"] = roots
    attrs["n_targets"] = targets
    return attrs


def _model(attrs):
    node = helper.make_node("TreeEnsemble", ["X"], ["Y"], domain="ai.onnx.ml", **attrs)
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [ROWS, FEATURES])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)
    model = helper.make_model(
        helper.make_graph([node], "g", [x], [y]),
        opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("ai.onnx.ml", 5)],
    )
    model.ir_version = 10
    return model


def _compare(model, x, rtol=1e-5):
    want = onnxruntime_outputs(model, {"X": x})["Y"]
    for backend in BACKENDS:
        context = webnn.ML().create_context(accelerated=False, backend=backend)
        got = context.compute(wo.load(context, model), {"X": x})["Y"]
        assert got.shape == want.shape, backend
        np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-6, err_msg=backend)
    return want


ALL_MODES = [0, 1, 2, 3, 4, 5, 6]


@pytest.mark.parametrize("aggregate", [0, 1, 2, 3])
@pytest.mark.parametrize("targets", [1, 3])
def test_tree_ensemble_v5_aggregates(aggregate, targets):
    attrs = _random_v5(aggregate * 10 + targets, 6, 4, targets, ALL_MODES)
    attrs["aggregate_function"] = aggregate
    want = _compare(_model(attrs), _inputs(aggregate))
    assert np.ptp(want) > 0


@pytest.mark.parametrize("post", [0, 1, 2, 3, 4])
def test_tree_ensemble_v5_post_transform_numbers_as_onnxruntime(post):
    # ORT reads post_transform as its own enum: 1 LOGISTIC, 2 SOFTMAX (the spec: 1 SOFTMAX,
    # 2 LOGISTIC); the test compares with ORT, and checks which one it is.
    attrs = _random_v5(40 + post, 5, 3, 3, [0, 1, 6])
    attrs["post_transform"] = post
    if post == 4:  # PROBIT: keep every sum inside (0, 1)
        attrs["leaf_weights"] = helper.make_tensor(
            "w", TensorProto.FLOAT, [len(attrs["leaf_targetids"])],
            np.random.default_rng(1).uniform(0.05, 0.15, len(attrs["leaf_targetids"])),
        )  # fmt: skip
    want = _compare(_model(attrs), _inputs(post), rtol=1e-4)
    if post == 1:
        assert np.all((want > 0) & (want < 1)) and not np.allclose(want.sum(1), 1)
    if post == 2:
        np.testing.assert_allclose(want.sum(1), 1, rtol=1e-5)


def test_tree_ensemble_v5_deep_member_trees():
    attrs = _random_v5(7, 20, 7, 2, [6, 0, 4])
    _compare(_model(attrs), _inputs(7))


def test_v3_as_tensor_attributes():
    # Float tensors in place of nodes_values / target_weights / base_values (ORT takes float
    # tensors for float input; double ones only for double input).
    rng = np.random.default_rng(3)
    node = helper.make_node(
        "TreeEnsembleRegressor", ["X"], ["Y"], domain="ai.onnx.ml",
        nodes_treeids=[0] * 5, nodes_nodeids=[0, 1, 2, 3, 4], nodes_featureids=[2, 3, 0, 0, 0],
        nodes_modes=["BRANCH_LEQ", "BRANCH_GT", "LEAF", "LEAF", "LEAF"],
        nodes_truenodeids=[1, 2, 0, 0, 0], nodes_falsenodeids=[4, 3, 0, 0, 0],
        nodes_values_as_tensor=helper.make_tensor("v", TensorProto.FLOAT, [5],
                                                  [0.1, -0.2, 0, 0, 0]),
        target_treeids=[0, 0, 0], target_nodeids=[2, 3, 4], target_ids=[0, 0, 0],
        target_weights_as_tensor=helper.make_tensor("w", TensorProto.FLOAT, [3],
                                                    rng.uniform(-1, 1, 3)),
        base_values_as_tensor=helper.make_tensor("b", TensorProto.FLOAT, [1], [0.25]),
        n_targets=1,
    )  # fmt: skip
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [ROWS, FEATURES])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)
    model = helper.make_model(
        helper.make_graph([node], "g", [x], [y]),
        opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 3)],
    )
    model.ir_version = 8
    want = _compare(model, _inputs(11))
    assert len(np.unique(want)) == 3


@pytest.mark.parametrize("mode", ["BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT",
                                  "BRANCH_EQ", "BRANCH_NEQ"])  # fmt: skip
def test_float32_thresholds_stand_for_double_ones(mode):
    # For every float32 x, x (op) float32_threshold(t) == float64(x) (op) t: what ORT computes
    # for double input and double thresholds, checked at the float32 values around t.
    ops = {"BRANCH_LEQ": np.less_equal, "BRANCH_LT": np.less, "BRANCH_GTE": np.greater_equal,
           "BRANCH_GT": np.greater, "BRANCH_EQ": np.equal, "BRANCH_NEQ": np.not_equal}  # fmt: skip
    rng = np.random.default_rng(0)
    thresholds = list(rng.uniform(-3, 3, 50)) + [0.1, 1 / 3, 0.5, -2.0, 1e-30]
    for t in thresholds:
        near = np.float32(t)
        xs = [near, np.nextafter(near, np.float32(-9)), np.nextafter(near, np.float32(9))]
        f = np.float32(float32_threshold(float(t), mode, True))
        for x in xs:
            assert ops[mode](x, f) == ops[mode](np.float64(x), t), (mode, t, x, f)
