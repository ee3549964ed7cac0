"""Operators whose output size depends on input values, computed on the host between graphs.

A WebNN graph has static shapes, so `NonZero`, `Unique`, `Compress`, `NonMaxSuppression` and
`Range` can only be converted when their inputs are known at import. An InferenceSession runs
a model in which one of them reads run-time values (a detector's NonMaxSuppression after its
score head) as segments: the importer stops at the first such node (in the graph's node order,
which ONNX requires to be topological), the graph built so far returns every value the rest of
the model reads, the node runs on the host with onnx's reference implementation of it, and the
rest of the model becomes a model of its own whose inputs are those values — imported by an
inner session, so it is compiled per shape of its inputs and may be cut again further on.

A TopK of run-time values runs on the host too where its graph forms (ops/topk.py: WebNN
has no sort) would be slow: over many elements with a large K (host_topk.py).

A node that needs a value at import which the graph computes at run time (TopK's K, an
Expand's or Reshape's shape from values) is cut the same way, without a host step: the graph
so far returns that value, and the rest of the model, starting at the node, is imported by an
inner session that folds the value (`constant_inputs`), one compiled graph per value.

`webnn.onnx.load` and `convert` make one graph and never cut: there such a node is an import
error naming it, as before.
"""

from dataclasses import dataclass, field

import numpy as np

from .sequence_values import NON_TENSOR

# Standard-domain operators a session may run on the host (their converters fold them only).
HOST_OPS = frozenset({"NonZero", "Unique", "Compress", "NonMaxSuppression", "Range"})
# Elements a host node may read, and a host Range make (its size comes from its input values,
# 2 ** 40 in a scalar). A chain of host nodes may grow its values at every step (NonZero of a
# [2, n] tensor is up to [2, 2n]): without a bound, fifty steps ran a machine out of memory.
MAX_HOST_ELEMENTS = 1 << 26


def is_host_cut(node, inputs, operand_shape):
    """Whether `node` must run on the host: a HOST_OPS node reading a run-time value, or a
    TopK of run-time values that its graph forms would sort slowly (host_topk.py)."""
    if node.domain not in ("", "ai.onnx"):
        return False
    if node.op_type == "TopK":
        return _top_k_on_host(node, inputs, operand_shape)
    if node.op_type not in HOST_OPS:
        return False
    return any(v is not None and not isinstance(v, np.ndarray) for v in inputs)


def _top_k_on_host(node, inputs, operand_shape):
    from . import host_topk

    if not inputs or inputs[0] is None or isinstance(inputs[0], np.ndarray):
        return False  # folded at import
    if isinstance(inputs[0], NON_TENSOR):
        return False
    try:
        shape = operand_shape(inputs[0])
    except (TypeError, ValueError):
        return False  # not an operand: the converter's error names it
    if len(inputs) > 1 and inputs[1] is not None and not isinstance(inputs[1], np.ndarray):
        return True  # K computed at run time: the host reads it with X
    axis = next((a.i for a in node.attribute if a.name == "axis"), -1)
    k = next((a.i for a in node.attribute if a.name == "k"), None)
    if len(inputs) > 1 and isinstance(inputs[1], np.ndarray) and inputs[1].size == 1:
        k = int(inputs[1].reshape(-1)[0])
    if k is None or not shape or not -len(shape) <= axis < len(shape):
        return False  # malformed: the converter's error names it
    if not all(isinstance(d, int) for d in shape):
        return True  # dynamic sizes: the graph forms need static ones, the host does not
    return host_topk.prefers_host(shape, axis % len(shape), k)


def reads_host_tensor(node, inputs):
    """Whether `node` reads a tensor the host finishes (a HostOutput of kind "tensor", e.g. an
    SVM's coupled probabilities) and does not merely forward it: the session then cuts before
    `node`, and the rest of the model takes the finished tensor as an input."""
    from .host_outputs import HostOutput, pass_through

    if not any(isinstance(v, HostOutput) and v.kind == "tensor" for v in inputs):
        return False
    return pass_through(node, inputs) is None


def names_read(node):
    """Every value name `node` reads, including the outer-scope names its subgraphs read."""
    names = [n for n in node.input if n]
    for attr in node.attribute:
        graphs = [attr.g] if attr.type == attr.GRAPH else list(attr.graphs)
        for graph in graphs:
            defined = {vi.name for vi in graph.input} | {t.name for t in graph.initializer}
            for inner in graph.node:
                names += [n for n in names_read(inner) if n not in defined]
                defined.update(o for o in inner.output if o)
            names += [vi.name for vi in graph.output if vi.name not in defined]
    return names


