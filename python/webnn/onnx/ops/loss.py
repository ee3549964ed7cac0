"""NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (inference forms)."""

import numpy as np

from .registry import op


def nll(n, logp, target_index, weight_index):
    bl = n.b
    dtype = bl.operand_data_type(logp)
    t = n.x(target_index)
    tdt = n.dtype(target_index)
    ignore = n.attr("ignore_index")
    valid = None
    if ignore is not None:
        valid = bl.not_equal(t, n.const(ignore, tdt))
        t = bl.where(valid, t, n.const(0, tdt))
    picked = bl.gather_elements(logp, bl.unsqueeze(t, [1]), 1)
    picked = bl.reshape(picked, bl.operand_shape(t))
    if n.has(weight_index):
        w = bl.gather(n.x(weight_index), t, 0)
    else:
        w = None
    if valid is not None:
        mask = bl.cast(valid, dtype)
        w = mask if w is None else bl.mul(w, mask)
    loss = bl.neg(picked) if w is None else bl.mul(bl.neg(picked), w)
    reduction = n.attr("reduction", "mean")
    rank = len(bl.operand_shape(loss))
    axes = list(range(rank))
    if reduction == "none":
        return loss
    total = bl.reduce_sum(loss, axes, False)
    if reduction == "sum":
        return total
    if reduction != "mean":
        n.fail(f"reduction '{reduction}'")
    if w is None:
        count = int(np.prod(bl.operand_shape(loss)))
        return bl.div(total, n.const(count, dtype))
    return bl.div(total, bl.reduce_sum(w, axes, False))


@op("NegativeLogLikelihoodLoss")
def negative_log_likelihood_loss(n):
    return nll(n, n.x(0), 1, 2)


@op("SoftmaxCrossEntropyLoss")
def softmax_cross_entropy_loss(n):
    bl = n.b
    x = n.x(0)
    m = bl.reduce_max(x, [1], True)
    shifted = bl.sub(x, m)
    logp = bl.sub(shifted, bl.log(bl.reduce_sum(bl.exp(shifted), [1], True)))
    return [nll(n, logp, 1, 2), logp]
