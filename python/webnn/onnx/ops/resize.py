"""Resize and Upsample, in all their modes.

Resize is separable: for each resized axis the source taps and weights of every output
index are computed here in numpy, exactly as ONNX defines them (coordinate transformation,
nearest rounding, linear/cubic coefficients, exclude_outside, tf_crop_and_resize
extrapolation). When those tables equal what WebNN's resample2d computes (its half-pixel
sampling), resample2d is used; otherwise the axis is resampled with gathers and weights.
"""

import math

import numpy as np

from .registry import op
from .util import MAX_MADE_ELEMENTS, check_made


def _source_coords(mode, out_size, in_size, scale, roi_start=0.0, roi_end=1.0):
    """ONNX's x_original for every output index (the resized length is scale * in_size)."""
    x = np.arange(out_size, dtype=np.float64)
    width = scale * in_size
    if mode == "half_pixel":
        return (x + 0.5) / scale - 0.5
    if mode == "half_pixel_symmetric":
        adjustment = out_size / width
        center = in_size / 2
        offset = center * (1 - adjustment)
        return offset + (x + 0.5) / scale - 0.5
    if mode == "pytorch_half_pixel":
        return (x + 0.5) / scale - 0.5 if width != 1 else np.full_like(x, -0.5)
    if mode == "align_corners":
        # ONNX Runtime divides by the integer output length (onnx's reference by scale * L;
        # they differ only for non-integral scales): follow ONNX Runtime.
        if out_size == 1:
            return np.zeros_like(x)
        return x * (in_size - 1) / (out_size - 1)
    if mode == "asymmetric":
        return x / scale
    if mode == "tf_half_pixel_for_nn":
        return (x + 0.5) / scale
    if mode == "tf_crop_and_resize":
        width = out_size  # as ONNX Runtime (see align_corners)
        if width == 1:
            return np.full_like(
                x, (roi_end - roi_start) * (in_size - 1) / 2 + roi_start * (in_size - 1)
            )
        return roi_start * (in_size - 1) + x * (roi_end - roi_start) * (in_size - 1) / (width - 1)
    raise ValueError(f"coordinate_transformation_mode '{mode}' is not supported")


def _nearest(coords, nearest_mode, in_size, scale=1.0):
    if nearest_mode == "round_prefer_floor":
        idx = np.where(coords == np.floor(coords) + 0.5, np.floor(coords), np.round(coords))
    elif nearest_mode == "round_prefer_ceil":
        idx = np.floor(coords + 0.5)
    elif nearest_mode == "floor":
        idx = np.floor(coords)
    elif nearest_mode == "ceil":
        idx = np.ceil(coords)
    elif nearest_mode == "simple":
        # Upsample and Resize-10 (ONNX Runtime): floor when enlarging, ceil when shrinking
        idx = np.floor(coords) if scale >= 1 else np.ceil(coords)
    else:
        raise ValueError(f"nearest_mode '{nearest_mode}' is not supported")
    return np.clip(idx, 0, in_size - 1).astype(np.int64)


