"""Reduce* and ArgMax/ArgMin."""

import numpy as np

from .registry import op
from .util import norm_axes, norm_axis

_REDUCE = {
    "ReduceSum": "reduce_sum",
    "ReduceMean": "reduce_mean",
    "ReduceMax": "reduce_max",
    "ReduceMin": "reduce_min",
    "ReduceProd": "reduce_product",
    "ReduceL1": "reduce_l1",
    "ReduceL2": "reduce_l2",
    "ReduceLogSum": "reduce_log_sum",
    "ReduceLogSumExp": "reduce_log_sum_exp",
    "ReduceSumSquare": "reduce_sum_square",
}


def reduce_axes(n):
    """The axes of a Reduce* node: attribute before its opset-13/18 change, input after."""
    input_from = 13 if n.node.op_type == "ReduceSum" else 18
    if n.opset >= input_from:
        if n.has(1):
            return [int(a) for a in np.asarray(n.c(1, what="axes")).reshape(-1)]
        return []
    axes = n.attr("axes")
    return [int(a) for a in axes] if axes is not None else []


def _reduce(method):
    def convert(n):
        rank = n.rank(0)
        axes = reduce_axes(n)
        keep = bool(n.attr("keepdims", 1))
        x = n.x(0)
        if not axes:
            if n.attr("noop_with_empty_axes", 0):
                return n.b.identity(x)
            axes = list(range(rank))
        axes = sorted(set(norm_axes(n, axes, rank)))
        if rank == 0:
            return (
                n.b.identity(x)
                if method not in ("reduce_sum_square", "reduce_l1", "reduce_l2")
                else getattr(n.b, method)(x, [], keep)
            )
        return getattr(n.b, method)(x, axes, keep)

    return convert


for _name, _method in _REDUCE.items():
    op(_name)(_reduce(_method))


def _arg(method):
    def convert(n):
        shape = n.shape(0)
        axis = norm_axis(n, int(n.attr("axis", 0)), len(shape))
        keep = bool(n.attr("keepdims", 1))
        x = n.x(0)
        bl = n.b
        if n.attr("select_last_index", 0):
            r = getattr(bl, method)(bl.reverse(x, [axis]), axis, keep, "int64")
            last = n.const(shape[axis] - 1, "int64")
            return bl.sub(last, r)
        return getattr(bl, method)(x, axis, keep, "int64")

    return convert


op("ArgMax")(_arg("arg_max"))
op("ArgMin")(_arg("arg_min"))
