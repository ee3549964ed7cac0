"""Evaluate one node on numpy arrays at import (constant and shape folding).

The numpy evaluator is onnx's own reference implementation (onnx.reference), run on the
single node; it covers nearly every standard operator at every opset. Nodes whose results are
random are never folded; a node the reference implementation cannot run is left to the
converter (None is returned).
"""

import warnings

import numpy as np

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


def evaluate(node, inputs, opsets, domain):
    if node.op_type in _NEVER_FOLD:
        return None
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
