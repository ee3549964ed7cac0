"""TopK (WebNN has no top-k or sort) in one of two exact forms.

* Ranks: every element's place in the order is the count of the elements that come before
  it, from a comparison of each element with every other along the axis (ties: the lower
  index first, as ONNX specifies; NaN above everything, as ONNX Runtime orders it). The
  ranks are a permutation: a scatter of the positions by rank gives the sorted order, whose
  first K are the result. It costs rows x n x n comparisons (n = the axis' size), bounded by
  MAX_RANK_ELEMENTS; used when the axis is short (n <= 4 K), the input small (SMALL
  comparisons) or K beyond the arg-max rounds.
* Arg-max rounds: K rounds of arg_max / arg_min, each masking the element it selected; for
  K <= MAX_ROUNDS over long axes (a YOLO head's thousands of boxes). Where the rounds reach
  elements whose value is the mask (-inf for largest, +inf for smallest, the integer
  extremes) they may repeat an index; with largest=0 NaN counts as +inf (after every finite
  number, tied with +inf by index) (docs/onnx.md).
* Sorting network: K > MAX_ROUNDS over an axis too long for the ranks (K = 300 of a
  detector's 25,200 boxes): a bitonic sort of the axis padded to a power of two, log2(P)
  (log2(P) + 1) / 2 compare-exchange steps of gathers and `where`s over (value, tie key)
  pairs, in the same order as the ranks (ties by index, NaN as ONNX Runtime orders it,
  padding last), then the first K. Exact; bounded by MAX_SORT_ELEMENTS (rows x P).
"""

import numpy as np

from .registry import op
from .util import check_made, norm_axis, prod

MAX_ROUNDS = 256
MAX_RANK_ELEMENTS = 1 << 24
MAX_SORT_ELEMENTS = 1 << 22
SMALL = 1 << 16  # comparisons so few that the exact rank form costs nothing


@op("TopK")
def top_k(n):
    shape = n.static_shape(0)
    rank = len(shape)
    axis = norm_axis(n, int(n.attr("axis", -1)), rank)
    if n.opset >= 10:
        given = np.asarray(n.c(1, what="K"))
        if given.dtype.kind not in "iu" or given.size != 1 or given.ndim > 1:
            # ONNX: a 1-D int64 tensor of one value (ONNX Runtime refuses anything else too)
            n.fail(
                f"K must be one integer in a 1-D tensor (got {given.dtype} shape {list(given.shape)})"
            )
        k = int(given.reshape(-1)[0])
    else:
        k = int(n.attr("k"))
    size = shape[axis]
    if k > size:
        n.fail(f"K={k} is larger than the axis size {size}")
    if k < 1:
        n.fail(f"K={k}: the outputs would be empty (WebNN operands cannot have a 0-sized axis)")
    largest = bool(n.attr("largest", 1))
    check_made(n, "the positions along the axis", [size])
    pairs = prod(shape) * size
    if pairs <= MAX_RANK_ELEMENTS and (k > MAX_ROUNDS or size <= 4 * k or pairs <= SMALL):
        return _by_ranks(n, axis, k, largest)
    if k <= MAX_ROUNDS:
        return _by_rounds(n, axis, k, largest)
    padded = 1 << (size - 1).bit_length()
    if prod(shape) // size * padded <= MAX_SORT_ELEMENTS:
        return _by_sorting_network(n, axis, k, largest)
    n.fail(
        f"K={k} over an axis of {size}: more than {MAX_ROUNDS} arg-max rounds, the sort's "
        f"comparison of every element with every other ({pairs} elements for input shape "
        f"{shape}) is above the bound of {MAX_RANK_ELEMENTS}, and its sorting network over "
        f"{prod(shape) // size * padded} elements above the bound of {MAX_SORT_ELEMENTS}"
    )


def _by_ranks(n, axis, k, largest):
    bl = n.b
    shape = n.static_shape(0)
    rank = len(shape)
    size = shape[axis]
    perm = [d for d in range(rank) if d != axis] + [axis]
    moved = perm != list(range(rank))
    x = bl.transpose(n.x(0), perm) if moved else n.x(0)
    lead = [shape[d] for d in perm[:-1]]
    mine = bl.reshape(x, lead + [size, 1])  # element i
    other = bl.reshape(x, lead + [1, size])  # element j
    before = bl.greater if largest else bl.lesser
    comes_first = before(other, mine)
    same = bl.equal(other, mine)
    if np.issubdtype(n.np_dtype(0), np.floating):
        # NaN orders above every number (ONNX Runtime's order): first when largest, else last
        nan_i, nan_j = bl.is_nan(mine), bl.is_nan(other)
        above = bl.logical_and(nan_j, bl.logical_not(nan_i))
        if not largest:
            above = bl.logical_and(nan_i, bl.logical_not(nan_j))
        comes_first = bl.logical_or(comes_first, above)
        same = bl.logical_or(same, bl.logical_and(nan_i, nan_j))
    positions = np.arange(size, dtype=np.int32)
    earlier = bl.lesser(  # j < i, computed in the graph (no n x n constant)
        n.importer.operand(positions.reshape(1, size)),
        n.importer.operand(positions.reshape(size, 1)),
    )
    ahead = bl.logical_or(comes_first, bl.logical_and(same, earlier))  # j before i
    place = bl.reduce_sum(bl.cast(ahead, "int32"), [rank], False)  # [..., n]: i's rank
    order = bl.scatter_elements(
        bl.expand(n.const(0, "int32"), lead + [size]),
        place,
        bl.expand(n.importer.operand(positions), lead + [size]),
        rank - 1,
    )
    if k < size:
        order = bl.slice(order, [0] * rank, lead + [k])
    values = bl.gather_elements(x, order, rank - 1)
    indices = bl.cast(order, "int64")
    if moved:
        back = [perm.index(d) for d in range(rank)]
        values, indices = bl.transpose(values, back), bl.transpose(indices, back)
    return [values, indices]


