"""ai.onnx.ml TreeEnsembleRegressor / TreeEnsembleClassifier (what skl2onnx and onnxmltools write
for random forests, gradient boosting, LightGBM and XGBoost), as ONNX Runtime computes them.

WebNN has no branches, so every tree is evaluated whole, as matrix products: all split
conditions of all trees at once ([batch, trees, splits] 0/1), then per tree the leaf whose
path conditions all hold (a 0/1 path matrix [splits, leaves] with +1 for a "true" step and -1
for a "false" step: the product equals the number of true steps on exactly one leaf), then
that leaf's weights ([leaves, targets]), summed (or averaged, or the min/max) over the trees.
Trees are padded to the largest one; a padded split has no leaf that uses it.
"""

import numpy as np

from .ml import ML, _float_input
from .ml_scores import TRANSFORMS, class_labels, label_output, post_transform, probit
from .registry import op
from .util import tensor_attr_array

MODES = {"BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ"}
# Elements of the per-tree tables ([trees, splits, leaves] + [trees, leaves, targets]).
MAX_TABLE_ELEMENTS = 1 << 26


def _values_attr(n, a, name):
    """A float list attribute or its `name`_as_tensor form: (list of float, True when the
    tensor is double)."""
    tensor = a(f"{name}_as_tensor", None)
    if tensor is None:
        return [float(v) for v in a(name, [])], False
    if isinstance(tensor, np.ndarray):  # already converted (tree_v5.py)
        return tensor.astype(np.float64).tolist(), tensor.dtype == np.float64
    array = tensor_attr_array(n, tensor, f"{name}_as_tensor").reshape(-1)
    if array.dtype not in (np.float32, np.float64):
        n.fail(f"'{name}_as_tensor' of type {array.dtype} (float or double)")
    return array.astype(np.float64).tolist(), array.dtype == np.float64


def float32_threshold(t, mode, double):
    """The float32 threshold that makes the float32 comparison of a float32 x give what the
    comparison with the double threshold t gives (what ORT computes for double input, exact
    for every float32-representable x): <= and > compare with t rounded down, < and >= with
    t rounded up; == and != with a t that no float32 equals compare with NaN (never equal)."""
    if not double:
        return float(np.float32(t))
    near = np.float32(t)
    if float(near) == t or np.isnan(t):
        return float(near)
    if mode in ("BRANCH_EQ", "BRANCH_NEQ"):
        return float("nan")
    down = near if float(near) < t else np.nextafter(near, np.float32(-np.inf))
    up = near if float(near) > t else np.nextafter(near, np.float32(np.inf))
    return float(down if mode in ("BRANCH_LEQ", "BRANCH_GT") else up)


def _compare(b, mode, x, t):
    return {
        "BRANCH_LEQ": b.lesser_or_equal,
        "BRANCH_LT": b.lesser,
        "BRANCH_GTE": b.greater_or_equal,
        "BRANCH_GT": b.greater,
        "BRANCH_EQ": b.equal,
        "BRANCH_NEQ": b.not_equal,
    }[mode](x, t)


