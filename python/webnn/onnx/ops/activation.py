"""Activations: Relu family, sigmoids, Gelu, Softmax, Clip ..."""

import math

import numpy as np

from .registry import op, unary_ops
from .util import norm_axis, prod


def _f(n, v, i=0):
    return n.const(v, n.dtype(i))


unary_ops(
    {
        "Relu": "relu",
        "Sigmoid": "sigmoid",
        "Tanh": "tanh",
        "Softplus": "softplus",
        "Softsign": "softsign",
        "HardSwish": "hard_swish",
    }
)


@op("LeakyRelu")
def leaky_relu(n):
    return n.b.leaky_relu(n.x(0), float(n.attr("alpha", 0.01)))


@op("PRelu")
def prelu(n):
    x, slope = n.x(0), n.x(1)
    rx, rs = n.rank(0), n.rank(1)
    if (
        rs == 1
        and rx > 1
        and n.shape(1)[0] != 1
        and n.shape(1)[0] == n.shape(0)[1]
        and (n.shape(0)[-1] != n.shape(1)[0])
    ):
        # Old exporters give a per-channel slope of shape [C] for NCHW input.
        slope = n.b.reshape(slope, [n.shape(1)[0]] + [1] * (rx - 2))
    return n.b.prelu(x, slope)


@op("Elu")
def elu(n):
    return n.b.elu(n.x(0), float(n.attr("alpha", 1.0)))


@op("Selu")
def selu(n):
    alpha = float(n.attr("alpha", 1.67326319217681884765625))
    gamma = float(n.attr("gamma", 1.05070102214813232421875))
    return n.b.mul(n.b.elu(n.x(0), alpha), _f(n, gamma))


@op("Celu")
def celu(n):
    alpha = float(n.attr("alpha", 1.0))
    x = n.x(0)
    b = n.b
    # max(0, x) + min(0, alpha * (exp(x / alpha) - 1))
    pos = b.relu(x)
    e = b.sub(b.exp(b.div(x, _f(n, alpha))), _f(n, 1.0))
    return b.add(pos, b.min(_f(n, 0.0), b.mul(e, _f(n, alpha))))


@op("HardSigmoid")
def hard_sigmoid(n):
    return n.b.hard_sigmoid(n.x(0), float(n.attr("alpha", 0.2)), float(n.attr("beta", 0.5)))


@op("ThresholdedRelu")
def thresholded_relu(n):
    x = n.x(0)
    alpha = float(n.attr("alpha", 1.0))
    return n.b.where(n.b.greater(x, _f(n, alpha)), x, _f(n, 0.0))


@op("Shrink")
def shrink(n):
    x = n.x(0)
    b = n.b
    bias, lambd = float(n.attr("bias", 0.0)), float(n.attr("lambd", 0.5))
    lo = b.where(b.lesser(x, _f(n, -lambd)), b.add(x, _f(n, bias)), _f(n, 0))
    return b.where(b.greater(x, _f(n, lambd)), b.sub(x, _f(n, bias)), lo)


def gelu_tanh(n, x):
    b = n.b
    c = math.sqrt(2.0 / math.pi)
    x3 = b.mul(b.mul(x, x), x)
    inner = b.mul(b.add(x, b.mul(x3, _f(n, 0.044715))), _f(n, c))
    return b.mul(b.mul(x, _f(n, 0.5)), b.add(b.tanh(inner), _f(n, 1.0)))


@op("Gelu")
def gelu(n):
    if n.attr("approximate", "none") == "tanh":
        return gelu_tanh(n, n.x(0))
    return n.b.gelu(n.x(0))


@op("Mish")
def mish(n):
    x = n.x(0)
    return n.b.mul(x, n.b.tanh(n.b.softplus(x)))


@op("Swish")
def swish(n):
    x = n.x(0)
    alpha = float(n.attr("alpha", 1.0))
    ax = x if alpha == 1.0 else n.b.mul(x, _f(n, alpha))
    return n.b.mul(x, n.b.sigmoid(ax))