@dataclass
class HostCut:
    """Where an import stopped: the host node, the nodes after it, and the values they read.

    `exported` are the names the graph built so far returns (run-time values), `constants` the
    values the rest reads that were known at import (initializers, folded shapes), by name.
    """

    index: int
    node: object
    remaining: list
    exported: list = field(default_factory=list)
    constants: dict = field(default_factory=dict)
    # False: nothing runs on the host but the graph's host outputs (reads_host_tensor); the
    # rest of the model starts at `node` itself.
    runs_node: bool = True
    # Values `node` needs at import that the graph computes (TopK's K, a Reshape's shape):
    # the rest of the model starts at `node`, and its session folds them (constant_inputs),
    # compiling one graph per value.
    fold: list = field(default_factory=list)
    # exported value name -> its ONNX type where the graph holds it in another (held.py)
    held: dict = field(default_factory=dict)

    @property
    def after(self):
        """The nodes the rest of the model (the inner session) runs."""
        return self.remaining[1:] if self.runs_node else self.remaining


def plan_cut(index, nodes, scope, graph_outputs, runs_node=True):
    """The HostCut for an import stopped at nodes[index], given the scope at that point."""
    remaining = list(nodes[index:])
    wanted = []
    for node in remaining:
        wanted += names_read(node)
    wanted += [vi.name for vi in graph_outputs]
    cut = HostCut(index=index, node=nodes[index], remaining=remaining, runs_node=runs_node)
    seen = set()
    for name in wanted:
        if name in seen:
            continue
        seen.add(name)
        value = scope.lookup(name)
        if value is None:
            continue  # computed by the remaining nodes (or by the host node itself)
        if isinstance(value, np.ndarray):
            cut.constants[name] = value
        elif isinstance(value, NON_TENSOR):
            from .errors import OnnxImportError

            raise OnnxImportError(
                f"the sequence or optional '{name}' is read after node "
                f"'{nodes[index].name or nodes[index].output[0]}' ({nodes[index].op_type}), "
                "which runs on the host: sequences are held at import and cannot cross the "
                "host step"
            )
        else:
            cut.exported.append(name)
    return cut


def run_host_node(node, opsets, values):
    """The node's outputs (name -> array), computed by onnx's reference implementation."""
    import onnx
    from onnx import helper
    from onnx.reference import ReferenceEvaluator

    from .errors import OnnxImportError

    if node.op_type == "Range":
        _check_range(node, values)
    inputs, feeds = [], {}
    for i, name in enumerate(node.input):
        if not name:
            continue
        arr = np.asarray(values[name])
        if arr.size > MAX_HOST_ELEMENTS:
            who = node.name or next((o for o in node.output if o), "?")
            raise OnnxImportError(
                f"node {who!r} ({node.op_type}, run on the host): input '{name}' of shape "
                f"{list(arr.shape)} is above the bound of {MAX_HOST_ELEMENTS} elements"
            )
        feeds[name] = arr
        elem = helper.np_dtype_to_tensor_dtype(arr.dtype)
        inputs.append(helper.make_tensor_value_info(name, elem, list(arr.shape)))
    if node.op_type == "TopK":
        from . import host_topk

        return host_topk.run(node, opsets, values)
    outputs = [helper.make_tensor_value_info(o, onnx.TensorProto.UNDEFINED, None)
               for o in node.output if o]  # fmt: skip
    graph = helper.make_graph([node], "host_node", inputs, outputs)
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets.items()]
    )
    try:
        results = ReferenceEvaluator(model).run(None, feeds)
    except Exception as exc:  # the reference raises whatever numpy raises on bad values
        raise OnnxImportError(
            f"node {node.name or next((o for o in node.output if o), '?')!r} ({node.op_type}, "
            f"run on the host): {exc}"
        ) from exc
    return {o: np.asarray(r) for o, r in zip([o for o in node.output if o], results)}


def _check_range(node, values):
    """Refuse a Range whose run-time start, limit and delta make more than MAX_HOST_ELEMENTS
    elements (the reference evaluator would try to allocate them)."""
    from .errors import OnnxImportError

    try:
        start, limit, delta = (float(np.asarray(values[name]).reshape(-1)[0])
                               for name in node.input[:3])  # fmt: skip
    except (KeyError, IndexError, ValueError, TypeError):
        return  # malformed: the reference evaluator's error names it
    if delta == 0:
        return
    with np.errstate(all="ignore"):
        count = np.ceil((limit - start) / delta)
    if not np.isfinite(count) or count > MAX_HOST_ELEMENTS:
        who = node.name or next((o for o in node.output if o), "?")
        raise OnnxImportError(
            f"node {who!r} (Range, run on the host): start {start}, limit {limit}, delta {delta} "
            f"make {count} elements, above the bound of {MAX_HOST_ELEMENTS}"
        )
