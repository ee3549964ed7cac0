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


class StringInput:
    """A string graph input that only LabelEncoder / CategoryMapper nodes with string keys read:
    the graph takes each string's index in `vocabulary` (int32; len(vocabulary) for a string
    not in it), which the InferenceSession computes on the host (encode)."""

    kind = "string input"

    def __init__(self, operand, vocabulary, name):
        self.operand = operand
        self.vocabulary = list(vocabulary)
        self.where = f"graph input '{name}'"
        self._index = {s: i for i, s in enumerate(self.vocabulary)}

    def encode(self, array):
        unknown = len(self.vocabulary)
        flat = np.asarray(array, dtype=object).reshape(-1)
        out = np.fromiter((self._index.get(str(s), unknown) for s in flat), np.int32, len(flat))
        return out.reshape(np.shape(array))

    def table(self, keys, values, default, np_dtype):
        """values[k] for each vocabulary string (default where a key is missing), then default
        for the strings outside the vocabulary: what the graph gathers with the index."""
        lookup = dict(zip(keys, values))
        rows = [lookup.get(s, default) for s in self.vocabulary] + [default]
        return np.asarray(rows).astype(np_dtype)


def string_keys(node):
    """The string keys a LabelEncoder / CategoryMapper node maps from, or None."""
    from onnx import TensorProto, helper

    if node.domain != "ai.onnx.ml" or node.op_type not in ("LabelEncoder", "CategoryMapper"):
        return None
    attrs = {a.name: a for a in node.attribute}
    name = "cats_strings" if node.op_type == "CategoryMapper" else "keys_strings"
    # Only attributes of the right type count (a mutated file may give keys_strings as an
    # int: the node's converter then names it); undecodable bytes are replaced here, where
    # only the vocabulary is gathered.
    attr = attrs.get(name)
    if attr is not None and attr.type == attr.STRINGS:
        return [s.decode("utf-8", "replace") for s in helper.get_attribute_value(attr)]
    tensor = attrs.get("keys_tensor")
    if (
        tensor is not None
        and tensor.type == tensor.TENSOR
        and tensor.t.data_type == TensorProto.STRING
    ):
        return [s.decode("utf-8", "replace") for s in tensor.t.string_data]
    return None


def string_vocabulary(graph, name):
    """The strings that the readers of string input `name` map (their keys, in order), when
    every reader is a top-level LabelEncoder / CategoryMapper with string keys and `name` is
    not itself a graph output; else None."""
    if any(o.name == name for o in graph.output):
        return None
    vocabulary, seen = [], set()
    for node in graph.node:
        if name not in node.input:
            continue
        keys = string_keys(node)
        if keys is None or list(node.input).index(name) != 0:
            return None
        for k in keys:
            if k not in seen:
                seen.add(k)
                vocabulary.append(k)
    for node in graph.node:  # a subgraph reading it (not supported)
        for a in node.attribute:
            if a.type in (a.GRAPH, a.GRAPHS):
                for g in [a.g] if a.type == a.GRAPH else list(a.graphs):
                    if any(name in n.input for n in g.node):
                        return None
    return vocabulary if vocabulary else None
