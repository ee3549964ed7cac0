"""ScatterElements / ScatterND with a reduction (add, mul, max, min) and indices computed at
run time. WebNN's scatters only replace, so the reduction is written as a comparison of the
indices with every output position (a one-hot mask) and a reduction over the updates.

Both operators are brought to one form: out [R, P, S] (R independent rows, P positions per
row, S elements per position), key [R, N] (the position each of N updates goes to, already
wrapped; -1 where no update exists) and upd [R, N, S]. ScatterElements along axis a has
R = the other axes, P = the axis' size, N = the indices' size along it, S = 1; ScatterND has
R = 1, P = the cells its k-tuples address, N = the tuples, S = the elements per cell.

ONNX applies updates one after the other in index order. Integer sums and products wrap the
same in any order and max/min do not depend on it, so those reduce the masked updates at
once. A float sum or product does depend on the order when indices repeat: with at most
MAX_ORDERED_UPDATES updates per row they are applied one per round, in index order, as
ONNX Runtime does (bit-identical); with more, they are reduced at once and a position that
receives several updates may differ from ONNX Runtime by rounding. Index values out of range
(undefined in ONNX) update nothing.

A float ScatterElements add whose indices are one index per slice along the axis broadcast
over the other axes (an Expand: a graph network's `index_add` / `scatter_add` of edge messages
into nodes) is a product instead: a one-hot [P, N] of that index times the updates [N, S], on
the GEMM kernels, P x N comparisons rather than P x N x S. Non-finite updates are summed apart
(counts of NaN, +inf and -inf per position) so that one does not turn the other positions'
sums to NaN through 0 x inf. Where P + N is at most ORDERED_PRODUCT_DEPTH the data rows go in
front of the updates ([I | one-hot] times [data; updates]): the cpu GEMM sums one K block of up
to 768 terms in K order on one accumulator per element, so each touched position is
((data + u_1) + u_2) + ... in index order, ONNX Runtime's sum bit for bit (a position whose
data and updates are all -0 gives +0); then small graphs (a molecule's 42 edges) take the
product too, instead of one round per update.
"""

import numpy as np

from ..types import FLOAT_TYPES, WEBNN_TO_NUMPY
from .util import prod

# One-hot work the decomposition may take: masked updates [R, N, P, S] reduced at once, or
# rounds of [R, P, S] (N of them). Beyond it the import is refused, naming the sizes.
MAX_ONE_HOT_ELEMENTS = 1 << 24
MAX_ORDERED_UPDATES = 64
MAX_ORDERED_ELEMENTS = 1 << 26
# Terms (positions + updates) of a product whose sums keep ONNX's order: one K block of the
# cpu backend's GEMM (kKc in src/backends/cpu/gemm.cc).
ORDERED_PRODUCT_DEPTH = 768

_REDUCE = {"add": "reduce_sum", "mul": "reduce_product", "max": "reduce_max", "min": "reduce_min"}
_COMBINE = {"add": "add", "mul": "mul", "max": "max", "min": "min"}
# reduce_sum / reduce_product take these types (ops.md 3.5); max/min take any
_ARITHMETIC_TYPES = ("float32", "float16", "int32", "uint32", "int64", "uint64")


def _identity(reduction, dtype):
    """The value that leaves `reduction` unchanged, in WebNN type `dtype`."""
    if reduction == "add":
        return 0
    if reduction == "mul":
        return 1
    if dtype in FLOAT_TYPES:
        return -np.inf if reduction == "max" else np.inf
    info = np.iinfo(WEBNN_TO_NUMPY[dtype])
    return int(info.min) if reduction == "max" else int(info.max)


def reduce_into(n, out, key, upd, reduction):
    """out [R, P, S] with upd [R, N, S] reduced into the positions key [R, N] names."""
    bl = n.b
    rows, positions, size = bl.operand_shape(out)
    count = bl.operand_shape(key)[1]
    dtype = bl.operand_data_type(out)
    if reduction not in _REDUCE:
        n.fail(f"reduction '{reduction}' is not supported")
    if reduction in ("add", "mul") and dtype not in _ARITHMETIC_TYPES:
        n.fail(f"reduction '{reduction}' of {dtype} data with indices known only at run time "
               f"(WebNN's {_REDUCE[reduction]} takes {', '.join(_ARITHMETIC_TYPES)})")  # fmt: skip
    key_dtype = bl.operand_data_type(key)
    work = rows * count * positions * size
    ordered = dtype in FLOAT_TYPES and reduction in ("add", "mul")
    if ordered and count <= MAX_ORDERED_UPDATES and work <= MAX_ORDERED_ELEMENTS:
        return _rounds(n, out, key, upd, reduction, key_dtype)
    if work > MAX_ONE_HOT_ELEMENTS:
        n.fail(
            f"a scatter with reduction '{reduction}' and indices known only at run time compares "
            f"every index with every output position: {count} updates x {positions} positions "
            f"x {rows} rows x {size} elements = {work} elements, above the bound of "
            f"{MAX_ONE_HOT_ELEMENTS} (indices known at import have no such bound)"
        )
    where = n.importer.operand(np.arange(positions, dtype=WEBNN_TO_NUMPY[key_dtype]))
    hit = bl.equal(bl.reshape(key, [rows, count, 1]), bl.reshape(where, [1, 1, positions]))
    hit = bl.reshape(hit, [rows, count, positions, 1])
    masked = bl.where(
        hit, bl.reshape(upd, [rows, count, 1, size]), n.const(_identity(reduction, dtype), dtype)
    )
    reduced = getattr(bl, _REDUCE[reduction])(masked, [1], False)
    touched = bl.reduce_max(hit, [1], False)  # [R, P, 1]: the position receives an update
    return bl.where(touched, getattr(bl, _COMBINE[reduction])(out, reduced), out)


