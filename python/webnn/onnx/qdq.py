"""QDQ fusion: DequantizeLinear -> Conv/MatMul -> QuantizeLinear runs as QLinearConv/QLinearMatMul.

A QDQ model states its arithmetic as float operations between quantize/dequantize pairs, but
ONNX Runtime (the reference those models are validated against) fuses each such triple into
an integer kernel: exact integer accumulation, then one requantization with
x_scale * w_scale / y_scale. Computing the float form instead rounds differently at about one
element in a few hundred per layer, and over a deep network that moves the output by several
quantization steps. This pass rewrites the triples the way ONNX Runtime's QDQ selectors do
(per-tensor activations, per-tensor or per-output-channel weights that are initializers, an
int32 bias or none; a Conv's float bias quantized first as ONNX Runtime's BiasQuantization
transformer does), so the integer converters in ops/quantization.py compute them.
"""

from collections import Counter

import numpy as np
from onnx import helper, numpy_helper

# The inputs and outputs the pass reads of each kind of node it matches (input[0], output[0],
# a Conv's or MatMul's weight input[1]).
_ARITY = {
    "QuantizeLinear": (1, 1),
    "DequantizeLinear": (1, 1),
    "Conv": (2, 1),
    "MatMul": (2, 1),
    "Constant": (0, 1),
}


class _WellFormed:
    """The graph as the pass matches it: without the malformed nodes of those kinds (missing
    inputs or outputs; the fuzzer makes them, and the pass indexed them: IndexError). They are
    never fused and reach their converters, whose errors name them."""

    def __init__(self, graph):
        def usable(node):
            ins, outs = _ARITY.get(node.op_type, (0, 0))
            if len(node.input) < ins or len(node.output) < outs:
                return False
            return (not ins or bool(node.input[0])) and (not outs or bool(node.output[0]))

        self.node = [n for n in graph.node if usable(n)]
        self.output = graph.output


def _producers(graph):
    return {out: node for node in graph.node for out in node.output if out}


def _consumer_counts(graph):
    counts = Counter(name for node in graph.node for name in node.input if name)
    for vi in graph.output:
        counts[vi.name] += 1
    return counts


def _in_file(tensor):
    """External data is not read here (onnx would open it relative to the working directory):
    such tensors are simply not fused; the importer reads them from the model directory."""
    return tensor.data_location == tensor.EXTERNAL


def _scalar_init(inits, name):
    if name not in inits or _in_file(inits[name]):
        return False
    return numpy_helper.to_array(inits[name]).size == 1


def _ort_quantized_bias(bias, x_scale, w_scale):
    """A Conv's float bias as ONNX Runtime's BiasQuantization transformer quantizes it before
    its QDQ fusion (so its QLinearConv takes Convs whose bias the quantizer left in float):
    round_half_even(bias / (x_scale * w_scale)) in float32 steps, as int32; None where it does
    not apply (not 1-D, a weight scale per channel of another length, beyond int32)."""
    if bias.ndim != 1 or bias.dtype != np.float32 or (w_scale.size not in (1, bias.size)):
        return None
    scale = (np.float32(x_scale.reshape(())) * w_scale.astype(np.float32).reshape(-1)).astype(
        np.float32
    )
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        q = np.rint((bias / scale).astype(np.float32))
    if not np.all(np.isfinite(q)) or np.abs(q).max(initial=0) >= 2.0**31:
        return None
    return q.astype(np.int32)


def _constant_nodes_as_inits(graph, inits):
    """Constant nodes with a tensor value count as initializers for the matching below."""
    for node in graph.node:
        if node.op_type == "Constant" and len(node.attribute) == 1:
            a = node.attribute[0]
            if a.name == "value":
                t = type(a.t)()
                t.CopyFrom(a.t)
                t.name = node.output[0]
                inits.setdefault(t.name, t)


def _is_constant(name, producers, inits, memo):
    """Known at import: an initializer, or computed from initializers only. Iterative (an
    explicit stack): the chain behind a value can be as deep as the network."""

    def inputs_of(n):
        node = producers.get(n)
        if node is None or not node.input or any(a.type == a.GRAPH for a in node.attribute):
            return None
        return [i for i in node.input if i]

    stack = [name]
    while stack:
        top = stack[-1]
        if top in inits or top in memo and memo[top] is not None:
            stack.pop()
            continue
        ins = inputs_of(top)
        if ins is None:
            memo[top] = False
            stack.pop()
            continue
        pending = [i for i in ins if i not in inits and i not in memo]
        if top not in memo:
            memo[top] = None  # being visited (a cycle reads as not constant)
        if pending:
            stack.extend(pending)
            continue
        memo[top] = all(i in inits or memo.get(i) is True for i in ins)
        stack.pop()
    return name in inits or memo.get(name) is True


