"""ai.onnx.preview FlexAttention: scaled dot-product attention with modifier subgraphs.

Scores = Q @ K^T * scale, then the optional `score_mod` subgraph, softmax along the keys (in
float32: `softmax_precision` 1, the default for non-double inputs; double inputs are held as
float32 anyway), the optional `prob_mod` subgraph, then @ V. Grouped K/V heads are repeated
for their contiguous groups of query heads. The subgraphs are imported inline on the score /
probability operand (control.run_subgraph), like an If branch.
"""

import numpy as np

from .control import run_subgraph
from .registry import op

PREVIEW = "ai.onnx.preview"


def _graph(n, name):
    for a in n.node.attribute:
        if a.name == name and a.type == a.GRAPH:
            return a.g
    return None


def _modify(n, name, value):
    graph = _graph(n, name)
    if graph is None:
        return value
    if len(graph.input) != 1 or len(graph.output) != 1:
        n.fail(f"{name} must have one input and one output (has {len(graph.input)} and "
               f"{len(graph.output)})")  # fmt: skip
    (out,) = run_subgraph(n, graph, [value])
    out = n.importer.operand(out, n)
    if n.b.operand_shape(out) != n.b.operand_shape(value):
        out = n.b.expand(out, n.b.operand_shape(value))  # a modifier may broadcast
    return n.b.cast(out, "float32") if n.b.operand_data_type(out) != "float32" else out


@op("FlexAttention", domain=PREVIEW)
def flex_attention(n):
    b = n.b
    for i in range(3):
        if n.rank(i) != 4:
            n.fail(f"input {i} must be rank 4 (got shape {n.shape(i)})")
    precision = n.attr("softmax_precision", None)
    if precision not in (None, 1, 10, 11, 16):
        n.fail(f"softmax_precision {precision}: a float type is needed")
    q_heads, head = n.static_shape(0)[1], n.static_shape(0)[3]
    kv_heads = n.static_shape(1)[1]
    if q_heads % kv_heads:
        n.fail(f"{q_heads} query heads are not a multiple of {kv_heads} key/value heads")
    q, k, v = n.x(0), n.x(1), n.x(2)
    dtype = b.operand_data_type(q)
    if kv_heads != q_heads:  # each K/V head serves a contiguous group of query heads
        group = q_heads // kv_heads

        def repeat(t):
            shape = b.operand_shape(t)
            t = b.reshape(t, [shape[0], kv_heads, 1, shape[2], shape[3]])
            t = b.expand(t, [shape[0], kv_heads, group, shape[2], shape[3]])
            return b.reshape(t, [shape[0], q_heads, shape[2], shape[3]])

        k, v = repeat(k), repeat(v)
    scale = n.attr("scale", None)
    scale = float(1.0 / np.sqrt(head)) if scale is None else float(scale)
    if dtype != "float32":
        q, k, v = b.cast(q, "float32"), b.cast(k, "float32"), b.cast(v, "float32")
    scores = b.mul(b.matmul(q, b.transpose(k, [0, 1, 3, 2])), n.const(scale, "float32"))
    scores = _modify(n, "score_mod", scores)
    probs = _modify(n, "prob_mod", b.softmax(scores, 3))
    y = b.matmul(probs, v)
    return b.cast(y, dtype) if dtype != "float32" else y
