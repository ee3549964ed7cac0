"""If, Loop and Scan: inlined or unrolled at import.

`If` whose condition is known at import inlines that branch; otherwise both branches are
imported and their outputs selected with `where` (the branches have no side effects in ONNX,
so computing both is exact). `Loop` with a trip count / condition known at import and `Scan`
(static sequence length) are unrolled, within a bound on the number of imported nodes.
"""

import numpy as np

from ..errors import OnnxImportError
from ..sequence_values import NON_TENSOR, OptionalValue, SequenceValue
from .registry import op

MAX_UNROLLED_NODES = 200_000


def _graph_attr(n, name):
    for a in n.node.attribute:
        if a.name == name:
            return a.g
    n.fail(f"missing graph attribute '{name}'")


def run_subgraph(n, graph, bindings):
    """Import a sub-graph's nodes in a child scope; returns its output values."""
    from ..importer import Scope
    from ..model_io import tensor_to_numpy

    scope = Scope(n.scope)
    for init in graph.initializer:
        scope[init.name] = tensor_to_numpy(init, n.importer.base_dir)
    for vi, value in zip(graph.input, bindings):
        scope[vi.name] = value
    n.importer.run_nodes(graph.node, scope)
    outs = []
    for vi in graph.output:
        if not scope.knows(vi.name):
            n.fail(f"sub-graph output '{vi.name}' is not produced")
        outs.append(scope.lookup(vi.name))
    return outs


@op("If")
def if_(n):
    cond = n.value(0)
    then_g, else_g = _graph_attr(n, "then_branch"), _graph_attr(n, "else_branch")
    if isinstance(cond, np.ndarray):
        return run_subgraph(n, then_g if bool(cond.reshape(-1)[0]) else else_g, [])
    try:
        a = run_subgraph(n, then_g, [])
        b = run_subgraph(n, else_g, [])
    except OnnxImportError as exc:
        n.fail(
            f"the condition '{n.node.input[0]}' is only known at run time, so both branches are "
            f"imported, and one cannot be: {exc}. Give the inputs the condition depends on "
            "with constants= (e.g. constants={'sr': 16000})"
        )
    bl = n.b
    c = n.x(0)
    if len(bl.operand_shape(c)) > 0:
        c = bl.reshape(c, [])
    return [_select(n, c, va, vb, name) for va, vb, name in zip(a, b, n.node.output)]


def _select(n, c, va, vb, name):
    """`where(c, va, vb)` for one output of an If whose condition is known at run time only;
    sequences (held at import) element by element when both branches give the same number,
    optionals when both have an element or neither has."""
    if isinstance(va, NON_TENSOR) or isinstance(vb, NON_TENSOR):
        same_kind = type(va) is type(vb)
        if same_kind and isinstance(va, SequenceValue) and len(va) == len(vb):
            values = [_select(n, c, x, y, f"{name}[{i}]") for i, (x, y) in enumerate(zip(va, vb))]
            return SequenceValue(values, va.elem_type or vb.elem_type)
        if same_kind and isinstance(va, OptionalValue):
            if va.element is None and vb.element is None:
                return va
            if va.element is not None and vb.element is not None:
                return OptionalValue(_select(n, c, va.element, vb.element, name), va.type_proto)
        n.fail(
            f"output '{name}': the branches give sequences of different lengths, optionals "
            "with and without an element, or a sequence and a tensor, and the condition is "
            "only known at run time (sequences are held at import); give the inputs the "
            "condition depends on with constants="
        )
    return _where(n, c, va, vb, name)


def _where(n, c, va, vb, name):
    bl = n.b
    if isinstance(va, np.ndarray) and isinstance(vb, np.ndarray) and va.shape != vb.shape:
        n.fail(
            f"output '{name}': the branches give different shapes and the condition is "
            "only known at run time; give the inputs it depends on with constants="
        )
    oa, ob = n.importer.operand(va, n), n.importer.operand(vb, n)
    if bl.operand_shape(oa) != bl.operand_shape(ob):
        n.fail(
            f"output '{name}': the branches give shapes {bl.operand_shape(oa)} and "
            f"{bl.operand_shape(ob)} and the condition is only known at run time; give "
            "the inputs it depends on with constants="
        )
    return bl.where(c, oa, ob)


def _stack(n, values, axis=0):
    if all(isinstance(v, np.ndarray) for v in values):
        return np.stack(values, axis=axis)
    bl = n.b
    parts = [bl.unsqueeze(n.importer.operand(v, n), [axis]) for v in values]
    return bl.concat(parts, axis) if len(parts) > 1 else bl.identity(parts[0])


@op("Loop")
def loop(n):
    body = _graph_attr(n, "body")
    trip = n.value(0)
    cond = n.value(1) if n.has(1) else np.array(True)
    if trip is not None and not isinstance(trip, np.ndarray):
        n.c(0, what="the trip count M, needed to unroll the loop")
    max_trip = int(trip.reshape(-1)[0]) if trip is not None else None
    if not isinstance(cond, np.ndarray):
        n.c(1, what="the loop condition, needed to unroll the loop")
    carried = [n.value(i) for i in range(2, n.n_inputs)]
    n_carried = len(carried)
    scans = [[] for _ in range(len(body.output) - 1 - n_carried)]
    if max_trip is None:
        max_trip = MAX_UNROLLED_NODES
    budget = MAX_UNROLLED_NODES
    i = 0
    while i < max_trip and bool(np.asarray(cond).reshape(-1)[0]):
        budget -= len(body.node)
        if budget < 0:
            n.fail(f"unrolling would import more than {MAX_UNROLLED_NODES} nodes")
        outs = run_subgraph(n, body, [np.array(i, np.int64), np.asarray(cond)] + carried)
        cond = outs[0]
        if not isinstance(cond, np.ndarray):
            n.fail("the loop condition is computed at run time; it cannot be unrolled")
        carried = outs[1 : 1 + n_carried]
        for k, v in enumerate(outs[1 + n_carried :]):
            scans[k].append(v)
        i += 1
    results = list(carried)
    for k, values in enumerate(scans):
        if not values:
            n.fail("a loop with zero iterations has empty scan outputs")
        results.append(_stack(n, values))
    return results


