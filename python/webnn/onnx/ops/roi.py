"""RoiAlign (two-stage detectors' region features), decomposed as ONNX Runtime's CPU kernel
computes it: per region a grid of sample points in each output bin, each sample bilinearly
interpolated from the 4 neighbouring pixels (0 outside [-1, size]), averaged over the bin
('avg') or, ORT's 'max', the largest of the 4 weighted neighbours over the bin's samples."""

import numpy as np

from .registry import op
from .sampling import gather_at

# Sample points gathered per run (regions x channels x output bins x samples per bin): the
# decomposition holds them all as one tensor, and its position constants grow with the grid.
MAX_SAMPLED_ELEMENTS = 1 << 28


@op("RoiAlign")
def roi_align(n):
    bl = n.b
    xshape, rshape, bshape = n.static_shape(0), n.static_shape(1), n.static_shape(2)
    if len(xshape) != 4 or len(rshape) != 2 or rshape[1] != 4 or bshape != rshape[:1]:
        n.fail(f"input {xshape}, rois {rshape} and batch_indices {bshape} (expected [N, C, H, W], "
               "[R, 4] and [R])")  # fmt: skip
    _, C, H, W = xshape
    R = rshape[0]
    ph_n = int(n.attr("output_height", 1))
    pw_n = int(n.attr("output_width", 1))
    ratio = int(n.attr("sampling_ratio", 0))
    scale = float(n.attr("spatial_scale", 1.0))
    mode = n.attr("mode", "avg")
    if ph_n < 1 or pw_n < 1:
        n.fail(f"output_height {ph_n} and output_width {pw_n} must be at least 1")
    if ratio < 0:
        n.fail(f"sampling_ratio {ratio} must not be negative")
    if mode not in ("avg", "max"):
        n.fail(f"mode '{mode}' (avg or max expected)")
    # opset 10 had no attribute and behaved as output_half_pixel
    ctm = n.attr("coordinate_transformation_mode", "half_pixel" if n.opset >= 16 else None)
    half_pixel = ctm == "half_pixel"
    if ctm not in ("half_pixel", "output_half_pixel", None):
        n.fail(f"coordinate_transformation_mode '{ctm}'")
    dt = n.dtype(0)

    def c(v):
        return n.const(v, dt)

    rois = n.x(1)

    def coord(k):
        v = bl.reshape(bl.slice(rois, [0, k], [R, 1]), [R, 1])
        v = bl.mul(v, c(scale))
        return bl.sub(v, c(0.5)) if half_pixel else v

    x1, y1, x2, y2 = coord(0), coord(1), coord(2), coord(3)
    roi_w, roi_h = bl.sub(x2, x1), bl.sub(y2, y1)
    if not half_pixel:
        roi_w = bl.max(roi_w, c(1.0))
        roi_h = bl.max(roi_h, c(1.0))
    bin_h, bin_w = bl.div(roi_h, c(float(ph_n))), bl.div(roi_w, c(float(pw_n)))
    if ratio > 0:
        g_h = g_w = ratio
        grid_h, grid_w = c(float(ratio)), c(float(ratio))
    else:
        # The adaptive grid (ceil(roi size / output size) samples per bin) depends on the
        # region sizes: known at import only when the rois are.
        r = n.c(1, what="rois, which set the adaptive sampling grid (sampling_ratio=0)")
        r = r.astype(np.float32) * np.float32(scale) - np.float32(0.5 if half_pixel else 0)
        rh, rw = r[:, 3] - r[:, 1], r[:, 2] - r[:, 0]
        if not half_pixel:
            rh, rw = np.maximum(rh, 1), np.maximum(rw, 1)
        gh = np.ceil(rh / np.float32(ph_n)).astype(np.float32).reshape(R, 1)
        gw = np.ceil(rw / np.float32(pw_n)).astype(np.float32).reshape(R, 1)
        if not (np.isfinite(gh).all() and np.isfinite(gw).all()):
            n.fail("rois with non-finite coordinates set no adaptive sampling grid")
        g_h, g_w = max(1, int(gh.max())), max(1, int(gw.max()))
        grid_h, grid_w = n.importer.operand(gh), n.importer.operand(gw)

    sampled = R * C * ph_n * g_h * pw_n * g_w
    if sampled > MAX_SAMPLED_ELEMENTS:
        n.fail(
            f"{R} regions x {C} channels x {ph_n * g_h} x {pw_n * g_w} sample points are too"
            f" many to import (at most {MAX_SAMPLED_ELEMENTS})"
        )

    def samples(start, bin_size, grid, bins, g, size):
        """Sample positions [R, bins * g] as ORT computes them, their validity, the low and high
        pixel and the two interpolation weights."""
        p = np.repeat(np.arange(bins, dtype=np.float32), g).reshape(1, bins * g)
        i = np.tile(np.arange(g, dtype=np.float32) + np.float32(0.5), bins).reshape(1, bins * g)
        pos = bl.add(
            bl.add(start, bl.mul(n.importer.operand(p), bin_size)),
            bl.div(bl.mul(n.importer.operand(i), bin_size), grid),
        )
        in_grid = bl.lesser(n.importer.operand(i - np.float32(0.5)), grid)  # adaptive grids
        valid = bl.logical_and(
            bl.logical_and(
                bl.greater_or_equal(pos, c(-1.0)), bl.lesser_or_equal(pos, c(float(size)))
            ),
            in_grid,
        )
        pos = bl.max(pos, c(0.0))
        low = bl.floor(pos)
        top = bl.greater_or_equal(low, c(float(size - 1)))
        low = bl.where(top, c(float(size - 1)), low)
        pos = bl.where(top, low, pos)
        high = bl.where(top, low, bl.add(low, c(1.0)))
        frac = bl.sub(pos, low)
        return valid, low, high, bl.sub(c(1.0), frac), frac

    vy, y_lo, y_hi, hy, ly = samples(y1, bin_h, grid_h, ph_n, g_h, H)
    vx, x_lo, x_hi, hx, lx = samples(x1, bin_w, grid_w, pw_n, g_w, W)
    sh, sw = ph_n * g_h, pw_n * g_w

    def outer(a, b):
        return bl.mul(bl.reshape(a, [R, 1, sh, 1]), bl.reshape(b, [R, 1, 1, sw]))

    valid = bl.logical_and(bl.reshape(vy, [R, 1, sh, 1]), bl.reshape(vx, [R, 1, 1, sw]))
    feats = bl.reshape(bl.gather(n.x(0), bl.cast(n.x(2), "int32"), 0), [R, C, H * W])

    def pixels(yy, xx):
        rows, cols = bl.reshape(yy, [R, sh, 1]), bl.reshape(xx, [R, 1, sw])
        return bl.reshape(gather_at(n, feats, [rows, cols], [W, 1], [R], C), [R, C, sh, sw])

    terms = [
        bl.mul(outer(hy, hx), pixels(y_lo, x_lo)),
        bl.mul(outer(hy, lx), pixels(y_lo, x_hi)),
        bl.mul(outer(ly, hx), pixels(y_hi, x_lo)),
        bl.mul(outer(ly, lx), pixels(y_hi, x_hi)),
    ]
    bins = [R, C, ph_n, g_h, pw_n, g_w]
    if mode == "avg":
        val = bl.add(bl.add(bl.add(terms[0], terms[1]), terms[2]), terms[3])
        val = bl.where(valid, val, c(0.0))
        total = bl.reduce_sum(bl.reshape(val, bins), [3, 5], False)
        if ratio > 0:
            return bl.div(total, c(float(ratio * ratio)))
        return bl.div(total, bl.reshape(bl.mul(grid_h, grid_w), [R, 1, 1, 1]))
    val = bl.max(bl.max(bl.max(terms[0], terms[1]), terms[2]), terms[3])
    # ORT: an out-of-range sample has zero weights, so it counts as 0; a sample beyond a
    # region's own (adaptive) grid does not exist.
    if ratio > 0:
        val = bl.where(valid, val, c(0.0))
    else:
        exists = bl.logical_and(
            bl.reshape(bl.lesser(n.importer.operand(np.tile(np.arange(g_h, dtype=np.float32),
                                                            ph_n).reshape(1, sh)), grid_h),
                       [R, 1, sh, 1]),
            bl.reshape(bl.lesser(n.importer.operand(np.tile(np.arange(g_w, dtype=np.float32),
                                                            pw_n).reshape(1, sw)), grid_w),
                       [R, 1, 1, sw]),
        )  # fmt: skip
        val = bl.where(valid, val, c(0.0))
        val = bl.where(exists, val, c(-np.inf))
    return bl.reduce_max(bl.reshape(val, bins), [3, 5], False)
