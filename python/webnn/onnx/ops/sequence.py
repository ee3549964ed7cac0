"""Sequence and optional operators, evaluated at import on SequenceValue / OptionalValue.

WebNN has no sequence type: a sequence is the import-time tuple of its elements
(sequence_values.py), so every position, split size and count must be known at import; the
elements themselves may be run-time operands. SplitToSequence slices, ConcatFromSequence
concatenates or stacks, SequenceAt gives an ordinary value, SequenceMap imports its body once
per element (as Loop unrolls its body).
"""

import numpy as np

from ..sequence_values import OptionalValue, SequenceValue
from .control import MAX_UNROLLED_NODES, _graph_attr, run_subgraph
from .registry import op

_FLOAT = 1  # TensorProto.FLOAT: SequenceEmpty's default dtype


def _elem_type_of(n, value):
    """The ONNX data type of a tensor value, or 0 when it is not known here."""
    from ..types import ONNX_TO_NUMPY, ONNX_TO_WEBNN

    if isinstance(value, np.ndarray):
        for k, v in ONNX_TO_NUMPY.items():
            if np.dtype(v) == value.dtype:
                return k
        return 0
    if isinstance(value, (SequenceValue, OptionalValue)) or value is None:
        return 0
    dtype = n.b.operand_data_type(value)
    return next((k for k, v in ONNX_TO_WEBNN.items() if v == dtype), 0)


def _sequence(n, i, what="input sequence"):
    value = n.value(i)
    if not isinstance(value, SequenceValue):
        n.fail(f"input {i} ('{n.node.input[i]}', the {what}) is not a sequence")
    return value


def _tensor(n, i):
    value = n.value(i)
    if value is None or isinstance(value, (SequenceValue, OptionalValue)):
        n.fail(f"input {i} ('{n.node.input[i]}') must be a tensor")
    return value


def _position(n, i, length, *, allow_end):
    """Input i as a position in a sequence of `length`, known at import, made non-negative."""
    value = n.value(i)
    if not isinstance(value, np.ndarray):
        n.c(i, what="the sequence position: sequences are held at import, so positions must "
            "be known there")  # fmt: skip
    if value.size != 1:
        n.fail(f"input {i} ('{n.node.input[i]}', the position) must be a scalar")
    pos = int(value.reshape(-1)[0])
    high = length if allow_end else length - 1
    if not -length <= pos <= high:
        n.fail(f"position {pos} is out of range for a sequence of length {length} "
               f"(valid: {-length} .. {high})")  # fmt: skip
    return pos + length if pos < 0 else pos


def _shape(n, value):
    if isinstance(value, np.ndarray):
        return list(value.shape)
    return n.b.operand_shape(value)


def _slice(n, value, axis, start, size):
    if isinstance(value, np.ndarray):
        return np.take(value, range(start, start + size), axis=axis)
    shape = n.b.operand_shape(value)
    starts = [0] * len(shape)
    starts[axis] = start
    sizes = list(shape)
    sizes[axis] = size
    return n.b.slice(value, starts, sizes)


def _squeeze(n, value, axis):
    if isinstance(value, np.ndarray):
        return np.squeeze(value, axis=axis)
    shape = n.b.operand_shape(value)
    return n.b.reshape(value, shape[:axis] + shape[axis + 1 :])


@op("SequenceEmpty", foldable=False, fold_without_inputs=True)
def sequence_empty(n):
    return SequenceValue((), n.attr("dtype", _FLOAT))


@op("SequenceConstruct", foldable=False)
def sequence_construct(n):
    values = [_tensor(n, i) for i in range(n.n_inputs)]
    if not values:
        n.fail("SequenceConstruct needs at least one input")
    return SequenceValue(values, _elem_type_of(n, values[0]))


@op("SequenceLength", foldable=False)
def sequence_length(n):
    return np.array(len(_sequence(n, 0)), dtype=np.int64)


@op("SequenceAt", foldable=False)
def sequence_at(n):
    seq = _sequence(n, 0)
    return seq[_position(n, 1, len(seq), allow_end=False)]


@op("SequenceInsert", foldable=False)
def sequence_insert(n):
    seq = _sequence(n, 0)
    value = _tensor(n, 1)
    pos = _position(n, 2, len(seq), allow_end=True) if n.has(2) else len(seq)
    elements = list(seq)
    elements.insert(pos, value)
    return SequenceValue(elements, seq.elem_type or _elem_type_of(n, value))


@op("SequenceErase", foldable=False)
def sequence_erase(n):
    seq = _sequence(n, 0)
    if not seq:
        n.fail("erasing from an empty sequence")
    pos = _position(n, 1, len(seq), allow_end=False) if n.has(1) else len(seq) - 1
    elements = list(seq)
    del elements[pos]
    return SequenceValue(elements, seq.elem_type)