@op("Clip")
def clip(n):
    x = n.x(0)
    dtype = n.dtype(0)
    if n.opset < 11:
        lo, hi = n.attr("min", None), n.attr("max", None)
        lo = None if lo is not None and lo == -math.inf else lo
        hi = None if hi is not None and hi == math.inf else hi
        if lo is None and hi is None:
            return n.b.identity(x)
        return n.b.clamp(x, min_value=lo, max_value=hi)
    bounds = []
    for i in (1, 2):
        if not n.has(i):
            bounds.append(None)
        elif n.is_const(i):
            bounds.append(n.c(i).reshape(-1)[0].item())
        else:
            bounds.append(n.x(i))
    lo, hi = bounds
    # Infinite bounds do not bound (and cannot be written as .webnn options).
    if isinstance(lo, float) and lo == -math.inf:
        lo = None
    if isinstance(hi, float) and hi == math.inf:
        hi = None
    if all(
        not hasattr(v, "__len__") and (v is None or isinstance(v, (int, float))) for v in bounds
    ):
        if lo is None and hi is None:
            return n.b.identity(x)
        if dtype in ("float32", "float16"):
            return n.b.clamp(x, min_value=lo, max_value=hi)
        out = x
        if lo is not None:
            out = n.b.max(out, n.const(lo, dtype))
        if hi is not None:
            out = n.b.min(out, n.const(hi, dtype))
        return out
    out = x
    if lo is not None:
        out = n.b.max(out, lo if not isinstance(lo, (int, float)) else n.const(lo, dtype))
    if hi is not None:
        out = n.b.min(out, hi if not isinstance(hi, (int, float)) else n.const(hi, dtype))
    return out


def _flatten_2d(n, x, axis, shape):
    rows = prod(shape[:axis])
    return n.b.reshape(x, [rows, prod(shape[axis:])])


def _softmax_family(kind):
    def convert(n):
        x = n.x(0)
        shape = n.shape(0)
        rank = len(shape)
        default = -1 if n.opset >= 13 else 1
        axis = norm_axis(n, int(n.attr("axis", default)), rank)
        if n.opset < 13 and axis != rank - 1:
            # opset < 13: the input is flattened to 2-D at `axis` and normalized per row.
            flat = _flatten_2d(n, x, axis, n.static_shape(0))
            y = _apply(n, kind, flat, 1)
            return n.b.reshape(y, shape)
        return _apply(n, kind, x, axis)

    return convert


MAX_HARDMAX_AXIS = 1 << 24  # the positions 0..size-1 along the axis are a constant (64 MiB)


def _apply(n, kind, x, axis):
    b = n.b
    if kind == "softmax":
        return b.softmax(x, axis)
    if kind == "logsoftmax":
        m = b.reduce_max(x, [axis], True)
        shifted = b.sub(x, m)
        lse = b.log(b.reduce_sum(b.exp(shifted), [axis], True))
        return b.sub(shifted, lse)
    # hardmax: 1 at the first maximum along the axis
    shape = b.operand_shape(x)
    dtype = b.operand_data_type(x)
    idx = b.arg_max(x, axis, True, "int32")
    size = shape[axis]
    if size > MAX_HARDMAX_AXIS:
        n.fail(
            f"a Hardmax axis of {size} elements is too large to import (at most {MAX_HARDMAX_AXIS})"
        )
    ar_shape = [1] * len(shape)
    ar_shape[axis] = size
    ar = n.importer.operand(np.arange(size, dtype=np.int32).reshape(ar_shape))
    return b.cast(b.equal(idx, ar), dtype)


op("Softmax")(_softmax_family("softmax"))
op("LogSoftmax")(_softmax_family("logsoftmax"))
op("Hardmax")(_softmax_family("hardmax"))
