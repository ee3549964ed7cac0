"""Evaluate one node on numpy arrays at import (constant and shape folding).

The numpy evaluator is onnx's own reference implementation (onnx.reference), run on the
single node; it covers nearly every standard operator at every opset. Nodes whose results are
random are never folded; a node the reference implementation cannot run is left to the
converter (None is returned).
"""

import warnings

import numpy as np

from .errors import OnnxImportError
from .model_io import sparse_to_numpy, tensor_to_numpy

_NEVER_FOLD = {
    "RandomNormal",
    "RandomNormalLike",
    "RandomUniform",
    "RandomUniformLike",
    "Bernoulli",
    "Multinomial",
}

# A folded result larger than this many elements is kept only if the node's inputs were
# already that large (avoid materializing, e.g., a huge Expand of a scalar as a weight).
_MAX_GROWTH_ELEMENTS = 1 << 24


def _attr(node, name, default=None):
    from onnx import helper

    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def _axes(node, inputs, opset):
    if opset >= 13 and len(inputs) > 1 and inputs[1] is not None:
        return [int(a) for a in inputs[1].reshape(-1)]
    axes = _attr(node, "axes")
    return None if axes is None else [int(a) for a in axes]


def _fast(node, inputs, opset):
    """numpy for the shape-computation operators (fast, and independent of onnx.reference)."""
    op = node.op_type
    x = inputs[0] if inputs else None
    if op in ("Identity",):
        return [x]
    if op == "Constant" and len(node.attribute) == 1 and node.attribute[0].name == "value":
        # Never file-backed here (see can_fold); the dims are checked (no numpy -1).
        return [tensor_to_numpy(node.attribute[0].t, None)]
    if op == "Constant" and len(node.attribute) == 1 and node.attribute[0].name == "sparse_value":
        return [sparse_to_numpy(node.attribute[0].sparse_tensor, None)]
    if op == "Unsqueeze":
        axes = _axes(node, inputs, opset)
        rank = x.ndim + len(axes)
        out = x
        for a in sorted(a + rank if a < 0 else a for a in axes):
            out = np.expand_dims(out, a)
        return [out]
    if op == "Squeeze":
        axes = _axes(node, inputs, opset)
        if axes is None:
            return [np.squeeze(x)]
        return [np.squeeze(x, axis=tuple(a + x.ndim if a < 0 else a for a in axes))]
    if op == "Concat":
        parts = [v for v in inputs if v is not None]
        return [np.concatenate(parts, axis=int(_attr(node, "axis", 0)))]
    if op == "Gather":
        axis = int(_attr(node, "axis", 0))
        idx = inputs[1].astype(np.int64)
        dim = x.shape[axis]
        if (idx >= dim).any() or (idx < -dim).any():
            return None
        return [np.take(x, np.where(idx < 0, idx + dim, idx), axis=axis)]
    if op == "Reshape" and opset >= 5:
        shape = [int(v) for v in inputs[1].reshape(-1)]
        if not _attr(node, "allowzero", 0):
            shape = [x.shape[i] if d == 0 else d for i, d in enumerate(shape)]
        return [x.reshape(shape)]
    if op == "Transpose":
        perm = _attr(node, "perm")
        return [np.transpose(x, perm)]
    return None


def _reads_files(node):
    """A tensor attribute with external data: onnx.reference would open it relative to the
    working directory; the converter reads it from the model directory, location checked."""
    for a in node.attribute:
        if a.type == a.TENSOR and a.t.data_location == a.t.EXTERNAL:
            return True
        if a.type == a.TENSORS and any(t.data_location == t.EXTERNAL for t in a.tensors):
            return True
        if a.type == a.SPARSE_TENSOR and a.t.EXTERNAL in (
            a.sparse_tensor.values.data_location,
            a.sparse_tensor.indices.data_location,
        ):
            return True
    return False


def _capped_product(factors, cap):
    """The product of positive integers, or the first partial product past `cap`: a bound is
    all the caller needs, and the exact product of a million factors is a number of millions of
    digits (found by the fuzzer: Tile with a folded Range of 2^20 repeats hung here)."""
    out = 1
    for f in factors:
        out *= f
        if out > cap:
            break
    return out


def _size_bound(node, inputs, cap):
    """An upper bound of the output elements of the operators whose output size is given by
    input values (a few bytes of model can ask for terabytes), exact up to `cap`, or None for
    other operators."""
    op = node.op_type
    try:
        if op == "ConstantOfShape" and inputs and inputs[0] is not None:
            dims = [max(int(d), 0) for d in inputs[0].reshape(-1)]
            return 0 if 0 in dims else _capped_product(dims, cap)
        if op in ("Expand", "Tile") and len(inputs) > 1 and inputs[1] is not None:
            factors = [max(abs(int(d)), 1) for d in inputs[1].reshape(-1)]
            return _capped_product(factors, cap) * max(inputs[0].size, 1)
        if op == "Range" and len(inputs) == 3 and all(v is not None for v in inputs):
            start, limit, delta = (float(v.reshape(-1)[0]) for v in inputs)
            return int(abs((limit - start) / delta)) + 1 if delta else 0
    except (ValueError, TypeError, OverflowError, AttributeError, IndexError):
        return None
    return None


def evaluate(node, inputs, opsets, domain):
    if node.op_type in _NEVER_FOLD or _reads_files(node):
        return None
    biggest = max((v.size for v in inputs if v is not None), default=1)
    bound = _size_bound(node, inputs, max(_MAX_GROWTH_ELEMENTS, biggest))
    if bound is not None and bound > _MAX_GROWTH_ELEMENTS and bound > biggest:
        return None  # not materialized at import: the converter keeps it a run-time value
    if domain == "":
        try:
            with np.errstate(all="ignore"):
                fast = _fast(node, inputs, opsets.get("", 1))
        except OnnxImportError:
            raise  # a malformed tensor: the evaluator would accept what numpy accepts
        except (ValueError, IndexError, TypeError, AttributeError):
            # Malformed for the fast path (an omitted input is None: Gather without indices,
            # found by the fuzzer); the evaluator and then the converter say what is wrong.
            fast = None
        if fast is not None:
            return [np.require(v, requirements="C") for v in fast]
    try:
        from onnx.reference import ReferenceEvaluator
    except ImportError:  # pragma: no cover
        return None
    names = [name for name, v in zip(node.input, inputs) if name]
    feeds = {name: v for name, v in zip(node.input, inputs) if name}
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            evaluator = ReferenceEvaluator(node, opsets={domain: opsets.get(domain, 1)})
            results = evaluator.run(None, feeds)
    except Exception:  # noqa: BLE001 - any failure means: leave it to the converter
        return None
    del names
    out = []
    biggest_in = max((v.size for v in feeds.values()), default=1)
    for r in results:
        if r is None:
            out.append(None)
            continue
        if isinstance(r, list):  # a sequence: not a tensor value we can hold
            return None
        a = np.asarray(r)
        if a.size > _MAX_GROWTH_ELEMENTS and a.size > biggest_in:
            return None
        out.append(a)
    return out
