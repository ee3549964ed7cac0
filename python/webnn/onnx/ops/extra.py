"""Decompositions of less common operators: inverse trigonometry, CumProd, CenterCropPad,
SwiGLU, ReverseSequence."""

import math

import numpy as np

from .registry import op
from .sampling import gather_clamped
from .util import check_made, norm_axis


def atan(n, x):
    """float32 arctangent: range reduction to |z| <= tan(pi/8) and the Cephes atanf
    polynomial (relative error ~1e-7)."""
    bl = n.b
    dt = bl.operand_data_type(x)

    def c(v):
        return n.const(v, dt)

    sign = bl.sign(x)
    a = bl.abs(x)
    big = bl.greater(a, c(1.0))
    # |x| > 1: atan(x) = pi/2 - atan(1/x)
    r = bl.where(big, bl.reciprocal(bl.max(a, c(1e-30))), a)
    mid = bl.greater(r, c(0.4142135623730950))
    z = bl.where(mid, bl.div(bl.sub(r, c(1.0)), bl.add(r, c(1.0))), r)
    z2 = bl.mul(z, z)
    p = bl.sub(bl.mul(c(8.05374449538e-2), z2), c(1.38776856032e-1))
    p = bl.add(bl.mul(p, z2), c(1.99777106478e-1))
    p = bl.sub(bl.mul(p, z2), c(3.33329491539e-1))
    y = bl.add(bl.mul(bl.mul(p, z2), z), z)
    y = bl.where(mid, bl.add(y, c(math.pi / 4)), y)
    y = bl.where(big, bl.sub(c(math.pi / 2), y), y)
    return bl.mul(sign, y)


@op("Atan")
def atan_(n):
    return atan(n, n.x(0))


def _one_minus_plus(n):
    """1 - x and 1 + x of input 0, the factors asin and acos are written with."""
    one = n.const(1.0, n.dtype(0))
    return n.b.sub(one, n.x(0)), n.b.add(one, n.x(0))


@op("Asin")
def asin(n):
    bl = n.b
    minus, plus = _one_minus_plus(n)
    return atan(n, bl.div(n.x(0), bl.sqrt(bl.mul(minus, plus))))


@op("Acos")
def acos(n):
    bl = n.b
    minus, plus = _one_minus_plus(n)
    # acos(x) = 2 * atan(sqrt((1 - x) / (1 + x))): accurate near both ends
    return bl.mul(n.const(2.0, n.dtype(0)), atan(n, bl.sqrt(bl.div(minus, plus))))


def _shift(n, y, axis, k, length, fill):
    """y shifted by k along axis, the first k positions filled with `fill`."""
    bl = n.b
    shape = bl.operand_shape(y)
    head = list(shape)
    head[axis] = k
    pad = bl.expand(n.const(fill, bl.operand_data_type(y)), head)  # nothing of a declared size
    sizes = list(shape)
    sizes[axis] = length - k
    body = bl.slice(y, [0] * len(shape), sizes)
    return bl.concat([pad, body], axis)


@op("CumProd")
def cumprod(n):
    bl = n.b
    shape = n.static_shape(0)
    axis = norm_axis(n, int(n.c(1, what="axis").reshape(-1)[0]), len(shape))
    length = shape[axis]
    y = n.x(0)
    rev = bool(n.attr("reverse", 0))
    if rev:
        y = bl.reverse(y, [axis])
    if n.attr("exclusive", 0):
        y = _shift(n, y, axis, 1, length, 1) if length > 1 else bl.mul(y, n.const(0, n.dtype(0)))
        if length == 1:
            y = bl.add(y, n.const(1, n.dtype(0)))
    k = 1
    while k < length:  # Hillis-Steele scan: log2(length) multiplications
        y = bl.mul(y, _shift(n, y, axis, k, length, 1))
        k *= 2
    if rev:
        y = bl.reverse(y, [axis])
    return y if (rev or length > 1 or n.attr("exclusive", 0)) else bl.identity(y)


