"""Reading an image at positions computed at run time (DeformConv, GridSample, RoiAlign): the
flat pixel index of per-axis integer positions, gathered for every channel with
gather_elements (WebNN has no gather_nd over computed float positions)."""

from .util import prod


def gather_at(n, flat, positions, strides, lead, channels):
    """flat [*lead, channels, pixels] read at pixel sum(position_k * stride_k): the positions are
    float tensors of whole values inside the image, broadcasting to [*lead, *points]; returns
    [*lead, channels, prod(points)]."""
    bl = n.b
    dt = bl.operand_data_type(positions[0])
    index = None
    for pos, stride in zip(positions, strides):
        term = pos if stride == 1 else bl.mul(pos, n.const(float(stride), dt))
        index = term if index is None else bl.add(index, term)
    points = prod(bl.operand_shape(index)[len(lead) :])
    index = bl.reshape(bl.cast(index, "int32"), [*lead, 1, points])
    index = bl.expand(index, [*lead, channels, points])
    return bl.gather_elements(flat, index, len(lead) + 1)


def gather_clamped(n, flat, positions, sizes, lead, channels):
    """gather_at of positions that may lie outside the image of `sizes` (outermost axis first):
    each is clamped into it; returns the values and where the position was inside ([*lead, P]
    bool), for the caller to zero the others."""
    bl = n.b
    dt = bl.operand_data_type(positions[0])
    inside, clamped = None, []
    for pos, size in zip(positions, sizes):
        ok = bl.logical_and(
            bl.greater_or_equal(pos, n.const(0.0, dt)),
            bl.lesser_or_equal(pos, n.const(size - 1.0, dt)),
        )
        inside = ok if inside is None else bl.logical_and(inside, ok)
        clamped.append(bl.clamp(pos, min_value=0.0, max_value=float(size - 1)))
    strides = [prod(sizes[k + 1 :]) for k in range(len(sizes))]
    return gather_at(n, flat, clamped, strides, lead, channels), inside