def _by_rounds(n, axis, k, largest):
    """K rounds of arg_max/arg_min, each masking the element it selected; ties pick the
    lower index first, as ONNX specifies."""
    bl = n.b
    shape = n.static_shape(0)
    rank = len(shape)
    npd = n.np_dtype(0)
    if np.issubdtype(npd, np.floating):
        fill = -np.inf if largest else np.inf
    else:
        info = np.iinfo(npd)
        fill = info.min if largest else info.max
    x = n.x(0)
    cur = x
    if fill == np.inf:
        # smallest: NaN after every number (ORT's order; arg_min would take NaN first), here
        # as +inf, so it ties with +inf by index
        cur = bl.where(bl.is_nan(x), n.importer.operand(np.array(np.inf, dtype=npd)), x)
    iota_shape = [1] * rank
    iota_shape[axis] = shape[axis]
    iota = n.importer.operand(np.arange(shape[axis], dtype=np.int64).reshape(iota_shape))
    fill_op = n.importer.operand(np.array(fill, dtype=npd))
    values, indices = [], []
    for r in range(k):
        idx = (bl.arg_max if largest else bl.arg_min)(cur, axis, True, "int64")
        values.append(bl.gather_elements(x, idx, axis))
        indices.append(idx)
        if r + 1 < k:
            cur = bl.where(bl.equal(iota, idx), fill_op, cur)
    if k == 1:
        return [bl.identity(values[0]), bl.identity(indices[0])]
    return [bl.concat(values, axis), bl.concat(indices, axis)]


def _by_sorting_network(n, axis, k, largest):
    """Bitonic sort of every row along the axis. Each element carries a primary key (its value,
    NaN as +inf, padding as the last value) and an int32 tie key t = index + 2^23 (the NaN
    flag's turn: NaN before +inf when largest, after it otherwise) + 2^24 (padding): keys that
    order exactly as TopK does, so a step is one comparison of every element with its partner
    (gathered at i ^ j) and two `where`s, ~10 nodes (the pairs by slices and concats, with the
    NaN and padding tests inside every comparison, took ~35)."""
    bl = n.b
    shape = n.static_shape(0)
    rank = len(shape)
    size = shape[axis]
    perm = [d for d in range(rank) if d != axis] + [axis]
    moved = perm != list(range(rank))
    x = bl.transpose(n.x(0), perm) if moved else n.x(0)
    lead = [shape[d] for d in perm[:-1]]
    rows = prod(lead)
    npd = n.np_dtype(0)
    floating = np.issubdtype(npd, np.floating)
    p = 1 << (size - 1).bit_length()
    x_rows = bl.reshape(x, [rows, size])
    positions = np.arange(p, dtype=np.int64)
    tie = np.where(positions >= size, 1 << 24, 0) + positions  # padding after every element
    v = x_rows
    if p > size:
        if floating:
            last = -np.inf if largest else np.inf
        else:
            info = np.iinfo(npd)
            last = info.min if largest else info.max
        v = bl.pad(v, [0, 0], [0, p - size], value=float(last) if floating else int(last))
    if floating:
        nan = bl.is_nan(v)
        later = 1 << 23  # the tie key of the pairs that come after their equals
        t_nan, t_number = (tie + later, tie) if not largest else (tie, tie + later)
        t = bl.where(nan, _int32(n, t_nan), _int32(n, t_number))
        v = bl.where(nan, n.importer.operand(np.array(np.inf, dtype=npd)), v)
    else:
        t = bl.expand(_int32(n, tie), [rows, p])
    before = bl.greater if largest else bl.lesser
    lane = np.arange(p)
    block = 2
    while block <= p:
        j = block // 2
        while j >= 1:
            partner = n.importer.operand((lane ^ j).astype(np.int32))
            # keep your own pair where (it comes first) == (you are the lower lane of a block
            # sorted forward, or the upper lane of one sorted backward)
            lower, forward = (lane & j) == 0, (lane & block) == 0
            flip = n.importer.operand((lower != forward).astype(np.uint8).reshape(1, p))
            pv, pt = bl.gather(v, partner, 1), bl.gather(t, partner, 1)
            first = bl.logical_or(
                before(v, pv), bl.logical_and(bl.equal(v, pv), bl.lesser(t, pt))
            )
            keep = bl.logical_xor(first, flip)
            v, t = bl.where(keep, v, pv), bl.where(keep, t, pt)
            j //= 2
        block *= 2
    t = bl.slice(t, [0, 0], [rows, k])  # never padding: k <= size
    later_op = n.const(1 << 23, "int32")
    order = bl.where(bl.greater_or_equal(t, later_op), bl.sub(t, later_op), t)
    values = bl.reshape(bl.gather_elements(x_rows, order, 1), lead + [k])
    indices = bl.reshape(bl.cast(order, "int64"), lead + [k])
    if moved:
        back = [perm.index(d) for d in range(rank)]
        values, indices = bl.transpose(values, back), bl.transpose(indices, back)
    return [values, indices]


def _int32(n, values):
    return n.importer.operand(np.asarray(values, dtype=np.int32).reshape(1, -1))
