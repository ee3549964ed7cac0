"""Slice, Gather*/Scatter*, Pad, Trilu, CumSum, DepthToSpace/SpaceToDepth, OneHot."""

import numpy as np

from .registry import op
from .scatter_reduce import scatter_elements_reduce, scatter_nd_reduce
from .util import check_made, norm_axis, prod


def _ints(a):
    return [int(v) for v in np.asarray(a).reshape(-1)]


def slice_operand(n, x, starts, ends, axes, steps):
    """ONNX Slice semantics (clamping, negative indices and steps) on an operand."""
    bl = n.b
    shape = bl.operand_shape(x)
    rank = len(shape)
    begin = [0] * rank
    sizes = list(shape)
    strides = [1] * rank
    reverse = []
    for s, e, a, st in zip(starts, ends, axes, steps):
        a = norm_axis(n, a, rank)
        dim = shape[a]
        if not isinstance(dim, int):
            if s == 0 and st == 1 and e >= 2**31 - 1:
                continue
            n.fail(f"Slice of dynamic axis {a}")
        if st == 0:
            n.fail("slice step 0")
        idx = range(*slice(s, e, st).indices(dim))
        if len(idx) == 0:
            n.fail(f"slice of axis {a} is empty (WebNN operands cannot be empty)")
        # WebNN's size is the extent read from the input; the output has ceil(size/stride).
        extent = (len(idx) - 1) * abs(st) + 1
        if st > 0:
            begin[a], sizes[a], strides[a] = idx[0], extent, st
        else:
            reverse.append(a)
            begin[a], sizes[a], strides[a] = dim - 1 - idx[0], extent, -st
    if reverse:
        x = bl.reverse(x, sorted(reverse))
    if begin == [0] * rank and sizes == list(shape) and strides == [1] * rank:
        return x if reverse else bl.identity(x)
    if all(s == 1 for s in strides):
        return bl.slice(x, begin, sizes)
    return bl.slice(x, begin, sizes, strides)


@op("Slice")
def slice_(n):
    rank = n.rank(0)
    if n.opset < 10:
        starts, ends = list(n.attr("starts")), list(n.attr("ends"))
        axes = list(n.attr("axes", list(range(len(starts)))))
        steps = [1] * len(starts)
    else:
        starts = _ints(n.c(1, what="starts"))
        ends = _ints(n.c(2, what="ends"))
        axes = _ints(n.c(3, what="axes")) if n.has(3) else list(range(len(starts)))
        steps = _ints(n.c(4, what="steps")) if n.has(4) else [1] * len(starts)
    del rank
    return slice_operand(n, n.x(0), starts, ends, axes, steps)


def _indices(n, i, dim):
    """Indices with negative entries wrapped (ONNX allows -dim..dim-1)."""
    if n.is_const(i):
        idx = n.c(i).astype(np.int64)
        if (idx >= dim).any() or (idx < -dim).any():
            n.fail(f"index out of range for an axis of size {dim}")
        idx = np.where(idx < 0, idx + dim, idx)
        if dim < 2**31:
            idx = idx.astype(np.int32)
        return n.importer.operand(idx)
    x = n.x(i)
    dt = n.dtype(i)
    if dt.startswith("u"):
        return x
    bl = n.b
    return bl.where(bl.lesser(x, n.const(0, dt)), bl.add(x, n.const(dim, dt)), x)


@op("Gather")
def gather(n):
    shape = n.shape(0)
    axis = norm_axis(n, int(n.attr("axis", 0)), len(shape))
    return n.b.gather(n.x(0), _indices(n, 1, shape[axis]), axis)


@op("GatherElements")
def gather_elements(n):
    shape = n.shape(0)
    axis = norm_axis(n, int(n.attr("axis", 0)), len(shape))
    return n.b.gather_elements(n.x(0), _indices(n, 1, shape[axis]), axis)