def _rounds(n, out, key, upd, reduction, key_dtype):
    """One update per row and round, in index order (ONNX's order, bit-identical to ORT)."""
    bl = n.b
    rows, positions, size = bl.operand_shape(out)
    count = bl.operand_shape(key)[1]
    where = n.importer.operand(
        np.arange(positions, dtype=WEBNN_TO_NUMPY[key_dtype]).reshape(1, positions)
    )
    combine = getattr(bl, _COMBINE[reduction])
    for i in range(count):
        hit = bl.equal(bl.slice(key, [0, i], [rows, 1]), where)  # [R, P]
        hit = bl.reshape(hit, [rows, positions, 1])
        update = bl.slice(upd, [0, i, 0], [rows, 1, size])  # [R, 1, S]
        out = bl.where(hit, combine(out, update), out)
    return out


def _wrapped(n, index, dims):
    """index (an operand) with negative entries counted from the end of `dims` (broadcast)."""
    bl = n.b
    dtype = bl.operand_data_type(index)
    if dtype.startswith("u"):
        return index
    dims = n.importer.operand(np.asarray(dims, dtype=WEBNN_TO_NUMPY[dtype]))
    return bl.where(bl.lesser(index, n.const(0, dtype)), bl.add(index, dims), index)


def _pad_to(n, x, shape, value):
    """x padded at the end of each axis to `shape` with `value`."""
    have = n.b.operand_shape(x)
    if list(have) == list(shape):
        return x
    ends = [int(s) - int(h) for s, h in zip(shape, have)]
    return n.b.pad(x, [0] * len(ends), ends, mode="constant", value=value)


def scatter_elements_reduce(n, axis, reduction):
    """ScatterElements(data, indices, updates) with a reduction, indices at run time."""
    bl = n.b
    shape = n.static_shape(0)
    ishape = n.static_shape(1)
    rank = len(shape)
    if len(ishape) != rank or n.static_shape(2) != ishape:
        n.fail(f"indices {ishape} and updates {n.shape(2)} must have data's rank {rank} and "
               "equal shapes")  # fmt: skip
    others = [k for k in range(rank) if k != axis]
    if any(ishape[k] > shape[k] for k in others):
        n.fail(f"indices of shape {ishape} exceed data's shape {shape} off axis {axis}")
    index = _one_index_per_slice(n, axis)
    count = ishape[axis]
    if (
        index is not None
        and reduction == "add"
        and n.dtype(0) in FLOAT_TYPES
        and all(ishape[k] == shape[k] for k in others)
        and shape[axis] * count <= MAX_ONE_HOT_ELEMENTS
        and (
            _ordered_product(shape[axis], count, n.dtype(0))
            or count > MAX_ORDERED_UPDATES
            or prod(ishape) * shape[axis] > MAX_ORDERED_ELEMENTS
        )
    ):
        return _add_by_product(n, axis, index)
    perm = others + [axis]
    key = _wrapped(n, n.x(1), shape[axis])
    key = bl.transpose(key, perm) if perm != list(range(rank)) else key
    upd = bl.transpose(n.x(2), perm) if perm != list(range(rank)) else n.x(2)
    lead = [shape[k] for k in others]
    key = _pad_to(n, key, lead + [ishape[axis]], -1)  # padded rows receive nothing
    upd = _pad_to(n, upd, lead + [ishape[axis]], 0)
    data = bl.transpose(n.x(0), perm) if perm != list(range(rank)) else n.x(0)
    rows = prod(lead)
    out = reduce_into(
        n,
        bl.reshape(data, [rows, shape[axis], 1]),
        bl.reshape(key, [rows, ishape[axis]]),
        bl.reshape(upd, [rows, ishape[axis], 1]),
        reduction,
    )
    out = bl.reshape(out, lead + [shape[axis]])
    if perm == list(range(rank)):
        return out
    return bl.transpose(out, [perm.index(k) for k in range(rank)])


def _one_index_per_slice(n, axis):
    """The indices as one index per position along `axis` ([count] operand), when they are an
    Expand of a tensor whose other axes are 1; else None."""
    bl = n.b
    entry = n.importer.expanded.get(id(n.inputs[1]))
    if entry is None or entry[0] is not n.inputs[1]:
        return None
    source = entry[1]
    sshape = bl.operand_shape(source)
    if any(d != 1 for k, d in enumerate(sshape) if k != axis):
        return None
    count = n.static_shape(1)[axis]
    index = bl.reshape(source, [sshape[axis]])
    return index if sshape[axis] == count else bl.expand(index, [count])


