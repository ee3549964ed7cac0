"""Helpers shared by the converters."""

import numpy as np


def norm_axis(n, axis, rank):
    if not -rank <= axis < max(rank, 1):
        n.fail(f"axis {axis} is out of range for rank {rank}")
    return axis + rank if axis < 0 else axis


def norm_axes(n, axes, rank):
    return [norm_axis(n, int(a), rank) for a in axes]


def scalar(n, value, dtype):
    """A scalar constant operand of a WebNN dtype."""
    return n.const(value, dtype)


def unsqueeze(b, x, axes):
    return b.unsqueeze(x, list(axes))


def reshape(b, x, shape):
    return b.reshape(x, [int(d) if not isinstance(d, dict) else d for d in shape])


def prod(values):
    out = 1
    for v in values:
        out *= int(v)
    return out


def broadcast_shapes(*shapes):
    return list(np.broadcast_shapes(*[tuple(s) for s in shapes]))


def to_dtype(n, x, dtype):
    """Cast an operand if its data type differs."""
    if n.b.operand_data_type(x) == dtype:
        return x
    return n.b.cast(x, dtype)