def _nd_indices(n, i, data_shape, batch_dims):
    ishape = n.static_shape(i)
    k = ishape[-1]
    if n.is_const(i):
        idx = n.c(i).astype(np.int64)
        dims = np.array(data_shape[batch_dims : batch_dims + k], dtype=np.int64)
        idx = np.where(idx < 0, idx + dims, idx)
        idx_op = None
    else:
        idx = None
        x = n.x(i)
        dt = n.dtype(i)
        dims = n.importer.operand(
            np.array(data_shape[batch_dims : batch_dims + k], dtype=n.np_dtype(i))
        )
        bl = n.b
        idx_op = bl.where(bl.lesser(x, n.const(0, dt)), bl.add(x, dims), x)
    if batch_dims == 0:
        return idx_op if idx is None else n.importer.operand(idx)
    lead = ishape[:-1]
    check_made(n, "the batch index grid", lead + [batch_dims])
    grids = np.meshgrid(*[np.arange(d) for d in lead[:batch_dims]], indexing="ij")
    grid = np.stack(grids, axis=-1).reshape(
        lead[:batch_dims] + [1] * (len(lead) - batch_dims) + [batch_dims]
    )
    grid = np.broadcast_to(grid, lead + [batch_dims])
    if idx is not None:
        return n.importer.operand(np.concatenate([grid, idx], axis=-1))
    dt = n.dtype(i)
    g = n.importer.operand(np.require(grid, requirements="C").astype(n.np_dtype(i)))
    del dt
    return n.b.concat([g, idx_op], len(lead))


@op("GatherND")
def gather_nd(n):
    shape = n.static_shape(0)
    bd = int(n.attr("batch_dims", 0))
    return n.b.gather_nd(n.x(0), _nd_indices(n, 1, shape, bd))


_REDUCE = {"add": "add", "mul": "mul", "max": "max", "min": "min"}


def _scatter_reduce(n, data, nd, updates_flat, reduction):
    """Scatter with a reduction, for indices known at import: in rounds whose indices are
    unique, out[idx] = reduce(out[idx], update) via gather_nd + scatter_nd (duplicates
    accumulate one per round, in index order)."""
    if reduction not in _REDUCE:
        n.fail(f"reduction '{reduction}' is not supported")
    bl = n.b
    keys = [tuple(row) for row in nd.tolist()]
    seen = {}
    rounds = []
    for u, key in enumerate(keys):
        r = seen.get(key, 0)
        seen[key] = r + 1
        if r == len(rounds):
            rounds.append([])
        rounds[r].append(u)
    out = data
    for positions in rounds:
        idx = n.importer.operand(nd[positions].astype(np.int64))
        upd = bl.gather(updates_flat, n.importer.operand(np.array(positions, np.int32)), 0)
        cur = bl.gather_nd(out, idx)
        out = bl.scatter_nd(out, idx, getattr(bl, _REDUCE[reduction])(cur, upd))
    return out


def _check_in_range(n, wrapped, sizes):
    """Indices known at import (negatives already wrapped) within the sizes they address:
    ONNX Runtime refuses the others; the gather/scatter pair of a reduction would clamp them."""
    bad = (wrapped < 0) | (wrapped >= sizes)
    if bad.any():
        where = tuple(int(v) for v in np.argwhere(bad)[0])
        n.fail(f"indices: entry {list(where)} is out of range for axis size(s) "
               f"{np.asarray(sizes).tolist()} (after counting negatives from the end)")  # fmt: skip


@op("ScatterElements", "Scatter")
def scatter_elements(n):
    red = n.attr("reduction", "none")
    shape = n.shape(0)
    axis = norm_axis(n, int(n.attr("axis", 0)), len(shape))
    if red != "none" and not n.is_const(1):
        return scatter_elements_reduce(n, axis, red)  # one-hot comparison (scatter_reduce.py)
    if red != "none":
        idx = n.c(1)
        idx = np.where(idx < 0, idx + shape[axis], idx).astype(np.int64)
        _check_in_range(n, idx, shape[axis])
        grid = np.indices(idx.shape).reshape(idx.ndim, -1).T.copy()
        grid[:, axis] = idx.reshape(-1)
        flat = n.b.reshape(n.x(2), [int(idx.size)])
        return _scatter_reduce(n, n.x(0), grid, flat, red)
    return n.b.scatter_elements(n.x(0), _indices(n, 1, shape[axis]), n.x(2), axis)