# DQ -> op -> Q groups that ONNX Runtime's optimizer (ORT_ENABLE_EXTENDED and up, the default)
# turns into com.microsoft QLinear operators whose kernels round differently from the float
# form: QLinearAdd (fused multiply-adds, ops/ort_qladd.py), QLinearAveragePool (an integer
# window sum). The others it fuses (Sigmoid, LeakyRelu, Concat, ...) compute what the float
# form computes here, so they stay as they are. Input index lists: the quantized operands.
_ELEMENTWISE = {
    "Add": ("QLinearAdd", (0, 1)),
    "AveragePool": ("QLinearAveragePool", (0,)),
    "Softmax": ("QLinearSoftmax", (0,)),  # a table of exp and a float row sum
}


def _scalar_params(inits, dq_or_q):
    """(scale, zero point) names of a per-tensor DQ/Q whose both are scalar initializers, the
    zero point 8-bit; else None."""
    params = list(dq_or_q.input[1:3]) + [""] * (3 - len(dq_or_q.input))
    if not params[1] or not _scalar_init(inits, params[0]) or not _scalar_init(inits, params[1]):
        return None
    if numpy_helper.to_array(inits[params[1]]).dtype.name not in ("uint8", "int8"):
        return None
    return params[:2]


class _OrtTypes:
    """The 8-bit type ONNX Runtime's x86 optimizer runs each quantized tensor in. Its
    QDQS8ToU8 rewrite turns an int8 Q -> DQ pair into uint8 when the Q feeds only that DQ and
    the DQ only one node (ORT first gives every consumer its own DQ), and a lone int8 DQ of
    a constant into uint8 when the constant leaves [-64, 64] and no MatMul/Conv/Gemm reads
    it. Its QDQ selectors then fuse a group only where the types agree, so int8 groups with a
    shared activation stay in float. (Numerically the shift by 128 matters only where a
    kernel rounds a float sum: QLinearAdd, QLinearSoftmax's saturation.)"""

    def __init__(self, graph, inits, producers, consumers, outputs):
        self.inits, self.producers = inits, producers
        readers = {}
        for node in graph.node:
            for name in node.input:
                readers.setdefault(name, []).append(node)
        self.readers = readers
        self.converted = set()  # Q output names whose pair runs as uint8
        for q in graph.node:
            if q.op_type != "QuantizeLinear" or q.domain not in ("", "ai.onnx"):
                continue
            zp = self._zp(q)
            if zp is None or zp.dtype.name != "int8" or q.output[0] in outputs:
                continue
            if consumers[q.output[0]] != 1:
                continue
            (dq,) = readers.get(q.output[0], [None])
            if dq is None or dq.op_type != "DequantizeLinear" or dq.output[0] in outputs:
                continue
            dzp = self._zp(dq)
            if (
                dzp is None
                or dzp.dtype.name != "int8"
                or int(dzp.reshape(-1)[0]) != int(zp.reshape(-1)[0])
            ):
                continue
            if consumers[dq.output[0]] == 1:
                self.converted.add(q.output[0])

    def _zp(self, node):
        name = node.input[2] if len(node.input) > 2 else ""
        if not name or name not in self.inits or _in_file(self.inits[name]):
            return None
        value = numpy_helper.to_array(self.inits[name])
        return value if value.size == 1 else None

    def of_dq(self, dq):
        """The type ORT runs a DequantizeLinear's input in."""
        zp = self._zp(dq)
        if zp is None:
            return None
        if zp.dtype.name != "int8":
            return zp.dtype.name
        source = self.producers.get(dq.input[0])
        if source is not None and source.op_type == "QuantizeLinear":
            return "uint8" if dq.input[0] in self.converted else "int8"
        if dq.input[0] in self.inits and not _in_file(self.inits[dq.input[0]]):
            readers = {n.op_type for n in self.readers.get(dq.output[0], [])}
            values = numpy_helper.to_array(self.inits[dq.input[0]])
            wide = values.size and (int(values.min()) < -64 or int(values.max()) > 64)
            if wide and not readers & {"MatMul", "Conv", "Gemm"}:
                return "uint8"
        return "int8"

    def of_q(self, q):
        zp = self._zp(q)
        if zp is None:
            return None
        if zp.dtype.name != "int8":
            return zp.dtype.name
        return "uint8" if q.output[0] in self.converted else "int8"