class _Forest:
    """The node table of the attributes, as per-tree padded arrays."""

    def __init__(self, n, prefix, outputs, attrs=None):
        # attrs: the v3 attributes by name (default the node's; TreeEnsemble v5 converts its
        # own to these, tree_v5.py). *_as_tensor forms replace the float lists.
        a = attrs.get if attrs is not None else n.attr
        values, double = _values_attr(n, a, "nodes_values")
        tree_ids = list(a("nodes_treeids", []))
        node_ids = list(a("nodes_nodeids", []))
        features = list(a("nodes_featureids", []))
        modes = list(a("nodes_modes", []))
        true_ids = list(a("nodes_truenodeids", []))
        false_ids = list(a("nodes_falsenodeids", []))
        count = len(tree_ids)
        missing = list(a("nodes_missing_value_tracks_true", [])) or [0] * count
        columns = (node_ids, features, values, modes, true_ids, false_ids, missing)
        if not count or any(len(c) != count for c in columns):
            n.fail("the nodes_* attributes are empty or of different lengths")
        nodes = {}
        for i in range(count):
            mode = modes[i]
            member = mode == "BRANCH_MEMBER" and attrs is not None  # (v5 only)
            if mode != "LEAF" and mode not in MODES and not member:
                n.fail(f"node mode '{mode}'")
            nodes[(tree_ids[i], node_ids[i])] = i
        self.trees = sorted({t for t in tree_ids})
        weights = {}
        t_ids = list(a(f"{prefix}_treeids", []))
        n_ids = list(a(f"{prefix}_nodeids", []))
        k_ids = list(a(f"{prefix}_ids", []))
        w, _ = _values_attr(n, a, f"{prefix}_weights")
        if not (len(t_ids) == len(n_ids) == len(k_ids) == len(w)):
            n.fail(f"the {prefix}_* attributes are of different lengths")
        for t, node, k, value in zip(t_ids, n_ids, k_ids, w):
            if (t, node) not in nodes:
                n.fail(f"{prefix} weight for node {node} of tree {t}, which does not exist")
            if not 0 <= k < outputs:
                n.fail(f"{prefix}_ids value {k} (outputs: {outputs})")
            weights.setdefault((t, node), []).append((int(k), float(value)))
        self.used = sorted({int(k) for k in k_ids})
        # Per tree: its splits (feature, threshold, mode, missing->true) and leaves (path, weights).
        self.splits, self.leaves = [], []
        # Per tree, for walking it (walk.py): each split's (true, false) children and the
        # root, as ("S", split index) or ("L", leaf index).
        self.children, self.roots = [], []
        candidates = {t: set() for t in self.trees}  # per tree: nodes no branch points at
        pointed = {t: set() for t in self.trees}
        for (tt, node), i in nodes.items():
            candidates[tt].add(node)
            if modes[i] != "LEAF":
                pointed[tt].update((true_ids[i], false_ids[i]))
        for t in self.trees:
            splits, leaves, index, children = [], [], {}, []
            roots = candidates[t] - pointed[t]
            if len(roots) != 1:
                n.fail(f"tree {t} has {len(roots)} roots")
            stack = [(roots.pop(), [], None, 0)]
            seen = 0
            while stack:
                node, path, parent, side = stack.pop()
                seen += 1
                if (t, node) not in nodes or seen > count:
                    n.fail(f"tree {t}: node {node} is missing or the tree has a cycle")
                i = nodes[(t, node)]
                ref = ("L", len(leaves)) if modes[i] == "LEAF" else ("S", len(splits))
                if parent is None:
                    self.roots.append(ref)
                else:
                    children[parent][side] = ref
                if modes[i] == "LEAF":
                    leaves.append((path, weights.get((t, node), [])))
                    continue
                index[node] = len(splits)
                children.append([None, None])
                if modes[i] == "BRANCH_MEMBER":  # the set of values (its index in values)
                    members = attrs["member_sets"][int(values[i])]
                    threshold = tuple(float32_threshold(v, "BRANCH_EQ", double) for v in members)
                else:
                    threshold = float32_threshold(values[i], modes[i], double)
                splits.append((int(features[i]), threshold, modes[i], bool(missing[i])))
                s = index[node]
                stack.append((false_ids[i], path + [(s, False)], s, 1))
                stack.append((true_ids[i], path + [(s, True)], s, 0))
            self.splits.append(splits)
            self.leaves.append(leaves)
            self.children.append(children)
        self.outputs = outputs
        self.max_splits = max(1, max(len(s) for s in self.splits))
        self.max_leaves = max(len(v) for v in self.leaves)
        self.depth = max(max((len(p) for p, _ in v), default=0) for v in self.leaves)
        self.has_members = any(m == "BRANCH_MEMBER" for t in self.splits for _, _, m, _ in t)

    def evaluate(self, n, x, features):
        """Per tree and target the reached leaf's weight [trees, batch, outputs], and whether it
        has one ([trees, batch, outputs] 0/1): by the dense tables below, or by walking the
        trees (walk.py) where that costs less (walk.walk_is_cheaper)."""
        from .walk import evaluate_walk, walk_is_cheaper

        if not self.has_members and walk_is_cheaper(self):
            return evaluate_walk(n, self, x, features)
        size = len(self.trees) * self.max_leaves * (self.max_splits + self.outputs)
        if size > MAX_TABLE_ELEMENTS:
            n.fail(f"{len(self.trees)} trees of up to {self.max_leaves} leaves are too large "
                   f"to import ({size} table elements, at most {MAX_TABLE_ELEMENTS})")  # fmt: skip
        return self.evaluate_dense(n, x, features)

    def evaluate_dense(self, n, x, features):
        b = n.b
        T, S, L, K = len(self.trees), self.max_splits, self.max_leaves, self.outputs
        feature = np.zeros([T, S], np.int32)
        threshold = np.zeros([T, S], np.float32)
        modes = np.full([T, S], "BRANCH_LEQ", object)
        track = np.zeros([T, S], bool)
        path = np.zeros([T, S, L], np.float32)
        need = np.full([T, 1, L], -1.0, np.float32)  # a padded leaf is never reached
        weight = np.zeros([T, L, K], np.float32)
        has = np.zeros([T, L, K], np.float32)
        member_feature, member_value, member_split = [], [], []  # one per (split, member)
        for t, (splits, leaves) in enumerate(zip(self.splits, self.leaves)):
            for s, (f, v, mode, miss) in enumerate(splits):
                if not 0 <= f < features:
                    n.fail(f"a split on feature {f} of {features}")
                if mode == "BRANCH_MEMBER":
                    for value in v:
                        member_feature.append(f)
                        member_value.append(value)
                        member_split.append(t * S + s)
                    v = 0.0
                feature[t, s], threshold[t, s], modes[t, s], track[t, s] = f, v, mode, miss
            for leaf, (steps, values) in enumerate(leaves):
                for s, goes_true in steps:
                    path[t, s, leaf] = 1.0 if goes_true else -1.0
                need[t, 0, leaf] = sum(1 for _, goes_true in steps if goes_true)
                for k, value in values:
                    weight[t, leaf, k] += np.float32(value)
                    has[t, leaf, k] = 1.0
        batch = b.operand_shape(x)[0]
        picked = b.gather(x, n.const(feature.reshape(-1), "int32"), axis=1)  # [batch, T*S]
        thresholds = n.const(threshold.reshape(-1), "float32")
        flat_modes = modes.reshape(-1)
        cond = None
        for mode in sorted(set(flat_modes)):
            if mode == "BRANCH_MEMBER":
                c = self._membership(n, x, member_feature, member_value, member_split, T * S)
                cond = c if cond is None else b.logical_or(cond, c)
                continue
            c = _compare(b, mode, picked, thresholds)
            if len(set(flat_modes)) > 1:
                c = b.logical_and(c, n.const((flat_modes == mode).astype(np.uint8), "uint8"))
            cond = c if cond is None else b.logical_or(cond, c)
        if track.any():  # a missing (NaN) feature goes the "true" way where the node says so
            nan = b.logical_and(
                b.is_nan(picked), n.const(track.reshape(-1).astype(np.uint8), "uint8")
            )
            cond = b.logical_or(cond, nan)
        cond = b.transpose(b.reshape(b.cast(cond, "float32"), [batch, T, S]), [1, 0, 2])
        score = b.matmul(cond, n.const(path, "float32"))  # [T, batch, L]
        reached = b.cast(b.equal(score, n.const(need, "float32")), "float32")
        values = b.matmul(reached, n.const(weight, "float32"))  # [T, batch, K]
        scored = b.matmul(reached, n.const(has, "float32"))
        return values, scored

    @staticmethod
    def _membership(n, x, features, values, splits, count):
        """[batch, count] bool: x[feature] is one of the split's values (BRANCH_MEMBER)."""
        b = n.b
        picked = b.gather(x, n.const(np.asarray(features, np.int32), "int32"), axis=1)
        hits = b.equal(picked, n.const(np.asarray(values, np.float32), "float32"))
        owner = np.zeros([len(splits), count], np.float32)
        owner[np.arange(len(splits)), splits] = 1.0
        found = b.matmul(b.cast(hits, "float32"), n.const(owner, "float32"))
        return b.greater(found, n.const(0.0, "float32"))