@op("ScatterND")
def scatter_nd(n):
    red = n.attr("reduction", "none")
    shape = n.static_shape(0)
    if red != "none" and not n.is_const(1):
        return scatter_nd_reduce(n, red)  # one-hot comparison (scatter_reduce.py)
    if red != "none":
        idx = n.c(1)
        k = idx.shape[-1]
        dims = np.array(shape[:k], dtype=np.int64)
        nd = np.where(idx < 0, idx + dims, idx).reshape(-1, k).astype(np.int64)
        _check_in_range(n, nd, dims)
        flat = n.b.reshape(n.x(2), [nd.shape[0]] + shape[k:])
        return _scatter_reduce(n, n.x(0), nd, flat, red)
    return n.b.scatter_nd(n.x(0), _nd_indices(n, 1, shape, 0), n.x(2))


@op("Pad")
def pad(n):
    shape = n.shape(0)
    rank = len(shape)
    mode = n.attr("mode", "constant")
    if n.opset < 11:
        pads = list(n.attr("pads", n.attr("paddings")))
        value = float(n.attr("value", 0.0))
    else:
        pads = _ints(n.c(1, what="pads"))
        value = 0
        if n.has(2) and not n.is_const(2) and mode == "constant":
            return _pad_runtime_value(n, shape, pads, rank)
        if n.has(2):
            v = n.c(2, what="constant_value").reshape(-1)
            value = v[0].item() if v.size else 0
    begin, end = _pad_amounts(n, pads, rank)
    x = n.x(0)
    bl = n.b
    # Negative pads crop.
    if any(p < 0 for p in begin + end):
        starts = [max(0, -p) for p in begin]
        sizes = [shape[a] - starts[a] - max(0, -end[a]) for a in range(rank)]
        x = bl.slice(x, starts, sizes)
        begin = [max(0, p) for p in begin]
        end = [max(0, p) for p in end]
    if not any(begin + end):
        return bl.identity(x)
    if mode == "constant":
        if not np.isfinite(value):
            # +-inf/NaN cannot be written as a .webnn option: pad with 0, then select the
            # value (a constant operand) on the padding.
            padded = bl.pad(x, begin, end, mode="constant", value=0)
            cur = bl.operand_shape(x)
            check_made(n, "the padding mask", [c + b + e for c, b, e in zip(cur, begin, end)])
            mask = np.pad(np.zeros(cur, np.uint8), list(zip(begin, end)), constant_values=1)
            fill = n.importer.operand(np.array(value, dtype=n.np_dtype(0)))
            return bl.where(n.importer.operand(mask), fill, padded)
        return bl.pad(x, begin, end, mode="constant", value=value)
    if mode == "edge":
        return bl.pad(x, begin, end, mode="edge")
    if mode == "reflect":
        return bl.pad(x, begin, end, mode="reflection")
    if mode == "wrap":
        cur = bl.operand_shape(x)
        for a in range(rank):
            if begin[a] == 0 and end[a] == 0:
                continue
            dim = cur[a]
            reps = -(-(begin[a] + end[a]) // dim) + 1
            tiles = [1] * rank
            tiles[a] = reps + 1
            t = bl.tile(x, tiles)
            starts = [0] * rank
            starts[a] = (dim - begin[a] % dim) % dim
            sizes = list(cur)
            sizes[a] = dim + begin[a] + end[a]
            x = bl.slice(t, starts, sizes)
            cur = bl.operand_shape(x)
        return x
    n.fail(f"pad mode '{mode}' is not supported")


def _pad_amounts(n, pads, rank):
    """Pad's `pads` ([x1_begin, x2_begin, ..., x1_end, ...] over `axes`, opset 18, or all axes)
    as per-axis begin and end lists."""
    axes = list(range(rank))
    if n.opset >= 18 and n.has(3):
        axes = [norm_axis(n, a, rank) for a in _ints(n.c(3, what="axes"))]
    k = len(axes)
    begin, end = [0] * rank, [0] * rank
    for j, a in enumerate(axes):
        begin[a], end[a] = pads[j], pads[j + k]
    return begin, end


def _pad_runtime_value(n, shape, pads, rank):
    """Pad with a value computed at run time: pad with 0, then select the value where a
    constant mask says 'padding'."""
    begin, end = _pad_amounts(n, pads, rank)
    if any(p < 0 for p in begin + end):
        n.fail("negative pads with a run-time constant_value")
    bl = n.b
    check_made(n, "the padding mask", [d + b + e for d, b, e in zip(shape, begin, end)])
    padded = bl.pad(n.x(0), begin, end, mode="constant", value=0)
    mask = np.pad(np.zeros(shape, np.uint8), list(zip(begin, end)), constant_values=1)
    value = bl.reshape(n.x(2), []) if n.rank(2) else n.x(2)
    return bl.where(n.importer.operand(mask), value, padded)


@op("Trilu")
def trilu(n):
    k = int(n.c(1, what="k").reshape(-1)[0]) if n.has(1) else 0
    return n.b.triangular(n.x(0), upper=bool(n.attr("upper", 1)), diagonal=k)


@op("CumSum")
def cumsum(n):
    rank = n.rank(0)
    axis = norm_axis(n, int(n.c(1, what="axis").reshape(-1)[0]), rank)
    return n.b.cumulative_sum(
        n.x(0), axis, exclusive=bool(n.attr("exclusive", 0)), reversed=bool(n.attr("reverse", 0))
    )


@op("DepthToSpace")
def depth_to_space(n):
    N, C, H, W = n.static_shape(0)
    bs = int(n.attr("blocksize"))
    c = C // (bs * bs)
    bl = n.b
    if n.attr("mode", "DCR") == "DCR":
        y = bl.reshape(n.x(0), [N, bs, bs, c, H, W])
        y = bl.transpose(y, [0, 3, 4, 1, 5, 2])
    else:
        y = bl.reshape(n.x(0), [N, c, bs, bs, H, W])
        y = bl.transpose(y, [0, 1, 4, 2, 5, 3])
    return bl.reshape(y, [N, c, H * bs, W * bs])


@op("SpaceToDepth")
def space_to_depth(n):
    N, C, H, W = n.static_shape(0)
    bs = int(n.attr("blocksize"))
    bl = n.b
    y = bl.reshape(n.x(0), [N, C, H // bs, bs, W // bs, bs])
    if n.attr("mode", "DCR") == "CRD":
        y = bl.transpose(y, [0, 1, 3, 5, 2, 4])
    else:
        y = bl.transpose(y, [0, 3, 5, 1, 2, 4])
    return bl.reshape(y, [N, C * bs * bs, H // bs, W // bs])


@op("OneHot")
def one_hot(n):
    depth = int(n.c(1, what="depth").reshape(-1)[0])
    shape = n.static_shape(0)
    rank = len(shape) + 1
    axis = norm_axis(n, int(n.attr("axis", -1)), rank)
    bl = n.b
    idx = n.x(0)
    dt = n.dtype(0)
    if dt in ("float32", "float16"):
        idx = bl.cast(bl.floor(idx), "int64")  # ONNX casts non-integer indices
        dt = "int64"
    if not dt.startswith("u"):
        idx = bl.where(bl.lesser(idx, n.const(0, dt)), bl.add(idx, n.const(depth, dt)), idx)
    idx = bl.unsqueeze(idx, [axis])
    check_made(n, "the depth positions", [depth])
    ar_shape = [1] * rank
    ar_shape[axis] = depth
    from ..types import WEBNN_TO_NUMPY

    ar = n.importer.operand(np.arange(depth, dtype=WEBNN_TO_NUMPY[dt]).reshape(ar_shape))
    hot = bl.equal(idx, ar)
    values = n.value(2)
    if isinstance(values, np.ndarray):
        off = n.importer.operand(values[0:1].reshape([]).copy())
        on = n.importer.operand(values[1:2].reshape([]).copy())
    else:
        v = n.x(2)
        off = bl.reshape(bl.slice(v, [0], [1]), [])
        on = bl.reshape(bl.slice(v, [1], [1]), [])
    return bl.where(hot, on, off)


del prod
