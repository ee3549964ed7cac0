"""An InferenceSession's model cut at a host node: graph, host node, then the rest (host_cuts.py).

The first graph and the host node are fixed for one signature of the session's inputs; the
rest is a model of its own, run by an inner InferenceSession on the same context, so that it
is compiled once per shape of its inputs (NonMaxSuppression's selection count varies per image)
and may itself be cut at a later host node.
"""

import threading

import numpy as np

from . import held
from .host_cuts import names_read, run_host_node


def _bool_names(proto, names):
    """Which of `names` ONNX types as bool (a WebNN graph returns them as uint8)."""
    import onnx

    wanted = set(names)
    try:
        inferred = onnx.shape_inference.infer_shapes(proto)
    except (onnx.shape_inference.InferenceError, ValueError, RuntimeError):  # best effort
        return set()
    infos = list(inferred.graph.value_info) + list(inferred.graph.input)
    return {
        vi.name
        for vi in infos
        if vi.name in wanted and vi.type.tensor_type.elem_type == onnx.TensorProto.BOOL
    }


class SegmentedModel:
    """Runs like session._Compiled: ``input_desc`` names the feeds, ``run`` returns outputs."""

    def __init__(self, first, cut, proto, make_session):
        self.first = first  # _Compiled: the graph up to the host node
        self.graph = first.graph  # what InferenceSession.compiled_graphs lists
        self.input_desc = first.input_desc
        self.cut = cut
        self.proto = proto  # the model as imported (functions inlined), for its outputs
        self._make_session = make_session  # ModelProto -> InferenceSession on our context
        self._opsets = {e.domain: int(e.version) for e in proto.opset_import}
        self._bools = _bool_names(proto, cut.exported)
        later = cut.after
        read = []
        for node in later:
            read += names_read(node)
        self._rest_reads = list(dict.fromkeys(read))
        self._rest = None
        self._lock = threading.Lock()

    def run(self, feed: dict) -> dict:
        values = dict(self.cut.constants)
        for name, arr in self.first.run(feed).items():
            values[name] = arr.astype(np.bool_) if name in self._bools else arr
            if name in self.cut.held:  # int16 held as int32, float8 as codes, ...
                values[name] = held.from_holding(arr, self.cut.held[name])
        if self.cut.runs_node:
            values.update(run_host_node(self.cut.node, self._opsets, values))
        model = self._rest_proto(values)
        names = [vi.name for vi in model.graph.input]
        rest_feed = {n: values[n] for n in names}
        result = {}
        if not model.graph.output:
            pass  # every graph output was ready before the cut (below)
        elif any(0 in np.shape(v) for v in rest_feed.values()):
            # Nothing selected: the rest holds empty tensors, which WebNN operands cannot.
            # onnx's reference evaluates it (on no elements: cheap), with ONNX's semantics.
            outputs = self._rest_reference(model).run(None, rest_feed)
            result = dict(zip(self._rest_outputs, (np.asarray(o) for o in outputs)))
        else:
            outputs = self._rest_session(model).run(None, rest_feed)
            result = dict(zip(self._rest_outputs, outputs))
        # Graph outputs computed before the cut (a classifier's string labels beside the
        # probabilities a ZipMap reads) are returned as they are, not through the rest.
        return {vi.name: result[vi.name] if vi.name in result else values[vi.name]
                for vi in self.proto.graph.output}  # fmt: skip

    def _rest_proto(self, values):
        with self._lock:
            if self._rest is None:
                self._rest = {"model": self._rest_model(values)}
            return self._rest["model"]

    def _rest_session(self, model):
        with self._lock:
            if "session" not in self._rest:
                self._rest["session"] = self._make_session(model, self.cut.fold)
            return self._rest["session"]

    def _rest_reference(self, model):
        from onnx.reference import ReferenceEvaluator

        with self._lock:
            if "reference" not in self._rest:
                self._rest["reference"] = ReferenceEvaluator(model)
            return self._rest["reference"]

    def _rest_model(self, values):
        """The nodes after the host node as a model: run-time values as inputs (of unknown
        shape: the inner session compiles per shape), values known at import as initializers."""
        from onnx import helper, numpy_helper

        inputs, initializers = [], []
        produced = set()
        for node in self.cut.after:
            produced.update(o for o in node.output if o)
        # Outputs already known before the rest runs are passed around it (a string label
        # output would be a string input of the rest, which a WebNN graph cannot take).
        outputs = [vi for vi in self.proto.graph.output
                   if vi.name in produced or vi.name not in values]  # fmt: skip
        self._rest_outputs = [vi.name for vi in outputs]
        for name in self._rest_reads:
            if name not in values:
                continue  # computed by the rest itself
            if name in self.cut.constants:
                initializers.append(numpy_helper.from_array(np.asarray(values[name]), name))
            else:
                elem = helper.np_dtype_to_tensor_dtype(np.asarray(values[name]).dtype)
                inputs.append(helper.make_tensor_value_info(name, elem, None))
        graph = helper.make_graph(
            list(self.cut.after),
            f"{self.proto.graph.name}_after_{self.cut.node.op_type}",
            inputs,
            outputs,
            initializer=initializers,
        )
        model = helper.make_model(graph, opset_imports=list(self.proto.opset_import))
        model.ir_version = self.proto.ir_version
        return model