def _aggregate(n, forest, values, scored, aggregate):
    b = n.b
    T = len(forest.trees)
    if aggregate in ("SUM", "AVERAGE"):
        total = b.reduce_sum(values, [0], keep_dimensions=False)
        if aggregate == "AVERAGE":
            total = b.div(total, n.const(float(T), "float32"))
        return total, b.reduce_max(scored, [0], keep_dimensions=False)
    # MIN / MAX over the trees that give the target a weight (ORT's has_score); 0 if none.
    big = n.const(np.float32(np.inf if aggregate == "MIN" else -np.inf), "float32")
    masked = b.where(b.cast(scored, "uint8"), values, big)
    reduce = b.reduce_min if aggregate == "MIN" else b.reduce_max
    best = reduce(masked, [0], keep_dimensions=False)
    any_score = b.reduce_max(scored, [0], keep_dimensions=False)
    return b.where(b.cast(any_score, "uint8"), best, n.const(0.0, "float32")), any_score


def _rows(n):
    shape = n.static_shape(0)
    x = _float_input(n)
    if len(shape) == 1:
        return n.b.reshape(x, [1, shape[0]]), shape[0]
    if len(shape) != 2:
        n.fail(f"a rank-{len(shape)} input (1-D or 2-D only)")
    return x, shape[1]


