"""DeformConv (2-D, opset 19): every kernel tap reads the input at its own run-time offset,
bilinearly interpolated with zeros outside the image (ONNX's definition: GridSample with
align_corners=1), times the optional mask; the taps' samples then meet the weights in one
grouped matrix product."""

import numpy as np

from .registry import op
from .sampling import gather_clamped


@op("DeformConv")
def deform_conv(n):
    bl = n.b
    xshape = n.static_shape(0)
    if len(xshape) != 4:
        n.fail(f"DeformConv of rank {len(xshape)} (2-D is supported)")
    N, C, H, W = xshape
    oc, cpg, kh, kw = n.static_shape(1)
    kernel = [int(v) for v in n.attr("kernel_shape", [kh, kw])]
    if kernel != [kh, kw]:
        n.fail(f"kernel_shape {kernel} does not match the weights {[kh, kw]}")
    strides = [int(v) for v in n.attr("strides", [1, 1])]
    dil = [int(v) for v in n.attr("dilations", [1, 1])]
    pads = [int(v) for v in n.attr("pads", [0, 0, 0, 0])]
    group = int(n.attr("group", 1))
    og = int(n.attr("offset_group", 1))
    taps = kh * kw
    _, off_c, oh, ow = n.static_shape(2)
    if off_c != og * 2 * taps or C % og or C != cpg * group or oc % group:
        n.fail(f"offset channels {off_c}, input {C}, weights {[oc, cpg, kh, kw]}, group {group} "
               f"and offset_group {og} are inconsistent")  # fmt: skip
    dt = n.dtype(0)
    P = oh * ow
    cg = C // og

    def c(v):
        return n.const(v, dt)

    offsets = bl.reshape(n.x(2), [N, og, taps, 2, P])
    mask = bl.reshape(n.x(4), [N, og, taps, 1, P]) if n.has(4) else None
    xg = bl.reshape(n.x(0), [N, og, cg, H * W])
    base_h = (np.arange(oh) * strides[0] - pads[0]).astype(np.float32)
    base_w = (np.arange(ow) * strides[1] - pads[1]).astype(np.float32)
    base_h = np.repeat(base_h, ow).reshape(1, 1, P)
    base_w = np.tile(base_w, oh).reshape(1, 1, P)

    def corner(yy, xx, weight):
        values, inside = gather_clamped(n, xg, [yy, xx], [H, W], [N, og], cg)
        w = bl.where(inside, weight, c(0.0))
        return bl.mul(values, bl.reshape(w, [N, og, 1, P]))

    sampled = []
    for t in range(taps):
        i, j = divmod(t, kw)

        off_h, off_w = (
            bl.reshape(bl.slice(offsets, [0, 0, t, k, 0], [N, og, 1, 1, P]), [N, og, P])
            for k in (0, 1)
        )
        yy = bl.add(n.importer.operand(base_h + np.float32(i * dil[0])), off_h)
        xx = bl.add(n.importer.operand(base_w + np.float32(j * dil[1])), off_w)
        y0, x0 = bl.floor(yy), bl.floor(xx)
        y1, x1 = bl.add(y0, c(1.0)), bl.add(x0, c(1.0))
        ly, lx = bl.sub(yy, y0), bl.sub(xx, x0)
        hy, hx = bl.sub(c(1.0), ly), bl.sub(c(1.0), lx)
        v = bl.add(
            bl.add(corner(y0, x0, bl.mul(hy, hx)), corner(y0, x1, bl.mul(hy, lx))),
            bl.add(corner(y1, x0, bl.mul(ly, hx)), corner(y1, x1, bl.mul(ly, lx))),
        )
        if mask is not None:
            m = bl.reshape(bl.slice(mask, [0, 0, t, 0, 0], [N, og, 1, 1, P]), [N, og, 1, P])
            v = bl.mul(v, m)
        sampled.append(bl.reshape(v, [N, C, 1, P]))
    s = bl.concat(sampled, 2) if taps > 1 else sampled[0]  # [N, C, taps, P]
    s = bl.reshape(s, [N, group, cpg * taps, P])
    w = bl.reshape(n.x(1), [1, group, oc // group, cpg * taps])
    y = bl.reshape(bl.matmul(w, s), [N, oc, oh, ow])
    if n.has(3):
        y = bl.add(y, bl.reshape(n.x(3), [1, oc, 1, 1]))
    return y