@op("CenterCropPad")
def center_crop_pad(n):
    bl = n.b
    shape = n.static_shape(0)
    rank = len(shape)
    target = [int(v) for v in n.c(1, what="shape").reshape(-1)]
    axes = n.attr("axes")
    axes = list(range(rank)) if axes is None else [norm_axis(n, a, rank) for a in axes]
    x = n.x(0)
    starts, sizes = [0] * rank, list(shape)
    begin, end = [0] * rank, [0] * rank
    for a, t in zip(axes, target):
        dim = shape[a]
        if t < dim:
            starts[a], sizes[a] = (dim - t) // 2, t
        elif t > dim:
            begin[a] = (t - dim) // 2
            end[a] = t - dim - begin[a]
    if starts != [0] * rank or sizes != shape:
        x = bl.slice(x, starts, sizes)
    if any(begin + end):
        x = bl.pad(x, begin, end, mode="constant", value=0)
    if x is n.inputs[0]:
        x = bl.identity(x)
    return x


@op("SwiGLU")
def swiglu(n):
    bl = n.b
    a, b = n.x(0), n.x(1)
    alpha = float(n.attr("alpha", 1.0))
    inner = a if alpha == 1.0 else bl.mul(a, n.const(alpha, n.dtype(0)))
    return bl.mul(bl.mul(a, bl.sigmoid(inner)), b)


@op("ReverseSequence")
def reverse_sequence(n):
    bl = n.b
    shape = n.static_shape(0)
    rank = len(shape)
    batch_axis, time_axis = int(n.attr("batch_axis", 1)), int(n.attr("time_axis", 0))
    steps = shape[time_axis]
    check_made(n, "the time positions", [steps])
    tshape = [1] * rank
    tshape[time_axis] = steps
    t = n.importer.operand(np.arange(steps, dtype=np.int64).reshape(tshape))
    lshape = [1] * rank
    lshape[batch_axis] = shape[batch_axis]
    lens = bl.reshape(bl.cast(n.x(1), "int64"), lshape)
    one = n.const(1, "int64")
    idx = bl.where(bl.lesser(t, lens), bl.sub(bl.sub(lens, one), t), t)
    idx = bl.expand(idx, shape)
    return bl.gather_elements(n.x(0), idx, time_axis)


@op("GridSample")
def grid_sample(n):
    """2-D GridSample (linear or nearest; zeros, border or reflection padding): the sampling
    positions are computed at run time from the grid, and read with gather_elements."""
    bl = n.b
    shape = n.static_shape(0)
    if len(shape) == 5:
        return _grid_sample_3d(n)
    if len(shape) != 4:
        n.fail(f"GridSample of rank {len(shape)} (only 4-D and 5-D inputs are supported)")
    N, C, H, W = shape
    _, Ho, Wo, _ = _grid_shape(n, N, 2)
    mode = n.attr("mode", "linear" if n.opset >= 20 else "bilinear")
    mode = {"bilinear": "linear"}.get(mode, mode)
    mode = {"bicubic": "cubic"}.get(mode, mode)
    if mode not in ("linear", "nearest", "cubic"):
        n.fail(f"mode '{mode}' is not supported")
    padding = _padding_mode(n)
    align = bool(n.attr("align_corners", 0))
    dt = n.dtype(0)

    def c(v):
        return n.const(v, dt)

    grid = n.x(1)
    gx = bl.reshape(bl.slice(grid, [0, 0, 0, 0], [N, Ho, Wo, 1]), [N, Ho * Wo])
    gy = bl.reshape(bl.slice(grid, [0, 0, 0, 1], [N, Ho, Wo, 1]), [N, Ho * Wo])

    def unnormalize(g, size):
        if align:
            return bl.mul(bl.add(g, c(1.0)), c((size - 1) / 2.0))
        return bl.div(bl.sub(bl.mul(bl.add(g, c(1.0)), c(float(size))), c(1.0)), c(2.0))

    def reflect(v, size):
        lo, hi = (0.0, size - 1.0) if align else (-0.5, size - 0.5)
        span = hi - lo
        if span <= 0:
            return bl.mul(v, c(0.0))
        # fold into [lo, lo + 2 span) then mirror the upper half
        t = bl.sub(v, c(lo))
        t = bl.abs(t)
        period = c(2 * span)
        t = bl.sub(t, bl.mul(bl.floor(bl.div(t, period)), period))
        t = bl.where(bl.greater(t, c(span)), bl.sub(period, t), t)
        return bl.add(t, c(lo))

    x = unnormalize(gx, W)
    y = unnormalize(gy, H)
    flat = bl.reshape(n.x(0), [N, C, H * W])
    if mode == "cubic":
        return _grid_cubic(n, bl, c, x, y, flat, padding, reflect, (N, C, H, W, Ho, Wo), dt)
    if padding == "border":
        x = bl.clamp(x, min_value=0.0, max_value=float(W - 1))
        y = bl.clamp(y, min_value=0.0, max_value=float(H - 1))
    elif padding == "reflection":
        x, y = reflect(x, W), reflect(y, H)
        x = bl.clamp(x, min_value=0.0, max_value=float(W - 1))
        y = bl.clamp(y, min_value=0.0, max_value=float(H - 1))

    def sample(xi, yi):
        return _sample(n, flat, [yi, xi], [H, W], dt)

    if mode == "nearest":
        out = sample(bl.round_even(x), bl.round_even(y))
    else:
        x0, y0 = bl.floor(x), bl.floor(y)
        x1, y1 = bl.add(x0, c(1.0)), bl.add(y0, c(1.0))
        wx1, wy1 = bl.sub(x, x0), bl.sub(y, y0)
        wx0, wy0 = bl.sub(c(1.0), wx1), bl.sub(c(1.0), wy1)

        def w(a, b_):
            return bl.reshape(bl.mul(a, b_), [N, 1, Ho * Wo])

        out = bl.add(
            bl.add(bl.mul(sample(x0, y0), w(wx0, wy0)), bl.mul(sample(x1, y0), w(wx1, wy0))),
            bl.add(bl.mul(sample(x0, y1), w(wx0, wy1)), bl.mul(sample(x1, y1), w(wx1, wy1))),
        )
    return bl.reshape(out, [N, C, Ho, Wo])