def _ordered_product(positions, count, dtype):
    """Whether the product form can sum the data and its updates in ONNX's order (float32:
    a float16 product sums in float32, where ONNX rounds to float16 after every update)."""
    terms = positions + count
    small = terms <= ORDERED_PRODUCT_DEPTH and positions * terms <= MAX_ONE_HOT_ELEMENTS
    return small and dtype == "float32"


def _add_by_product(n, axis, index):
    """data + onehot(index) @ updates, along `axis` (see the module docstring)."""
    bl = n.b
    shape = n.static_shape(0)
    rank = len(shape)
    dtype = n.dtype(0)
    positions, count = shape[axis], n.static_shape(1)[axis]
    perm = [axis] + [k for k in range(rank) if k != axis]
    moved = perm != list(range(rank))
    rest = [shape[k] for k in perm[1:]]
    size = prod(rest)
    upd = bl.reshape(bl.transpose(n.x(2), perm) if moved else n.x(2), [count, size])
    data = bl.reshape(bl.transpose(n.x(0), perm) if moved else n.x(0), [positions, size])
    key = _wrapped(n, index, shape[axis])
    where = n.importer.operand(
        np.arange(positions, dtype=WEBNN_TO_NUMPY[bl.operand_data_type(key)])
    )
    hit = bl.cast(bl.equal(bl.reshape(where, [positions, 1]), bl.reshape(key, [1, count])), dtype)
    touched = bl.greater(bl.reduce_sum(hit, [1], True), n.const(0, dtype))  # [P, 1]
    ordered = _ordered_product(positions, count, dtype)
    if ordered:  # the data first, then the updates in index order
        eye = n.importer.operand(np.eye(positions, dtype=WEBNN_TO_NUMPY[dtype]))
        onehot, upd = bl.concat([eye, hit], 1), bl.concat([data, upd], 0)
    else:
        onehot = hit
    zero, inf = n.const(0, dtype), n.const(np.inf, dtype)
    finite = bl.where(bl.equal(bl.sub(upd, upd), zero), upd, zero)  # x - x: NaN unless finite
    nan, positive, negative = bl.is_nan(upd), bl.equal(upd, inf), bl.equal(upd, bl.neg(inf))
    flags = bl.concat([bl.cast(f, dtype) for f in (nan, positive, negative)], 1)  # [N, 3S]
    sums = bl.matmul(onehot, finite)  # [P, S]
    hits = bl.greater(bl.matmul(onehot, flags), zero)  # [P, 3S]: NaN, +inf, -inf received
    got_nan, got_pos, got_neg = (bl.slice(hits, [0, i * size], [positions, size]) for i in range(3))
    sums = bl.where(got_pos, inf, bl.where(got_neg, bl.neg(inf), sums))
    nan_value = n.const(np.nan, dtype)
    sums = bl.where(bl.logical_or(got_nan, bl.logical_and(got_pos, got_neg)), nan_value, sums)
    summed = sums if ordered else bl.add(data, sums)
    out = bl.reshape(bl.where(touched, summed, data), [positions] + rest)
    return bl.transpose(out, [perm.index(k) for k in range(rank)]) if moved else out


def scatter_nd_reduce(n, reduction):
    """ScatterND(data, indices, updates) with a reduction, indices at run time."""
    bl = n.b
    shape = n.static_shape(0)
    ishape = n.static_shape(1)
    k = ishape[-1]
    if k > len(shape):
        n.fail(f"indices address {k} axes of data of rank {len(shape)}")
    count = prod(ishape[:-1])
    cells = prod(shape[:k])
    size = prod(shape[k:])
    index = bl.reshape(n.x(1), [count, k])
    index = _wrapped(n, index, np.asarray(shape[:k]).reshape(1, k))
    dtype = bl.operand_data_type(index)
    strides = [prod(shape[j + 1 : k]) for j in range(k)]
    stride = n.importer.operand(np.asarray(strides, dtype=WEBNN_TO_NUMPY[dtype]).reshape(1, k))
    # an out-of-range coordinate makes the whole tuple miss instead of aliasing another cell
    dims = n.importer.operand(np.asarray(shape[:k], dtype=WEBNN_TO_NUMPY[dtype]).reshape(1, k))
    inside = bl.logical_and(bl.greater_or_equal(index, n.const(0, dtype)), bl.lesser(index, dims))
    inside = bl.reduce_min(inside, [1], False)
    linear = bl.reduce_sum(bl.mul(index, stride), [1], False)
    linear = bl.where(inside, linear, n.const(-1, dtype) if not dtype.startswith("u") else
                      n.const(cells, dtype))  # fmt: skip
    out = reduce_into(
        n,
        bl.reshape(n.x(0), [1, cells, size]),
        bl.reshape(linear, [1, count]),
        bl.reshape(n.x(2), [1, count, size]),
        reduction,
    )
    return bl.reshape(out, shape)
