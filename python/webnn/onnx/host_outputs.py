"""Graph outputs WebNN cannot hold (string tensors, ZipMap's list of maps), finished on the host.

A converter that would produce strings or maps returns a HostOutput instead: it wraps the
numeric operand the graph computes (a class index, a score matrix) and says how to turn that
into what ONNX Runtime returns. Such a value may only be a graph output: a node that reads it
fails at import. InferenceSession applies finish() to the graph's result; webnn.onnx.load,
which returns a bare MLGraph, refuses models with host outputs (its graph could only return
the numbers).
"""

import numpy as np


class HostOutput:
    """A numeric operand plus the host step that makes the ONNX output from it."""

    def __init__(self, operand, where):
        self.operand = operand
        self.where = where  # the node that produced it, for error messages

    kind = "host value"

    def finish(self, array):
        raise NotImplementedError


class StringLabels(HostOutput):
    """Class indices ([N] int) -> the string labels, a numpy object array of str as ORT gives."""

    kind = "string tensor"

    def __init__(self, operand, labels, where):
        super().__init__(operand, where)
        self.labels = np.asarray(list(labels), dtype=object)

    def finish(self, array):
        return self.labels[np.asarray(array, np.int64)]


class StringMap(HostOutput):
    """An integer tensor -> strings by a lookup table (LabelEncoder int64 -> string):
    keys not in the table give `default`."""

    kind = "string tensor"

    def __init__(self, operand, keys, values, default, where):
        super().__init__(operand, where)
        self.table = dict(zip((int(k) for k in keys), values))
        self.default = default

    def finish(self, array):
        flat = [self.table.get(int(v), self.default) for v in np.asarray(array).reshape(-1)]
        return np.asarray(flat, dtype=object).reshape(np.shape(array))


class ZipMap(HostOutput):
    """Scores [N, K] -> a list of N dicts {class label: score}, as ORT's ZipMap returns them
    (Python float values; int or str keys)."""

    kind = "sequence of maps"

    def __init__(self, operand, labels, where):
        super().__init__(operand, where)
        self.labels = list(labels)

    def finish(self, array):
        rows = np.asarray(array, np.float32)
        return [dict(zip(self.labels, (float(v) for v in row))) for row in rows]


def pass_through(node, inputs):
    """The outputs of a node that only forwards a host value (Identity; Cast to string of a
    string tensor, which skl2onnx writes after string-label classifiers), or None."""
    value = inputs[0] if inputs else None
    if not isinstance(value, HostOutput) or node.domain not in ("", "ai.onnx"):
        return None
    if node.op_type == "Identity":
        return [value]
    if node.op_type == "Cast" and value.kind == "string tensor":
        to = next((a.i for a in node.attribute if a.name == "to"), None)
        if to == 8:  # TensorProto.STRING
            return [value]
    return None