def _grid_sample_3d(n):
    """Volumetric (5-D) GridSample: input [N, C, D, H, W], grid [N, Do, Ho, Wo, 3] of (x, y, z);
    trilinear (8 taps) or nearest, with zeros, border or reflection padding, as the 2-D form."""
    bl = n.b
    N, C, D, H, W = n.static_shape(0)
    _, Do, Ho, Wo, _ = _grid_shape(n, N, 3)
    mode = n.attr("mode", "linear")
    mode = {"bilinear": "linear"}.get(mode, mode)
    if mode not in ("linear", "nearest"):
        n.fail(f"mode '{mode}' with 5-D inputs (ONNX defines cubic for 4-D only)")
    padding = _padding_mode(n)
    align = bool(n.attr("align_corners", 0))
    dt = n.dtype(0)
    P = Do * Ho * Wo

    def c(v):
        return n.const(v, dt)

    grid = n.x(1)

    def coord(k, size):
        g = bl.reshape(bl.slice(grid, [0, 0, 0, 0, k], [N, Do, Ho, Wo, 1]), [N, P])
        if align:
            v = bl.mul(bl.add(g, c(1.0)), c((size - 1) / 2.0))
        else:
            v = bl.div(bl.sub(bl.mul(bl.add(g, c(1.0)), c(float(size))), c(1.0)), c(2.0))
        if padding == "border":
            v = bl.clamp(v, min_value=0.0, max_value=float(size - 1))
        elif padding == "reflection":
            lo, hi = (0.0, size - 1.0) if align else (-0.5, size - 0.5)
            span = hi - lo
            if span <= 0:
                v = bl.mul(v, c(0.0))
            else:
                t = bl.abs(bl.sub(v, c(lo)))
                period = c(2 * span)
                t = bl.sub(t, bl.mul(bl.floor(bl.div(t, period)), period))
                t = bl.where(bl.greater(t, c(span)), bl.sub(period, t), t)
                v = bl.add(t, c(lo))
            v = bl.clamp(v, min_value=0.0, max_value=float(size - 1))
        return v

    x, y, z = coord(0, W), coord(1, H), coord(2, D)
    flat = bl.reshape(n.x(0), [N, C, D * H * W])

    def sample(xi, yi, zi):
        return _sample(n, flat, [zi, yi, xi], [D, H, W], dt)

    if mode == "nearest":
        out = sample(bl.round_even(x), bl.round_even(y), bl.round_even(z))
    else:
        corners = []
        for v in (x, y, z):
            v0 = bl.floor(v)
            w1 = bl.sub(v, v0)
            corners.append([(v0, bl.sub(c(1.0), w1)), (bl.add(v0, c(1.0)), w1)])
        out = None
        for zi, wz in corners[2]:
            for yi, wy in corners[1]:
                for xi, wx in corners[0]:
                    weight = bl.reshape(bl.mul(bl.mul(wx, wy), wz), [N, 1, P])
                    term = bl.mul(sample(xi, yi, zi), weight)
                    out = term if out is None else bl.add(out, term)
    return bl.reshape(out, [N, C, Do, Ho, Wo])


