"""ai.onnx.ml opset 5 TreeEnsemble (the unified tree operator), converted to the v3
TreeEnsembleRegressor attributes and evaluated by trees.py, as ONNX Runtime does
(tree_ensemble_attribute.h converts it the same way).

Differences from ONNX's text that follow ORT:
- post_transform is read as ORT's enum (0 NONE, 1 LOGISTIC, 2 SOFTMAX, 3 SOFTMAX_ZERO,
  4 PROBIT), where the ONNX spec numbers 1 SOFTMAX and 2 LOGISTIC (measured with ORT 1.32);
- BRANCH_MEMBER (x in a set of values, the NaN-separated runs of membership_values) is one
  split whose condition is "equal to any member" (ORT unrolls small sets into BRANCH_EQ
  chains, which is the same test);
- a tree whose root has the same leaf as both children is that leaf.
"""

import numpy as np

from .ml import ML
from .registry import op
from .trees import tree_ensemble_regressor
from .util import tensor_attr_array

MODES_V5 = ["BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ",
            "BRANCH_MEMBER"]  # fmt: skip
POST_ORT = ["NONE", "LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO", "PROBIT"]
AGGREGATES = ["AVERAGE", "SUM", "MIN", "MAX"]


def _tensor(n, name, required=True):
    value = n.attr(name, None)
    if value is None:
        if required:
            n.fail(f"attribute '{name}' is required")
        return None
    array = tensor_attr_array(n, value, name).reshape(-1)
    return array


def _v3_attributes(n):
    a = n.attr
    splits = _tensor(n, "nodes_splits")
    if splits.dtype not in (np.float32, np.float64):
        n.fail(f"nodes_splits of type {splits.dtype} (float or double)")
    weights = _tensor(n, "leaf_weights")
    modes = _tensor(n, "nodes_modes")
    members = _tensor(n, "membership_values", required=False)
    features = list(a("nodes_featureids", []))
    true_ids = list(a("nodes_truenodeids", []))
    false_ids = list(a("nodes_falsenodeids", []))
    true_leaf = list(a("nodes_trueleafs", []))
    false_leaf = list(a("nodes_falseleafs", []))
    count = len(features)
    missing = list(a("nodes_missing_value_tracks_true", [])) or [0] * count
    columns = (splits, modes, true_ids, false_ids, true_leaf, false_leaf, missing)
    if any(len(c) != count for c in columns):
        n.fail("the nodes_* attributes are of different lengths")
    targets = list(a("leaf_targetids", []))
    if len(targets) != len(weights):
        n.fail(f"{len(targets)} leaf_targetids for {len(weights)} leaf_weights")
    n_targets = int(a("n_targets", 0))
    if n_targets < 1 or any(not 0 <= t < n_targets for t in targets):
        n.fail(f"n_targets {n_targets} with leaf_targetids {sorted(set(targets))}")
    # Each BRANCH_MEMBER node takes the next NaN-terminated run of membership_values.
    sets, at = {}, 0
    for i, m in enumerate(modes):
        if not 0 <= int(m) < len(MODES_V5):
            n.fail(f"node mode {int(m)} (0-6)")
        if MODES_V5[int(m)] == "BRANCH_MEMBER":
            run = []
            while members is not None and at < len(members) and not np.isnan(members[at]):
                run.append(float(members[at]))
                at += 1
            at += 1
            if not run:
                n.fail(f"node {i}: BRANCH_MEMBER without membership values")
            sets[i] = run

    out = {k: [] for k in ("nodes_treeids", "nodes_nodeids", "nodes_featureids", "nodes_modes",
                           "nodes_truenodeids", "nodes_falsenodeids",
                           "nodes_missing_value_tracks_true", "target_treeids",
                           "target_nodeids", "target_ids")}  # fmt: skip
    values, leaf_weights = [], []
    out["member_sets"] = []

    def add(tree, mode, feature=0, value=0.0, track=0):
        node = len(out["nodes_nodeids"])
        for key, v in zip(("nodes_treeids", "nodes_nodeids", "nodes_featureids", "nodes_modes",
                           "nodes_truenodeids", "nodes_falsenodeids",
                           "nodes_missing_value_tracks_true"),
                          (tree, node, feature, mode, 0, 0, track)):  # fmt: skip
            out[key].append(v)
        values.append(value)
        return node

    def leaf(tree, index):
        if not 0 <= index < len(weights):
            n.fail(f"tree {tree}: leaf index {index} of {len(weights)} leaves")
        node = add(tree, "LEAF")
        out["target_treeids"].append(tree)
        out["target_nodeids"].append(node)
        out["target_ids"].append(int(targets[index]))
        leaf_weights.append(float(weights[index]))
        return node

    def grow(tree, index, is_leaf):
        """The tree below (index, is_leaf), its nodes added depth-first with the true child
        first. Iterative (a tree may be thousands of levels deep); a split reached twice is
        refused: a cycle, or a node with two parents, whose paths would multiply (a chain of
        40 such nodes is 2^40 paths)."""
        seen, root = set(), None
        stack = [(index, is_leaf, None, None)]  # (index, is_leaf, parent node, its column)
        while stack:
            index, is_leaf, parent, column = stack.pop()
            if is_leaf:
                node = leaf(tree, index)
            else:
                if not 0 <= index < count:
                    n.fail(f"tree {tree}: node index {index} of {count} nodes")
                if index in seen:
                    n.fail(f"tree {tree}: node {index} is reached twice (a cycle, or a node with "
                           "two parents: not a tree)")  # fmt: skip
                seen.add(index)
                mode = MODES_V5[int(modes[index])]
                feature, track = int(features[index]), int(missing[index])
                if mode == "BRANCH_MEMBER":  # its value: the index of its set
                    out["member_sets"].append(sets[index])
                    value = float(len(out["member_sets"]) - 1)
                else:
                    value = float(splits[index])
                node = add(tree, mode, feature, value, track)
                stack.append((int(false_ids[index]), bool(false_leaf[index]), node,
                              "nodes_falsenodeids"))  # fmt: skip
                stack.append((int(true_ids[index]), bool(true_leaf[index]), node,
                              "nodes_truenodeids"))  # fmt: skip
            if parent is None:
                root = node
            else:
                out[column][parent] = node
        return root

    roots = list(a("tree_roots", []))
    if not roots:
        n.fail("no tree_roots")
    for tree, root in enumerate(int(r) for r in roots):
        if not 0 <= root < count:
            n.fail(f"tree_roots value {root} of {count} nodes")
        whole_leaf = false_ids[root] == true_ids[root] and false_leaf[root] and true_leaf[root]
        grow(tree, root, bool(whole_leaf))

    post = int(a("post_transform", 0))
    aggregate = int(a("aggregate_function", 1))
    if not 0 <= post < len(POST_ORT) or not 0 <= aggregate < len(AGGREGATES):
        n.fail(f"post_transform {post} (0-4) or aggregate_function {aggregate} (0-3)")
    double = splits.dtype == np.float64
    out["nodes_values_as_tensor"] = np.asarray(values, np.float64 if double else np.float32)
    out["target_weights_as_tensor"] = np.asarray(leaf_weights, np.float64)
    out["n_targets"] = n_targets
    out["post_transform"] = POST_ORT[post]
    out["aggregate_function"] = AGGREGATES[aggregate]
    return out


@op("TreeEnsemble", domain=ML)
def tree_ensemble(n):
    y = tree_ensemble_regressor(n, _v3_attributes(n))
    # Its output has the input's type (computed in float32, like the other ml operators).
    dtype = n.dtype(0)
    return y if dtype in ("float32", "float64") else n.b.cast(y, dtype)
