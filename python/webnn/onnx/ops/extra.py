"""Decompositions of less common operators: inverse trigonometry, CumProd, CenterCropPad,
SwiGLU, ReverseSequence."""

import math

import numpy as np

from .registry import op
from .util import norm_axis


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


@op("Asin")
def asin(n):
    bl = n.b
    x = n.x(0)
    dt = n.dtype(0)
    one = n.const(1.0, dt)
    denom = bl.sqrt(bl.mul(bl.sub(one, x), bl.add(one, x)))
    return atan(n, bl.div(x, denom))


@op("Acos")
def acos(n):
    bl = n.b
    x = n.x(0)
    dt = n.dtype(0)
    one = n.const(1.0, dt)
    # acos(x) = 2 * atan(sqrt((1 - x) / (1 + x))): accurate near both ends
    return bl.mul(n.const(2.0, dt), atan(n, bl.sqrt(bl.div(bl.sub(one, x), bl.add(one, x)))))


def _shift(n, y, axis, k, length, fill):
    """y shifted by k along axis, the first k positions filled with `fill`."""
    bl = n.b
    shape = bl.operand_shape(y)
    head = list(shape)
    head[axis] = k
    pad = n.importer.operand(
        np.full(head, fill, dtype=n.importer.webnn_numpy(bl.operand_data_type(y)))
    )
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