def _take(n, v, axis, t):
    if isinstance(v, np.ndarray):
        return np.take(v, t, axis=axis)
    bl = n.b
    shape = bl.operand_shape(v)
    starts = [0] * len(shape)
    starts[axis] = t
    sizes = list(shape)
    sizes[axis] = 1
    part = bl.slice(v, starts, sizes)
    return bl.reshape(part, shape[:axis] + shape[axis + 1 :])


@op("Scan")
def scan(n):
    body = _graph_attr(n, "body")
    if n.opset < 9:
        return _scan_8(n, body)
    m = int(n.attr("num_scan_inputs"))
    if not 1 <= m <= n.n_inputs:  # sizes the attribute defaults (2^62 of them: MemoryError)
        n.fail(f"num_scan_inputs {m} is not between 1 and the node's {n.n_inputs} inputs")
    inputs = [n.value(i) for i in range(n.n_inputs)]
    states, xs = inputs[: len(inputs) - m], inputs[len(inputs) - m :]
    in_axes = list(n.attr("scan_input_axes", [0] * m))
    in_dirs = list(n.attr("scan_input_directions", [0] * m))
    n_out = len(body.output) - len(states)
    out_axes = list(n.attr("scan_output_axes", [0] * n_out))
    out_dirs = list(n.attr("scan_output_directions", [0] * n_out))
    shapes = [list(x.shape) if isinstance(x, np.ndarray) else n.b.operand_shape(x) for x in xs]
    ranks = [len(s) for s in shapes]
    in_axes = [a + r if a < 0 else a for a, r in zip(in_axes, ranks)]
    steps = shapes[0][in_axes[0]]
    if not isinstance(steps, int):
        n.fail("Scan over a dynamic axis")
    if steps * len(body.node) > MAX_UNROLLED_NODES:
        n.fail(f"unrolling would import more than {MAX_UNROLLED_NODES} nodes")
    collected = [[] for _ in range(n_out)]
    for t in range(steps):
        slices = [
            _take(n, x, a, steps - 1 - t if d else t) for x, a, d in zip(xs, in_axes, in_dirs)
        ]
        outs = run_subgraph(n, body, list(states) + slices)
        states = outs[: len(states)]
        for k, v in enumerate(outs[len(states) :]):
            collected[k].append(v)
    results = list(states)
    for k, values in enumerate(collected):
        if out_dirs[k]:
            values = values[::-1]
        rank = (
            values[0].ndim
            if isinstance(values[0], np.ndarray)
            else len(n.b.operand_shape(values[0]))
        ) + 1
        axis = out_axes[k] + rank if out_axes[k] < 0 else out_axes[k]
        results.append(_stack(n, values, axis))
    return results


def _scan_8(n, body):
    """Scan-8: a batch axis (0) before the scan axis (1) of every state and scan input, and
    an optional sequence_lens (input 0). Each batch element is scanned as Scan-9 scans (the
    body sees no batch axis), the results stacked along the batch; sequence_lens must be
    absent or every length the full one (shorter sequences would need per-element steps)."""
    m = int(n.attr("num_scan_inputs"))
    inputs = [n.value(i) for i in range(1, n.n_inputs)]
    if not 1 <= m <= len(inputs):
        n.fail(f"num_scan_inputs {m} is not between 1 and the node's {len(inputs)} inputs")
    states, xs = inputs[: len(inputs) - m], inputs[len(inputs) - m :]
    dirs = list(n.attr("directions", [0] * m))
    shapes = [list(x.shape) if isinstance(x, np.ndarray) else n.b.operand_shape(x) for x in xs]
    batch, steps = shapes[0][0], shapes[0][1]
    if not isinstance(batch, int) or not isinstance(steps, int):
        n.fail("Scan-8 over a dynamic batch or sequence axis")
    if n.has(0):
        lens = np.asarray(n.c(0, what="sequence_lens")).reshape(-1)
        if lens.size and np.any(lens != steps):
            n.fail(f"sequence_lens {lens.tolist()} shorter than the scan axis ({steps}): not "
                   "supported")  # fmt: skip
    if batch * steps * len(body.node) > MAX_UNROLLED_NODES:
        n.fail(f"unrolling would import more than {MAX_UNROLLED_NODES} nodes")
    n_out = len(body.output) - len(states)
    final, scanned = [], [[] for _ in range(n_out)]
    for i in range(batch):
        carried = [_take(n, s, 0, i) for s in states]
        series = [_take(n, x, 0, i) for x in xs]
        collected = [[] for _ in range(n_out)]
        for t in range(steps):
            slices = [_take(n, x, 0, steps - 1 - t if d else t) for x, d in zip(series, dirs)]
            outs = run_subgraph(n, body, list(carried) + slices)
            carried = outs[: len(states)]
            for k, v in enumerate(outs[len(states) :]):
                collected[k].append(v)
        final.append(carried)
        for k, values in enumerate(collected):
            scanned[k].append(_stack(n, values, 0))
    results = [_stack(n, [f[j] for f in final], 0) for j in range(len(states))]
    return results + [_stack(n, values, 0) for values in scanned]