def _fuse_elementwise(graph, inits, producers, consumers, outputs, opset, ort_types, memo):
    """DQ -> Add/AveragePool -> Q into QLinearAdd/QLinearAveragePool (com.microsoft), as ONNX
    Runtime's QDQ selectors do: every quantized input from a per-tensor DequantizeLinear, the
    op's output read only by one per-tensor QuantizeLinear, all of one 8-bit type."""
    replace, drop = {}, set()
    for q in graph.node:
        if q.op_type != "QuantizeLinear" or q.domain not in ("", "ai.onnx"):
            continue
        if any(a.name in ("block_size", "output_dtype", "axis") for a in q.attribute):
            continue
        core = producers.get(q.input[0])
        if core is None or core.op_type not in _ELEMENTWISE or core.domain not in ("", "ai.onnx"):
            continue
        if consumers[q.input[0]] != 1 or q.input[0] in outputs or id(core) in drop:
            continue
        fused_type, quantized = _ELEMENTWISE[core.op_type]
        if len(core.input) != len(quantized) or any(a.name == "axis" for a in q.attribute):
            continue
        y_params = _scalar_params(inits, q)
        groups = []
        for i in quantized:
            dq = producers.get(core.input[i])
            if dq is None or dq.op_type != "DequantizeLinear" or dq.domain not in ("", "ai.onnx"):
                break
            params = _scalar_params(inits, dq)
            if params is None:
                break
            groups.append([dq.input[0], *params])
        if y_params is None or len(groups) != len(quantized):
            continue
        stored = {numpy_helper.to_array(inits[g[2]]).dtype.name for g in groups}
        if stored != {numpy_helper.to_array(inits[y_params[1]]).dtype.name}:
            continue
        # The types ONNX Runtime runs them in must agree too (int8 ones it made uint8).
        run_as = {ort_types.of_dq(producers[core.input[i]]) for i in quantized}
        if run_as != {ort_types.of_q(q)}:
            continue
        shifted = stored == {"int8"} and run_as == {"uint8"}
        # int8 groups with a constant operand (a bias, the + 1 of GELU) stay in float in ONNX
        # Runtime (measured on MiniLM: its constant folding takes the DQ of the constant).
        if stored == {"int8"} and any(
            _is_constant(producers[core.input[i]].input[0], producers, inits, memo)
            for i in quantized
        ):
            continue
        if core.op_type == "Softmax" and opset < 13:
            continue  # the flattening softmax: left to the float form
        inputs = [name for g in groups for name in g] + y_params
        fused = helper.make_node(fused_type, inputs, [q.output[0]], domain="com.microsoft",
                                 name=f"{core.name or q.output[0]}_qlinear")  # fmt: skip
        fused.attribute.extend(a for a in core.attribute)
        if core.op_type == "Softmax":
            fused.attribute.append(helper.make_attribute("opset", opset))
        if shifted:  # computed by ORT on the uint8 values (+ 128): QLinearAdd/Softmax round so
            fused.attribute.append(helper.make_attribute("webnn_from_qdq", 1))
        replace[id(q)] = fused
        drop.add(id(core))
    return replace, drop