def _check_count(n, count):
    # Each element is a slice node of its own: a declared [2^31 - 1, 6] input split into rows
    # built slices until memory ran out (onnx_importer fuzz finding).
    if count > MAX_UNROLLED_NODES:
        n.fail(f"the sequence would have {count} elements (a slice each), above the bound of "
               f"{MAX_UNROLLED_NODES}")  # fmt: skip


@op("SplitToSequence", foldable=False)
def split_to_sequence(n):
    value = _tensor(n, 0)
    shape = _shape(n, value)
    axis = int(n.attr("axis", 0))
    if not -len(shape) <= axis < len(shape):
        n.fail(f"axis {axis} is out of range for rank {len(shape)}")
    axis %= len(shape)
    size = shape[axis]
    if not isinstance(size, int):
        n.fail(f"axis {axis} is dynamic ({size['name']!r}); the number of elements of the "
               "sequence must be known at import: fix it with free_dims= or input_shapes=")  # fmt: skip
    elem = _elem_type_of(n, value)
    if not n.has(1):
        _check_count(n, size)
        parts = [_slice(n, value, axis, i, 1) for i in range(size)]
        if int(n.attr("keepdims", 1)) == 0:
            parts = [_squeeze(n, p, axis) for p in parts]
        return SequenceValue(parts, elem)
    split = n.c(1, what="the split sizes")
    if split.ndim == 0:
        chunk = int(split)
        if chunk <= 0:
            n.fail(f"split size {chunk} must be positive")
        _check_count(n, -(-size // chunk))
        sizes = [min(chunk, size - s) for s in range(0, size, chunk)]
    else:
        sizes = [int(s) for s in split.reshape(-1)]
        if any(s < 0 for s in sizes) or sum(sizes) != size:
            n.fail(f"split sizes {sizes} must be >= 0 and sum to axis {axis}'s size {size}")
    parts, start = [], 0
    for s in sizes:
        if s == 0:
            n.fail("a split size of 0 makes an empty tensor, which WebNN cannot hold")
        parts.append(_slice(n, value, axis, start, s))
        start += s
    return SequenceValue(parts, elem)


@op("ConcatFromSequence", foldable=False)
def concat_from_sequence(n):
    seq = _sequence(n, 0)
    if not seq:
        n.fail("concatenating an empty sequence (its result would have no shape)")
    new_axis = int(n.attr("new_axis", 0))
    axis = int(n.attr("axis"))
    rank = len(_shape(n, seq[0])) + (1 if new_axis else 0)
    if not -rank <= axis < rank:
        n.fail(f"axis {axis} is out of range for rank {rank}")
    axis %= rank
    values = list(seq)
    if all(isinstance(v, np.ndarray) for v in values):
        return np.stack(values, axis) if new_axis else np.concatenate(values, axis)
    operands = [n.importer.operand(v, n) for v in values]
    if new_axis:
        operands = [n.b.unsqueeze(o, [axis]) for o in operands]
    if len(operands) == 1:
        return n.b.identity(operands[0])
    return n.b.concat(operands, axis)


@op("SequenceMap", foldable=False)
def sequence_map(n):
    body = _graph_attr(n, "body")
    first = _sequence(n, 0)
    inputs = [n.value(i) for i in range(n.n_inputs)]
    for i, v in enumerate(inputs[1:], 1):
        if isinstance(v, SequenceValue) and len(v) != len(first):
            n.fail(f"input {i} ('{n.node.input[i]}') has {len(v)} elements, the input "
                   f"sequence {len(first)}")  # fmt: skip
    outputs = [[] for _ in body.output]
    for t in range(len(first)):
        bindings = [v[t] if isinstance(v, SequenceValue) else v for v in inputs]
        for k, value in enumerate(run_subgraph(n, body, bindings)):
            outputs[k].append(value)
    results = []
    for vi, values in zip(body.output, outputs):
        elem = 0
        if vi.type.HasField("tensor_type"):
            elem = vi.type.tensor_type.elem_type
        if not elem and values:
            elem = _elem_type_of(n, values[0])
        results.append(SequenceValue(values, elem))
    return results


@op("Optional", foldable=False, fold_without_inputs=True)
def optional(n):
    element = n.value(0) if n.has(0) else None
    return OptionalValue(element, n.attr("type"))


@op("OptionalHasElement", foldable=False, fold_without_inputs=True)
def optional_has_element(n):
    value = n.value(0) if n.has(0) else None
    if isinstance(value, OptionalValue):
        value = value.element
    return np.array(value is not None)


@op("OptionalGetElement", foldable=False)
def optional_get_element(n):
    value = n.value(0)
    if isinstance(value, OptionalValue):
        if value.element is None:
            n.fail(f"input '{n.node.input[0]}' is an optional without an element")
        return value.element
    return value  # opset 18: a tensor or sequence is its own element