def _cubic_coeffs(ratio, a):
    # Keys' cubic convolution kernel at distances 1+r, r, 1-r, 2-r.
    r = ratio
    c0 = ((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a
    c1 = ((a + 2) * r - (a + 3)) * r * r + 1
    c2 = ((a + 2) * (1 - r) - (a + 3)) * (1 - r) * (1 - r) + 1
    c3 = ((a * (2 - r) - 5 * a) * (2 - r) + 8 * a) * (2 - r) - 4 * a
    return np.stack([c0, c1, c2, c3], axis=-1)


def axis_table(mode, coord_mode, nearest_mode, in_size, out_size, scale, cubic_a,
               exclude_outside, roi=(0.0, 1.0)):  # fmt: skip
    """(indices [O, taps], weights [O, taps], outside [O] bool) for one axis."""
    coords = _source_coords(coord_mode, out_size, in_size, scale, roi[0], roi[1])
    outside = np.zeros(out_size, dtype=bool)
    if coord_mode == "tf_crop_and_resize":
        outside = (coords < 0) | (coords > in_size - 1)
    if mode == "nearest":
        return (
            _nearest(coords, nearest_mode, in_size, scale)[:, None],
            np.ones((out_size, 1)),
            outside,
        )
    if mode == "linear":
        c = np.clip(coords, 0, in_size - 1)
        lo = np.floor(c)
        ratio = c - lo
        lo = lo.astype(np.int64)
        hi = np.minimum(lo + 1, in_size - 1)
        return np.stack([lo, hi], 1), np.stack([1 - ratio, ratio], 1), outside
    if mode == "cubic":
        base = np.floor(coords)
        ratio = coords - base
        w = _cubic_coeffs(ratio, cubic_a)
        idx = base.astype(np.int64)[:, None] + np.arange(-1, 3)[None, :]
        if exclude_outside:
            valid = (idx >= 0) & (idx < in_size)
            w = np.where(valid, w, 0.0)
            w = w / w.sum(axis=1, keepdims=True)
        return np.clip(idx, 0, in_size - 1), w, outside
    raise ValueError(f"mode '{mode}' is not supported")


def _dense(idx, w, in_size):
    m = np.zeros((idx.shape[0], in_size))
    for t in range(idx.shape[1]):
        np.add.at(m, (np.arange(idx.shape[0]), idx[:, t]), w[:, t])
    return m


def _webnn_dense(mode, in_size, out_size):
    """The sampling matrix of WebNN's resample2d along one axis."""
    o = np.arange(out_size, dtype=np.float64)
    c = np.clip((o + 0.5) / (out_size / in_size) - 0.5, 0, in_size - 1)
    if mode == "nearest":
        idx = np.ceil(c - 0.5).astype(np.int64)
        return _dense(idx[:, None], np.ones((out_size, 1)), in_size)
    lo = np.floor(c)
    f = c - lo
    return _dense(np.stack([lo, np.ceil(c)], 1).astype(np.int64), np.stack([1 - f, f], 1), in_size)


def resize_operand(n, x, out_sizes, scales, mode, coord_mode, nearest_mode, cubic_a=-0.75,
                   exclude_outside=0, extrapolation=0.0, roi=None):  # fmt: skip
    bl = n.b
    shape = n.static_shape(0)
    rank = len(shape)
    dtype = bl.operand_data_type(x)
    tables = {}
    for a in range(rank):
        if out_sizes[a] == shape[a] and scales[a] == 1.0 and coord_mode != "tf_crop_and_resize":
            continue
        # The tables are made at import, one row per output position (fuzz finding, sixth
        # session: np.arange of a declared 2^40 output size).
        if not 1 <= out_sizes[a] <= 2**31 - 1:
            n.fail(f"output size {out_sizes[a]} on axis {a} is not a valid dimension")
        check_made(n, f"Resize's interpolation table for axis {a}", [out_sizes[a], 4])
        r = (roi[a], roi[a + rank]) if roi is not None else (0.0, 1.0)
        tables[a] = axis_table(
            mode, coord_mode, nearest_mode, shape[a], out_sizes[a], scales[a], cubic_a,
            exclude_outside, r,
        )  # fmt: skip
    if not tables:
        return bl.identity(x)
    axes = sorted(tables)
    if (
        rank == 4
        and mode in ("nearest", "linear")
        and len(axes) <= 2
        and set(axes) <= {2, 3}
        and not any(t[2].any() for t in tables.values())
        and dtype in ("float32", "float16")
        # the comparison below makes [out, in] matrices
        and all(out_sizes[a] * shape[a] <= MAX_MADE_ELEMENTS for a in axes)
    ):
        same = all(
            np.allclose(
                _dense(tables[a][0], tables[a][1], shape[a]),
                _webnn_dense(mode, shape[a], out_sizes[a]),
                atol=1e-6,
            )
            for a in axes
        )
        if same:
            webnn_mode = "nearest-neighbor" if mode == "nearest" else "linear"
            return bl.resample2d(
                x, sizes=[out_sizes[2], out_sizes[3]], mode=webnn_mode, axes=[2, 3]
            )
    for a in axes:
        idx, w, outside = tables[a]
        x = _resample_axis(n, x, a, idx, w, outside, extrapolation, dtype)
    return x


def _resample_axis(n, x, axis, idx, w, outside, extrapolation, dtype):
    bl = n.b
    rank = len(bl.operand_shape(x))
    bshape = [1] * rank
    bshape[axis] = idx.shape[0]
    np_dtype = np.float16 if dtype == "float16" else np.float32
    out = None
    for t in range(idx.shape[1]):
        g = bl.gather(x, n.importer.operand(idx[:, t].astype(np.int32)), axis)
        if np.all(w[:, t] == 1.0):
            term = g
        else:
            wt = n.importer.operand(w[:, t].astype(np_dtype).reshape(bshape))
            term = bl.mul(g, wt)
        out = term if out is None else bl.add(out, term)
    if outside.any():
        mask = n.importer.operand(outside.astype(np.uint8).reshape(bshape))
        out = bl.where(mask, n.const(extrapolation, dtype), out)
    return out


def _scales_and_sizes(n, shape, scales, sizes, axes, policy):
    rank = len(shape)
    if axes is None:
        axes = list(range(rank))
    axes = [a + rank if a < 0 else a for a in axes]
    full_scales = [1.0] * rank
    full_sizes = list(shape)
    if sizes is not None:
        sizes = [int(s) for s in sizes]
        if policy in ("not_larger", "not_smaller"):
            ratios = [sizes[i] / shape[a] for i, a in enumerate(axes)]
            r = min(ratios) if policy == "not_larger" else max(ratios)
            for a in axes:
                full_scales[a] = r
                full_sizes[a] = math.floor(shape[a] * r + 0.5)
        else:
            for i, a in enumerate(axes):
                full_sizes[a] = sizes[i]
                full_scales[a] = sizes[i] / shape[a]
    else:
        for i, a in enumerate(axes):
            full_scales[a] = float(scales[i])
            full_sizes[a] = math.floor(shape[a] * float(scales[i]))
    return full_scales, full_sizes


@op("Resize")
def resize(n):
    shape = n.static_shape(0)
    rank = len(shape)
    if n.opset < 11:
        scales = [float(s) for s in n.c(1, what="scales").reshape(-1)]
        mode = n.attr("mode", "nearest")
        mode = "linear" if mode in ("linear", "bilinear") else mode
        sc, sz = _scales_and_sizes(n, shape, scales, None, None, "stretch")
        return resize_operand(n, n.x(0), sz, sc, mode, "asymmetric", "simple")
    roi = None
    coord_mode = n.attr("coordinate_transformation_mode", "half_pixel")
    axes = n.attr("axes")
    if coord_mode == "tf_crop_and_resize" and n.has(1):
        roi = [float(v) for v in n.c(1, what="roi").reshape(-1)]
        if axes is not None:
            full = [0.0] * rank + [1.0] * rank
            k = len(axes)
            for i, a in enumerate(axes):
                a = a + rank if a < 0 else a
                full[a], full[a + rank] = roi[i], roi[i + k]
            roi = full
    scales = sizes = None
    if n.has(3) and n.c(3, what="sizes").size:
        sizes = n.c(3).reshape(-1)
    elif n.has(2) and n.c(2, what="scales").size:
        scales = n.c(2).reshape(-1)
    else:
        n.fail("neither scales nor sizes is given")
    mode = n.attr("mode", "nearest")
    policy = n.attr("keep_aspect_ratio_policy", "stretch")
    sc, sz = _scales_and_sizes(n, shape, scales, sizes, axes, policy)
    if n.attr("antialias", 0) and mode != "nearest" and any(s < 1 for s in sc):
        return _antialiased(n, shape, sc, sz)
    if roi is not None and sizes is None:
        sz = [math.floor(shape[a] * (roi[a + rank] - roi[a]) * sc[a]) for a in range(rank)]
    try:
        return resize_operand(
            n,
            n.x(0),
            sz,
            sc,
            mode,
            coord_mode,
            n.attr("nearest_mode", "round_prefer_floor"),
            float(n.attr("cubic_coeff_a", -0.75)),
            int(n.attr("exclude_outside", 0)),
            float(n.attr("extrapolation_value", 0.0)),
            roi,
        )
    except ValueError as exc:
        n.fail(str(exc))


def _antialiased(n, shape, scales, sizes):
    """Antialiased downsampling: each axis's sampling matrix is what ONNX's reference Resize
    gives for the identity (its filter widens with 1/scale), applied as taps with weights."""
    from onnx import helper
    from onnx.reference import ReferenceEvaluator

    keep = {"mode", "coordinate_transformation_mode", "cubic_coeff_a", "exclude_outside",
            "antialias"}  # fmt: skip
    attrs = {a.name: helper.get_attribute_value(a) for a in n.node.attribute if a.name in keep}
    node = helper.make_node("Resize", ["X", "", "scales"], ["Y"], **attrs)
    x = n.x(0)
    dtype = n.b.operand_data_type(x)
    for axis, (length, out, s) in enumerate(zip(shape, sizes, scales)):
        if out == length and s == 1.0:
            continue
        run = ReferenceEvaluator(node, opsets={"": 19})
        basis = np.eye(length, dtype=np.float32)
        (m,) = run.run(None, {"X": basis, "scales": np.array([s, 1.0], np.float32)})
        m = np.asarray(m, np.float64)[:out]
        taps = max(int((np.abs(m) > 0).sum(axis=1).max()), 1)
        idx = np.zeros((out, taps), np.int64)
        w = np.zeros((out, taps))
        for o in range(out):
            cols = np.nonzero(m[o])[0]
            idx[o, : len(cols)] = cols
            w[o, : len(cols)] = m[o, cols]
        x = _resample_axis(n, x, axis, idx, w, np.zeros(out, bool), 0.0, dtype)
    return x


@op("Upsample")
def upsample(n):
    shape = n.static_shape(0)
    if n.opset >= 9:
        scales = [float(s) for s in n.c(1, what="scales").reshape(-1)]
    else:
        scales = [float(s) for s in n.attr("scales")]
    mode = n.attr("mode", "nearest")
    mode = "linear" if mode in ("linear", "bilinear") else mode
    sc, sz = _scales_and_sizes(n, shape, scales, None, None, "stretch")
    return resize_operand(n, n.x(0), sz, sc, mode, "asymmetric", "floor")