def fuse_qdq(model):
    """Rewrite DQ->Conv/MatMul->Q triples of the top-level graph in place (and the
    element-wise groups of _ELEMENTWISE); returns the count."""
    graph = model.graph
    matched = _WellFormed(graph)
    inits = {t.name: t for t in graph.initializer}
    _constant_nodes_as_inits(matched, inits)
    producers = _producers(matched)
    memo = {}
    consumers = _consumer_counts(graph)  # every reader counts, a malformed one too
    outputs = {vi.name for vi in graph.output}
    ort_types = _OrtTypes(matched, inits, producers, consumers, outputs)
    replace, drop = {}, set()
    for q in matched.node:
        if q.op_type != "QuantizeLinear" or q.domain not in ("", "ai.onnx"):
            continue
        if any(a.name in ("block_size", "output_dtype") for a in q.attribute):
            continue
        core = producers.get(q.input[0])
        if core is None or core.op_type not in ("Conv", "MatMul") or consumers[q.input[0]] != 1:
            continue
        if core.domain not in ("", "ai.onnx") or id(core) in drop:
            continue
        dq_x = producers.get(core.input[0])
        dq_w = producers.get(core.input[1])
        if dq_x is None or dq_w is None:
            continue
        if dq_x.op_type != "DequantizeLinear" or dq_w.op_type != "DequantizeLinear":
            continue
        x_params = list(dq_x.input[1:3]) + [""] * (3 - len(dq_x.input))
        w_params = list(dq_w.input[1:3]) + [""] * (3 - len(dq_w.input))
        y_params = list(q.input[1:3]) + [""] * (3 - len(q.input))
        if not (_scalar_init(inits, x_params[0]) and _scalar_init(inits, y_params[0])):
            continue
        if not _is_constant(dq_w.input[0], producers, inits, memo) or w_params[0] not in inits:
            continue
        if not x_params[1] or not y_params[1] or not w_params[1]:
            continue  # zero points are needed to know the integer types
        x_type, y_type = ort_types.of_dq(dq_x), ort_types.of_q(q)
        # ONNX Runtime's selectors: input and output of one type as its S8-to-U8 rewrite left
        # them, and on x86 no int8 input at all (its QDQIsInt8Allowed is false there: YOLOv8n
        # int8-QDQ keeps 50 of its 57 convolutions in float); those groups run in float.
        if x_type != y_type or x_type != "uint8":  # 16-bit, 4-bit, float8: left in float
            continue
        bias, float_bias = "", None
        if core.op_type == "Conv" and len(core.input) > 2 and core.input[2]:
            dq_b = producers.get(core.input[2])
            if core.input[2] in inits:  # an initializer or a Constant node's value
                if _in_file(inits[core.input[2]]):
                    continue
                float_bias = numpy_helper.to_array(inits[core.input[2]])  # quantized below
            elif (
                dq_b is None
                or dq_b.op_type != "DequantizeLinear"
                or dq_b.input[0] not in inits
                or _in_file(inits[dq_b.input[0]])
                or (numpy_helper.to_array(inits[dq_b.input[0]]).dtype.name != "int32")
            ):
                continue
            else:
                bias = dq_b.input[0]
        if _in_file(inits[w_params[0]]):
            continue
        w_scale = numpy_helper.to_array(inits[w_params[0]])
        if core.op_type == "MatMul" and w_scale.size != 1:
            w_axis = next((a.i for a in dq_w.attribute if a.name == "axis"), 1)
            if w_axis not in (1, -1):
                continue
        if core.op_type == "Conv" and w_scale.size != 1:
            w_axis = next((a.i for a in dq_w.attribute if a.name == "axis"), 1)
            if w_axis != 0:
                continue
        name = core.name or q.output[0]
        if float_bias is not None:
            x_scale = numpy_helper.to_array(inits[x_params[0]])
            q_bias = _ort_quantized_bias(float_bias, x_scale, w_scale)
            if q_bias is None:
                continue
            bias = f"{name}_webnn_bias_int32"
            graph.initializer.append(numpy_helper.from_array(q_bias, bias))
            inits[bias] = graph.initializer[-1]
        if core.op_type == "Conv":
            fused = helper.make_node(
                "QLinearConv",
                [dq_x.input[0], *x_params[:2], dq_w.input[0], *w_params[:2], *y_params[:2]]
                + ([bias] if bias else []),
                [q.output[0]],
                name=f"{name}_qlinear",
            )
            fused.attribute.extend(core.attribute)
        else:
            fused = helper.make_node(
                "QLinearMatMul",
                [dq_x.input[0], *x_params[:2], dq_w.input[0], *w_params[:2], *y_params[:2]],
                [q.output[0]],
                name=f"{name}_qlinear",
            )
        # Marks an int8 activation that ONNX Runtime's optimizer runs as uint8 (its u8s8
        # kernels: ops/quantization.py _u8_offset); int8 pairs it keeps run s8s8, exact.
        if x_type == "uint8":
            fused.attribute.append(helper.make_attribute("webnn_from_qdq", 1))
        replace[id(q)] = fused
        drop.add(id(core))
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 1)
    more, more_drop = _fuse_elementwise(
        matched, inits, producers, consumers, outputs, opset, ort_types, memo
    )
    replace.update(more)
    drop |= more_drop
    if not replace:
        return 0
    if more and not any(o.domain == "com.microsoft" for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    nodes = []
    for node in graph.node:
        if id(node) in drop:
            continue
        nodes.append(replace.get(id(node), node))
    del graph.node[:]
    graph.node.extend(nodes)
    return len(replace)