def _grid_shape(n, batch, axes):
    """The grid's shape, checked: [N, *output, axes] for an input of `axes` spatial axes."""
    grid = n.static_shape(1)
    if len(grid) != axes + 2 or grid[0] != batch or grid[-1] != axes:
        n.fail(f"grid of shape {grid} for a {axes}-D input of batch {batch} (expected "
               f"[{batch}, {', '.join(['out'] * axes)}, {axes}])")  # fmt: skip
    return grid


def _padding_mode(n):
    padding = n.attr("padding_mode", "zeros")
    if padding not in ("zeros", "border", "reflection"):
        n.fail(f"padding_mode '{padding}' (zeros, border or reflection expected)")
    return padding


def _sample(n, flat, positions, sizes, dt):
    """X ([N, C, pixels]) at integer positions (float tensors [N, P], outermost axis first);
    0 outside the image."""
    N, C = n.b.operand_shape(flat)[:2]
    values, inside = gather_clamped(n, flat, positions, sizes, [N], C)
    P = n.b.operand_shape(values)[2]
    return n.b.mul(values, n.b.reshape(n.b.cast(inside, dt), [N, 1, P]))


def _grid_cubic(n, bl, c, x, y, flat, padding, reflect, dims, dt):
    """Bicubic GridSample: 4 x 4 taps with Keys' coefficients (A = -0.75); the padding mode
    applies to each tap's position, as ONNX defines it."""
    N, C, H, W, Ho, Wo = dims
    A = -0.75

    def coeffs(t):
        t1 = bl.add(t, c(1.0))
        u = bl.sub(c(1.0), t)
        w0 = bl.sub(
            bl.mul(bl.add(bl.mul(bl.sub(bl.mul(c(A), t1), c(5 * A)), t1), c(8 * A)), t1), c(4 * A)
        )
        w1 = bl.add(bl.mul(bl.mul(bl.sub(bl.mul(c(A + 2), t), c(A + 3)), t), t), c(1.0))
        w2 = bl.add(bl.mul(bl.mul(bl.sub(bl.mul(c(A + 2), u), c(A + 3)), u), u), c(1.0))
        w3 = bl.sub(bl.sub(bl.sub(c(1.0), w0), w1), w2)
        return [w0, w1, w2, w3]

    x0, y0 = bl.floor(x), bl.floor(y)
    wx, wy = coeffs(bl.sub(x, x0)), coeffs(bl.sub(y, y0))

    def tap(v, d, size):
        t = bl.add(v, c(float(d)))
        if padding == "border":
            return bl.clamp(t, min_value=0.0, max_value=float(size - 1))
        if padding == "reflection":
            r = reflect(t, size)
            return bl.clamp(bl.where(bl.lesser(r, c(0.0)), bl.ceil(r), bl.floor(r)),
                            min_value=0.0, max_value=float(size - 1))  # fmt: skip
        return t

    out = None
    for j, dy in enumerate((-1, 0, 1, 2)):
        yt = tap(y0, dy, H)
        for i, dx in enumerate((-1, 0, 1, 2)):
            xt = tap(x0, dx, W)
            weight = bl.reshape(bl.mul(wx[i], wy[j]), [N, 1, Ho * Wo])
            term = bl.mul(_sample(n, flat, [yt, xt], [H, W], dt), weight)
            out = term if out is None else bl.add(out, term)
    return bl.reshape(out, [N, C, Ho, Wo])