@op("TreeEnsembleRegressor", domain=ML)
def tree_ensemble_regressor(n, attrs=None):
    """attrs: v3 attributes by name in place of the node's (TreeEnsemble v5, tree_v5.py)."""
    b = n.b
    get = attrs.get if attrs is not None else n.attr
    targets = int(get("n_targets", 1))
    forest = _Forest(n, "target", targets, attrs)
    x, features = _rows(n)
    values, scored = forest.evaluate(n, x, features)
    aggregate = get("aggregate_function", "SUM")
    if aggregate not in ("SUM", "AVERAGE", "MIN", "MAX"):
        n.fail(f"aggregate_function '{aggregate}'")
    y, any_score = _aggregate(n, forest, values, scored, aggregate)
    base = _values_attr(n, get, "base_values")[0]
    if base and len(base) not in (1, targets):
        n.fail(f"{len(base)} base_values for {targets} targets")
    if len(base) == targets or (targets == 1 and len(base) == 1):
        y = b.add(y, n.const(np.asarray(base, np.float32), "float32"))
        if targets > 1:
            # ORT 1.2x (measured): a target that no reached leaf weighs is 0, without its base.
            y = b.where(b.cast(any_score, "uint8"), y, n.const(0.0, "float32"))
    post = get("post_transform", "NONE")
    if targets == 1:
        # ORT transforms a single target only with PROBIT (measured, 1.32: LOGISTIC and the
        # softmaxes leave it as it is).
        return probit(n, y) if post == "PROBIT" else _checked(n, y, post)
    return post_transform(n, y, post)


def _checked(n, y, post):
    if post not in TRANSFORMS:
        n.fail(f"post_transform '{post}' (one of {', '.join(TRANSFORMS)})")
    return y


@op("TreeEnsembleClassifier", domain=ML)
def tree_ensemble_classifier(n):
    """Labels (integer class labels) and scores, as ONNX Runtime gives them. More than two
    classes: scores are the summed weights plus base_values, the label the first largest; two
    classes: ORT's binary rules (below)."""
    b = n.b
    labels, is_string = class_labels(n, "classlabels_int64s")
    classes = len(labels)
    forest = _Forest(n, "class", classes)
    x, features = _rows(n)
    values, scored = forest.evaluate(n, x, features)
    y, _ = _aggregate(n, forest, values, scored, "SUM")
    base = _values_attr(n, n.attr, "base_values")[0]
    post = n.attr("post_transform", "NONE")
    if classes > 2:
        if base:
            if len(base) != classes:
                n.fail(f"{len(base)} base_values for {classes} classes")
            y = b.add(y, n.const(np.asarray(base, np.float32), "float32"))
        index = b.arg_max(y, 1, keep_dimensions=False, output_data_type="int32")
        return [label_output(n, index, labels, is_string), post_transform(n, y, post)]
    if classes != 2:
        n.fail(f"{classes} class label(s)")
    rows = n.b.operand_shape(y)[0]
    if forest.used == [0, 1] and not base and post == "NONE":
        # Both classes weighed (no base values): the second label where its score is > 0.
        positive = b.greater(b.slice(y, [0, 1], [rows, 1]), n.const(0.0, "float32"))
        index = b.reshape(b.cast(positive, "int32"), [rows])
        return [label_output(n, index, labels, is_string), y]
    if len(forest.used) != 1 or len(base) > 1:
        n.fail(
            "a two-class ensemble is supported where the trees weigh both classes (without "
            "base_values or post_transform) or one score (with at most one base value); here "
            f"weighted {forest.used}, base_values {base}, post_transform {post}"
        )
    # ORT's binary case (what skl2onnx writes for binary forests and gradient boosting): one
    # score s (+ base), the second label where s > 0.5 if every weight is >= 0 (probabilities)
    # else where s > 0, and the scores [1 - s, s] or [-s, s], or [1 - sigmoid(s), sigmoid(s)].
    score = b.slice(y, [0, forest.used[0]], [rows, 1])
    if base:
        score = b.add(score, n.const(np.float32(base[0]), "float32"))
    weights = [float(w) for w in n.attr("class_weights", [])]
    all_positive = min(weights, default=0.0) >= 0
    cut = 0.5 if all_positive else 0.0
    positive = b.greater(score, n.const(np.float32(cut), "float32"))
    label = label_output(n, b.reshape(b.cast(positive, "int32"), [rows]), labels, is_string)
    if post == "LOGISTIC" and not all_positive:
        p = b.sigmoid(score)
        return [label, b.concat([b.sub(n.const(1.0, "float32"), p), p], 1)]
    if post != "NONE":
        n.fail(f"post_transform '{post}' in the one-score two-class case (NONE, or LOGISTIC "
               "with negative weights, are supported)")  # fmt: skip
    first = b.sub(n.const(1.0, "float32"), score) if all_positive else b.neg(score)
    return [label, b.concat([first, score], 1)]
