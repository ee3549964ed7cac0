"""DeformConv (2-D and 3-D, opset 19): every kernel tap reads the input at its own run-time
offset, bi- or trilinearly interpolated with zeros outside the image (ONNX's definition:
GridSample with align_corners=1), times the optional mask; the taps' samples then meet the
weights in one grouped matrix product."""

import numpy as np

from .registry import op
from .sampling import gather_clamped
from .util import prod, window_attributes

# Each tap is a sampling of its own (2^rank gathers): kernels beyond this are not imported.
MAX_TAPS = 1024
# Each tap's sample positions start from constants of the graph, one per spatial axis and
# output position: taps x rank x positions elements in all.
MAX_POSITION_CONSTANTS = 1 << 26


@op("DeformConv")
def deform_conv(n):
    bl = n.b
    xshape = n.static_shape(0)
    rank = len(xshape) - 2
    if rank not in (2, 3):
        n.fail(f"DeformConv of rank {len(xshape)} (2-D and 3-D are supported)")
    N, C, *spatial = xshape
    wshape = n.static_shape(1)
    oc, cpg, *kernel = wshape
    if len(kernel) != rank:
        n.fail(f"weights of shape {wshape} for a {rank}-D input")
    if [int(v) for v in n.attr("kernel_shape", kernel)] != kernel:
        n.fail(f"kernel_shape {n.attr('kernel_shape')} does not match the weights {kernel}")
    strides, dil, pads = window_attributes(n, rank)
    group = int(n.attr("group", 1))
    og = int(n.attr("offset_group", 1))
    taps = prod(kernel)
    if min(kernel + [group, og]) < 1 or taps > MAX_TAPS:
        n.fail(f"kernel {kernel}, group {group} and offset_group {og} (at most {MAX_TAPS} taps)")
    offshape = n.static_shape(2)
    out = offshape[2:]
    consistent = len(out) == rank and offshape[1] == og * rank * taps
    if not consistent or C % og or C != cpg * group or oc % group:
        n.fail(f"offsets of shape {offshape}, input {xshape}, weights {wshape}, group {group} "
               f"and offset_group {og} are inconsistent")  # fmt: skip
    expected = [
        (spatial[a] + pads[a] + pads[rank + a] - dil[a] * (kernel[a] - 1) - 1) // strides[a] + 1
        for a in range(rank)
    ]
    if out != expected:
        n.fail(f"offsets of shape {offshape} do not match the output size {expected} of this "
               "input, kernel, strides, pads and dilations")  # fmt: skip
    P = prod(out)
    if min(out) < 1:
        n.fail(f"offsets of shape {offshape} give an empty output")
    if taps * rank * P > MAX_POSITION_CONSTANTS:
        n.fail(f"{taps} taps x {rank} axes x {P} output positions are too many sample positions"
               f" to import (at most {MAX_POSITION_CONSTANTS})")  # fmt: skip
    dt = n.dtype(0)
    cg = C // og

    def c(v):
        return n.const(v, dt)

    offsets = bl.reshape(n.x(2), [N, og, taps, rank, P])
    mask = bl.reshape(n.x(4), [N, og, taps, 1, P]) if n.has(4) else None
    xg = bl.reshape(n.x(0), [N, og, cg, prod(spatial)])
    # Where each output position's window starts, per axis, as [1, 1, P].
    grid = np.indices(out).reshape(rank, 1, 1, P)
    base = [(grid[a] * strides[a] - pads[a]).astype(np.float32) for a in range(rank)]

    def corner(pos, weight):
        values, inside = gather_clamped(n, xg, pos, spatial, [N, og], cg)
        w = bl.where(inside, weight, c(0.0))
        return bl.mul(values, bl.reshape(w, [N, og, 1, P]))

    sampled = []
    for t in range(taps):
        tap = np.unravel_index(t, kernel)
        # Per axis: the low and the high neighbour, each with its interpolation weight.
        ends = []
        for a in range(rank):
            off = bl.reshape(bl.slice(offsets, [0, 0, t, a, 0], [N, og, 1, 1, P]), [N, og, P])
            v = bl.add(n.importer.operand(base[a] + np.float32(tap[a] * dil[a])), off)
            v0 = bl.floor(v)
            frac = bl.sub(v, v0)
            ends.append([(v0, bl.sub(c(1.0), frac)), (bl.add(v0, c(1.0)), frac)])

        v = _interpolate(bl, corner, ends, [])
        if mask is not None:
            m = bl.reshape(bl.slice(mask, [0, 0, t, 0, 0], [N, og, 1, 1, P]), [N, og, 1, P])
            v = bl.mul(v, m)
        sampled.append(bl.reshape(v, [N, C, 1, P]))
    s = bl.concat(sampled, 2) if taps > 1 else sampled[0]  # [N, C, taps, P]
    s = bl.reshape(s, [N, group, cpg * taps, P])
    w = bl.reshape(n.x(1), [1, group, oc // group, cpg * taps])
    y = bl.reshape(bl.matmul(w, s), [N, oc, *out])
    if n.has(3):
        y = bl.add(y, bl.reshape(n.x(3), [1, oc] + [1] * rank))
    return y


def _interpolate(bl, corner, ends, chosen):
    """The sum over the corners whose first axes take the ends `chosen` (a pairwise tree);
    ends[a] is the (position, weight) of axis a's low and high neighbour."""
    if len(chosen) == len(ends):
        weight = chosen[0][1]
        for _, w in chosen[1:]:
            weight = bl.mul(weight, w)
        return corner([p for p, _ in chosen], weight)
    low, high = ends[len(chosen)]
    return bl.add(
        _interpolate(bl, corner, ends, chosen + [low]),
        _interpolate(bl, corner, ends, chosen + [high]),
    )
