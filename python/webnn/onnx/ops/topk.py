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
* Chunked ranks: for K > MAX_ROUNDS over an axis too long to rank whole (an NMS-free YOLO
  head's K = 300 of 8,400 boxes), the axis is cut into chunks of at least K elements, each
  chunk's first K found by ranks, then the first K of those candidates by ranks again. Exact:
  the candidates keep the axis order (chunk by chunk, each chunk's in its sorted order), so
  ties still go to the lower index; the last chunk is padded with values every element comes
  before (-inf / the integer minimum for largest; NaN / the integer maximum for smallest).
"""

import numpy as np

from .registry import op
from .util import check_made, norm_axis, prod

MAX_ROUNDS = 256
MAX_RANK_ELEMENTS = 1 << 24
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
    chunks = _chunk_count(prod(shape) // size, size, k)
    if chunks is not None:
        return _by_chunks(n, axis, k, largest, chunks)
    n.fail(
        f"K={k} over an axis of {size}: more than {MAX_ROUNDS} arg-max rounds, and the sort's "
        f"comparison of every element with every other ({pairs} elements for input shape "
        f"{shape}) is above the bound of {MAX_RANK_ELEMENTS}, also in chunks of K"
    )


def _chunk_count(rows, size, k):
    """The number of chunks whose two rank stages (rows x chunks x m^2, then rows x
    (chunks x K)^2 comparisons, m = the chunk size >= K) each stay within the bound, and cost
    the fewest comparisons; None when no count does."""
    best = None
    for chunks in range(2, size // k + 1):
        m = -(-size // chunks)
        first, second = rows * chunks * m * m, rows * (chunks * k) ** 2
        if max(first, second) <= MAX_RANK_ELEMENTS and (best is None or first + second < best[0]):
            best = (first + second, chunks)
    return None if best is None else best[1]


def _moved_last(n, axis):
    """The input with `axis` moved last, the permutation and the leading dims."""
    shape = n.static_shape(0)
    rank = len(shape)
    perm = [d for d in range(rank) if d != axis] + [axis]
    x = n.b.transpose(n.x(0), perm) if perm != list(range(rank)) else n.x(0)
    return x, perm, [shape[d] for d in perm[:-1]]


def _moved_back(n, perm, outputs):
    if perm == list(range(len(perm))):
        return outputs
    back = [perm.index(d) for d in range(len(perm))]
    return [n.b.transpose(o, back) for o in outputs]


def _by_chunks(n, axis, k, largest, chunks):
    bl = n.b
    size = n.static_shape(0)[axis]
    x, perm, lead = _moved_last(n, axis)
    m = -(-size // chunks)
    npd = n.np_dtype(0)
    if chunks * m > size:
        if np.issubdtype(npd, np.floating):
            fill = -np.inf if largest else np.nan  # after every element, NaN included
        else:
            fill = np.iinfo(npd).min if largest else np.iinfo(npd).max
        pad = np.full(lead + [chunks * m - size], fill, npd)
        x = bl.concat([x, n.importer.operand(pad)], len(lead))
    blocks = bl.reshape(x, lead + [chunks, m])
    values, order = _first_by_ranks(n, blocks, lead + [chunks], m, k, largest)
    offsets = (np.arange(chunks, dtype=np.int32) * m).reshape(chunks, 1)
    where = bl.add(order, n.importer.operand(offsets))  # positions along the whole axis
    values = bl.reshape(values, lead + [chunks * k])
    where = bl.reshape(where, lead + [chunks * k])
    values, picked = _first_by_ranks(n, values, lead, chunks * k, k, largest)
    indices = bl.cast(bl.gather_elements(where, picked, len(lead)), "int64")
    return _moved_back(n, perm, [values, indices])


def _by_ranks(n, axis, k, largest):
    size = n.static_shape(0)[axis]
    x, perm, lead = _moved_last(n, axis)
    values, order = _first_by_ranks(n, x, lead, size, k, largest)
    return _moved_back(n, perm, [values, n.b.cast(order, "int64")])


def _first_by_ranks(n, x, lead, size, k, largest):
    """The first k of x (shape lead + [size], the input's dtype) along its last axis: values
    and int32 positions."""
    bl = n.b
    rank = len(lead) + 1
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
    return bl.gather_elements(x, order, rank - 1), order


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
