"""Tree ensembles evaluated by walking the trees: every row walks every tree at once, one level
per step (node = where(x[feature[node]] <= threshold[node], true[node], false[node]), a
gather of the node tables per step, repeated depth times; a leaf points at itself), then the
reached leaves' weights are gathered. Its cost grows with the depth, where the dense
evaluation of trees.py grows with splits x leaves per tree: for deep, unpruned forests
(random forests of hundreds of leaves per tree) walking is far cheaper.
"""

import numpy as np

from .trees import MAX_TABLE_ELEMENTS, _compare

# The cost of one walking step (six gathers, compares and a select per row and tree) in
# dense multiply-adds, calibrated with bench/trees.py on the cpu backend (1 thread, 256
# rows): 20 full trees of depth 4 run faster dense (0.38 ms, walking 0.52 ms), 100 trees of
# depth 6 (~50 leaves) faster walking (7.6 ms, dense 15.3 ms).
STEP_COST = 100
# Elements of the node tables ([trees * nodes] per column, [trees * nodes, outputs] weights).
MAX_WALK_TABLE = 1 << 26
# A tree walks at most this deep (one graph step per level).
MAX_DEPTH = 4096


def walk_is_cheaper(forest):
    """The cost rule: dense costs splits * leaves + leaves * outputs per row and tree, walking
    STEP_COST per level plus the outputs."""
    S, L, K = forest.max_splits, forest.max_leaves, forest.outputs
    dense = S * L + 2 * L * K
    walk = STEP_COST * max(1, forest.depth) + 2 * K
    return walk < dense


def _tables(n, forest, features):
    """The flattened node tables: node g = tree * M + local, the locals in depth-first
    preorder with the true child visited first, so that a split's true child is always g + 1
    (one gather fewer per step). Leaves and padding point at themselves (false child) and
    have a NaN threshold under BRANCH_LEQ, a condition that never holds."""
    T, S, L, K = len(forest.trees), forest.max_splits, forest.max_leaves, forest.outputs
    M = S + L
    # Where every leaf weighs one output at most (LightGBM's and XGBoost's multiclass forests:
    # one tree per class and round), each node holds one weight and its output index instead
    # of a row of K: the tables stay T * M (a 9988-tree, 11-class LightGBM model: 14 M
    # entries, where [T * M, K] would be 156 M).
    compact = K > 1 and all(
        len({k for k, _ in values}) <= 1 for leaves in forest.leaves for _, values in leaves
    )
    width = 1 if compact else max(K, 1)
    if T * M * width > MAX_WALK_TABLE or forest.depth > MAX_DEPTH:
        n.fail(f"{T} trees of {M} nodes, depth {forest.depth}: too large to import")
    feature = np.zeros(T * M, np.int32)
    threshold = np.full(T * M, np.nan, np.float32)
    modes = np.full(T * M, "BRANCH_LEQ", object)
    track = np.zeros(T * M, np.uint8)
    false_child = np.arange(T * M, dtype=np.int32)
    weight = np.zeros([T * M, width], np.float32)
    has = np.zeros([T * M, width], np.float32)
    output = np.zeros(T * M, np.int32) if compact else None  # the output a compact node weighs
    roots = np.zeros(T, np.int32)
    for t in range(T):
        base = t * M
        roots[t] = base
        local = {}  # ref -> preorder position
        order = []
        stack = [forest.roots[t]]
        while stack:
            ref = stack.pop()
            local[ref] = len(order)
            order.append(ref)
            if ref[0] == "S":
                yes, no = forest.children[t][ref[1]]
                stack.append(no)
                stack.append(yes)
        for position, (kind, i) in enumerate(order):
            g = base + position
            if kind == "L":
                for k, value in forest.leaves[t][i][1]:
                    column = 0 if compact else k
                    weight[g, column] += np.float32(value)
                    has[g, column] = 1.0
                    if compact:
                        output[g] = k
                continue
            f, v, mode, miss = forest.splits[t][i]
            if not 0 <= f < features:
                n.fail(f"a split on feature {f} of {features}")
            feature[g], threshold[g], modes[g], track[g] = f, v, mode, miss
            false_child[g] = base + local[forest.children[t][i][1]]
    return feature, threshold, modes, track, false_child, (weight, has, output), roots


def evaluate_walk(n, forest, x, features):
    """[trees, batch, outputs] weights of the reached leaves and whether they weigh each output
    (what _Forest.evaluate returns)."""
    b = n.b
    feature, threshold, modes, track, false_child, leaves, roots = _tables(n, forest, features)
    weight, has, output = leaves
    T = len(forest.trees)
    batch = b.operand_shape(x)[0]
    node = b.expand(n.const(roots.reshape(1, T), "int32"), [batch, T])
    feature_t = n.const(feature, "int32")
    threshold_t = n.const(threshold, "float32")
    false_t = n.const(false_child, "int32")
    one = n.const(np.int32(1), "int32")
    kinds = sorted(set(modes[: len(modes)]))
    mode_t = (
        {m: n.const((modes == m).astype(np.uint8), "uint8") for m in kinds}
        if len(kinds) > 1
        else None
    )
    track_t = n.const(track, "uint8") if track.any() else None
    for _ in range(forest.depth):
        value = b.gather_elements(x, b.gather(feature_t, node), axis=1)  # [batch, T]
        cut = b.gather(threshold_t, node)
        cond = None
        for m in kinds:
            c = _compare(b, m, value, cut)
            if mode_t is not None:
                c = b.logical_and(c, b.gather(mode_t[m], node))
            cond = c if cond is None else b.logical_or(cond, c)
        if track_t is not None:
            cond = b.logical_or(cond, b.logical_and(b.is_nan(value), b.gather(track_t, node)))
        node = b.where(cond, b.add(node, one), b.gather(false_t, node))
    values = b.gather(n.const(weight, "float32"), node)  # [batch, T, K] ([batch, T, 1] compact)
    scored = b.gather(n.const(has, "float32"), node)
    if output is not None:  # spread each reached leaf's one weight to its output's column
        K = forest.outputs
        if T * K > MAX_TABLE_ELEMENTS:  # the one-hot of the outputs, per row
            n.fail(f"{T} trees x {K} outputs ({T * K} one-hot elements per row, at most "
                   f"{MAX_TABLE_ELEMENTS}): the declared output count is too large")  # fmt: skip
        column = b.reshape(b.gather(n.const(output, "int32"), node), [batch, T, 1])
        mine = b.equal(column, n.const(np.arange(K, dtype=np.int32).reshape(1, 1, K), "int32"))
        zero = n.const(np.float32(0.0), "float32")
        values = b.where(mine, values, zero)  # exactly the weight or 0, as the dense rows hold
        scored = b.where(mine, scored, zero)
    return b.transpose(values, [1, 0, 2]), b.transpose(scored, [1, 0, 2])
