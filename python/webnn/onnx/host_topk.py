"""TopK on the host, for an InferenceSession (host_cuts.py), where the graph forms are slow.

WebNN has no sort: ops/topk.py builds TopK from comparisons (ranks: rows x n x n of them),
K rounds of arg-max, or a bitonic network of log2(n)^2 / 2 steps. Over a detector's boxes
(K = 100-300 of 8,400-25,200) those take 12-60 ms where ONNX Runtime's sort takes 0.3 ms, so a
session sorts such a TopK of run-time values on the host, in the graph forms' order: the
greater value first for largest=1 (the smaller for 0), ties by the lower index, NaN above
every number (first for largest=1, last for 0), +0 and -0 equal.
"""

import numpy as np

from .ops.topk import MAX_RANK_ELEMENTS, MAX_ROUNDS, SMALL

# A graph form of at most this many comparisons (rows x n x n, or rows x n per round) costs
# about as much as the host step around it (its graph split, an inner session's dispatch).
GRAPH_COMPARISONS = 1 << 18
# Arg-max rounds up to this K stay in the graph (each round is one pass over the axis).
GRAPH_ROUNDS = 16


def prefers_host(shape, axis, k):
    """Whether TopK's graph form over a static `shape` is slow enough to sort on the host."""
    size = shape[axis]
    rows = int(np.prod(shape, dtype=np.int64)) // max(size, 1)
    pairs = rows * size * size
    if pairs <= GRAPH_COMPARISONS:
        return False
    ranks = pairs <= MAX_RANK_ELEMENTS and (k > MAX_ROUNDS or size <= 4 * k or pairs <= SMALL)
    return ranks or k > GRAPH_ROUNDS


def _attr(node, name, default):
    for a in node.attribute:
        if a.name == name:
            return a.i
    return default


def run(node, opsets, values):
    """The node's outputs {name: array}: values and int64 indices of the first K."""
    from .errors import OnnxImportError

    who = node.name or next((o for o in node.output if o), "?")

    def fail(reason):
        raise OnnxImportError(f"node {who!r} (TopK, run on the host): {reason}")

    x = np.asarray(values[node.input[0]])
    if opsets.get("", 1) >= 10:
        given = np.asarray(values[node.input[1]])
        if given.dtype.kind not in "iu" or given.size != 1 or given.ndim > 1:
            fail(f"K must be one integer in a 1-D tensor (got {given.dtype} shape "
                 f"{list(given.shape)})")  # fmt: skip
        k = int(given.reshape(-1)[0])
    else:
        k = _attr(node, "k", None)
        if k is None:
            fail("attribute 'k' is required")
    if x.ndim == 0:
        fail("input X is a scalar (TopK needs an axis)")
    axis = _attr(node, "axis", -1)
    if not -x.ndim <= axis < x.ndim:
        fail(f"axis {axis} is out of range for input X of rank {x.ndim}")
    axis %= x.ndim
    if not 0 <= k <= x.shape[axis]:
        fail(f"K={k} is outside [0, {x.shape[axis]}] (the size of axis {axis})")
    largest = bool(_attr(node, "largest", 1))
    moved = np.moveaxis(x, axis, -1)
    if np.issubdtype(x.dtype, np.floating) or np.issubdtype(x.dtype, np.integer):
        key = _ordered_key(moved)
    else:
        fail(f"input X of type {x.dtype} (numbers only)")
    if largest:
        key = ~key  # reverses every integer order exactly (a negation overflows)
    order = _first_k(key, k)
    picked = np.take_along_axis(moved, order, axis=-1)
    outs = [np.moveaxis(picked, -1, axis), np.moveaxis(order.astype(np.int64), -1, axis)]
    return {name: np.ascontiguousarray(v) for name, v in zip(node.output, outs) if name}


def _ordered_key(v):
    """Integers in the order TopK sorts v by (ascending): floats by their bits made monotonic,
    +0 and -0 one key, every NaN one key above +inf."""
    if not np.issubdtype(v.dtype, np.floating):
        return v.astype(np.int64) if v.dtype == np.uint32 else v
    width = {2: np.int16, 4: np.int32, 8: np.int64}[v.dtype.itemsize]
    v = np.where(np.isnan(v), np.array(np.nan, v.dtype), v + v.dtype.type(0))  # -0 + 0 = +0
    bits = v.view(width)
    # negative floats: their magnitude bits flipped, so more negative sorts first
    return bits ^ ((bits >> (8 * v.dtype.itemsize - 1)) & np.array(np.iinfo(width).max, width))


def _first_k(key, k):
    """Positions [..., k] of the k smallest keys along the last axis, sorted, ties by the lower
    position: a partition finds each row's k-th key, the rows keep every smaller key and the
    first ties of it up to k, and only those k are sorted."""
    if k == 0:
        return np.zeros(key.shape[:-1] + (0,), np.intp)
    n = key.shape[-1]
    if 4 * k >= n:
        return np.argsort(key, axis=-1, kind="stable")[..., :k]
    kth = np.partition(key, k - 1, axis=-1)[..., k - 1 : k]
    below = key < kth
    ties = key == kth
    room = k - below.sum(axis=-1, keepdims=True)
    keep = below | (ties & (np.cumsum(ties, axis=-1) <= room))
    positions = np.nonzero(keep)[-1].reshape(key.shape[:-1] + (k,))  # row by row, ascending
    sub = np.take_along_axis(key, positions, axis=-1)
    return np.take_along_axis(positions, np.argsort(sub, axis=-1, kind="stable"), axis=-1)
