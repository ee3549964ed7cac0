"""What the ai.onnx.ml classifiers share: ONNX Runtime's post_transform of a score row and the
class label output (integer labels gathered in the graph, string labels mapped on the host).
"""

import numpy as np

from ..host_outputs import StringLabels

TRANSFORMS = ("NONE", "LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO", "PROBIT")


def _erf_inv(n, x):
    """ONNX Runtime's ErfInv: Winitzki's approximation (a = 0.147), not the exact inverse;
    PROBIT is computed with it, so this is what matches ORT."""
    b = n.b

    def c(v):
        return n.const(np.float32(v), "float32")

    sign = b.where(b.lesser(x, c(0.0)), c(-1.0), c(1.0))
    log = b.log(b.mul(b.sub(c(1.0), x), b.add(c(1.0), x)))
    v = b.add(c(2.0 / (3.14159 * 0.147)), b.mul(c(0.5), log))
    v2 = b.mul(c(1.0 / 0.147), log)
    v3 = b.sub(b.sqrt(b.sub(b.mul(v, v), v2)), v)
    return b.mul(sign, b.sqrt(v3))


def probit(n, y):
    """sqrt(2) * ErfInv(2y - 1), ORT's ComputeProbit."""
    b = n.b
    two_y = b.sub(
        b.mul(y, n.const(np.float32(2.0), "float32")), n.const(np.float32(1.0), "float32")
    )
    return b.mul(n.const(np.float32(1.41421356), "float32"), _erf_inv(n, two_y))


def softmax_zero(n, y):
    """ORT's SOFTMAX_ZERO of each row of [N, K]: a score within 1e-7 of 0 counts for nothing
    (it becomes 0 * exp(-max), not exp(0 - max))."""
    b = n.b
    top = b.reduce_max(y, axes=[1], keep_dimensions=True)
    tiny = n.const(np.float32(1e-7), "float32")
    live = b.logical_or(b.greater(y, tiny), b.lesser(y, b.neg(tiny)))
    e = b.where(live, b.exp(b.sub(y, top)), b.mul(y, b.exp(b.neg(top))))
    total = b.reduce_sum(b.where(live, e, n.const(np.float32(0.0), "float32")), axes=[1],
                         keep_dimensions=True)  # fmt: skip
    return b.div(e, total)


def post_transform(n, y, name):
    """ORT's transform of a score row of two or more scores ([N, K], K >= 2)."""
    b = n.b
    if name == "NONE":
        return y
    if name == "LOGISTIC":
        return b.sigmoid(y)
    if name == "SOFTMAX":
        return b.softmax(y, 1)
    if name == "SOFTMAX_ZERO":
        return softmax_zero(n, y)
    if name == "PROBIT":
        return probit(n, y)
    n.fail(f"post_transform '{name}' (one of {', '.join(TRANSFORMS)})")


def class_labels(n, ints_attr="classlabels_ints", strings_attr="classlabels_strings"):
    """The node's class labels: (list, is_string); a clear error when it has neither."""
    ints = n.attr(ints_attr, None)
    strings = n.attr(strings_attr, None)
    if ints:
        return [int(v) for v in ints], False
    if strings:
        return list(strings), True
    n.fail(f"neither '{ints_attr}' nor '{strings_attr}' is given")


def label_output(n, index, labels, is_string):
    """The label output for class indices `index` ([N] int32): integer labels gathered from a
    constant table; string labels (WebNN has no strings) are the index, which the
    InferenceSession maps to the strings on the host (host_outputs.py)."""
    if is_string:
        return StringLabels(index, labels, n.describe())
    table = n.const(np.asarray(labels, np.int64), "int64")
    return n.b.gather(table, index)
