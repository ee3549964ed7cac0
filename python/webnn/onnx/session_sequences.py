"""InferenceSession's sequence and optional graph inputs and outputs, as ONNX Runtime has them.

A sequence input is fed as a list of numpy arrays; the number of elements and their shapes
are part of the session's shape signature (one compiled graph each), and the graph's inputs
are the elements ('x[0]', 'x[1]', ...). Sequence outputs come back as lists of arrays, an
optional output as its element or None (importer.py: ImportedModel.composite_outputs).
"""

import numpy as np
import onnx

from .errors import OnnxImportError


def element_dtype(type_proto):
    """The numpy dtype of the tensors inside a sequence / optional type, or None."""
    while type_proto.HasField("sequence_type") or type_proto.HasField("optional_type"):
        if type_proto.HasField("sequence_type"):
            type_proto = type_proto.sequence_type.elem_type
        else:
            type_proto = type_proto.optional_type.elem_type
    if not type_proto.HasField("tensor_type") or not type_proto.tensor_type.elem_type:
        return None
    try:
        return np.dtype(onnx.helper.tensor_dtype_to_np_dtype(type_proto.tensor_type.elem_type))
    except (KeyError, TypeError, ValueError):
        return None


def check_sequence_feed(name, value, dtype, type_text):
    """A fed sequence as a list of arrays, checked as ORT checks it."""
    if isinstance(value, np.ndarray) or not isinstance(value, (list, tuple)):
        raise TypeError(
            f"InferenceSession.run: input {name!r} is a {type_text}: feed a list of numpy "
            f"arrays (got {type(value).__name__})"
        )
    out = []
    for index, element in enumerate(value):
        arr = element if isinstance(element, np.ndarray) else np.asarray(element)
        if dtype is not None and arr.dtype != dtype:
            raise TypeError(
                f"InferenceSession.run: input {name!r} element {index} has data type "
                f"{arr.dtype}, expected {dtype} ({type_text})"
            )
        out.append(arr)
    return out


def check_optional_feed(name, value, inner_type, dtype, type_text):
    """A fed optional: None (no element), an array, or a list (an optional sequence)."""
    if value is None:
        return None
    if inner_type.HasField("sequence_type"):
        return check_sequence_feed(name, value, dtype, type_text)
    arr = value if isinstance(value, np.ndarray) else np.asarray(value)
    if dtype is not None and arr.dtype != dtype:
        raise TypeError(
            f"InferenceSession.run: input {name!r} has data type {arr.dtype}, expected "
            f"{dtype} ({type_text})"
        )
    return arr


def feed_key(name, value):
    """The shape-signature entry of a sequence / optional feed."""
    if value is None:
        return (name, "none")
    if isinstance(value, list):
        return (name, "seq", tuple(a.shape for a in value))
    return (name, "optional", value.shape)


def feed_shapes(value):
    """What input_shapes= says for a sequence / optional feed."""
    if value is None:
        return None
    if isinstance(value, list):
        return [list(a.shape) for a in value]
    return list(value.shape)


def flatten_feed(feed, sequence_inputs):
    """The feed with each sequence / optional input replaced by its elements' graph inputs."""
    if not sequence_inputs:
        return feed
    flat = dict(feed)
    for name, element_names in sequence_inputs.items():
        elements = flat.pop(name)
        if elements is None:
            continue
        if isinstance(elements, np.ndarray):
            elements = [elements]
        if len(elements) != len(element_names):  # the signature has the length: a bug if so
            raise OnnxImportError(f"input {name!r}: {len(elements)} elements fed to a graph "
                                  f"imported for {len(element_names)}")  # fmt: skip
        flat.update(zip(element_names, elements))
    return flat


def pack_output(structure, results, dtype):
    """A sequence / optional graph output from the graph's outputs (see composite_outputs)."""
    if isinstance(structure, str):
        arr = results[structure]
        return arr.astype(dtype) if dtype is not None and arr.dtype != dtype else arr
    if isinstance(structure, tuple):  # ("optional", inner or None)
        inner = structure[1]
        return None if inner is None else pack_output(inner, results, dtype)
    return [pack_output(s, results, dtype) for s in structure]


class NoGraph:
    """What a session runs when every graph output is an empty sequence or optional: no WebNN
    graph (it would have no outputs), nothing to compute."""

    def __init__(self):
        self.input_desc = {}

    def run(self, feed):
        return {}
