"""Sequence and optional values, held at import (WebNN has neither type).

A sequence whose length and element shapes are known at import is a SequenceValue: a tuple of
the element values (numpy arrays or MLOperands) that the sequence operators (ops/sequence.py)
take apart and rebuild; only its elements reach the WebNN graph. An optional is an
OptionalValue: its element, or None when it has none. Graph inputs and outputs of these types
are flattened into their elements ('name[0]', 'name[1]', ...): the MLGraph API has tensors
only, and InferenceSession packs them back into lists as ONNX Runtime returns them.
"""


class SequenceValue(tuple):
    """The elements of an ONNX sequence, known in number and shape at import.

    `elem_type`: the ONNX TensorProto data type of the elements (what an empty sequence still
    has), or 0 when not known."""

    def __new__(cls, elements=(), elem_type=0):
        value = super().__new__(cls, elements)
        value.elem_type = int(elem_type or 0)
        return value

    def __repr__(self):
        return f"SequenceValue(len={len(self)}, elem_type={self.elem_type})"


class OptionalValue:
    """An ONNX optional: `element` (a tensor or SequenceValue), or None (no element)."""

    def __init__(self, element, type_proto=None):
        self.element = element
        self.type_proto = type_proto  # the declared onnx.TypeProto of the element, if given

    def __repr__(self):
        return f"OptionalValue({'empty' if self.element is None else 'with an element'})"


NON_TENSOR = (SequenceValue, OptionalValue)


def element_name(name, index):
    """The graph input/output name of element `index` of sequence `name`."""
    return f"{name}[{index}]"
