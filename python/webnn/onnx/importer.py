"""Walks an ONNX graph and emits WebNN builder calls, folding what is known at import.

A value in the environment is either a numpy array (known at import: initializers,
Constant nodes, inputs turned into constants, and everything computed from those only) or an
MLOperand (computed at run time). Converters (ops/) receive a NodeContext and return one
value per node output; a node whose inputs are all numpy arrays is evaluated with numpy
instead (folding.py), so shape sub-graphs (Shape -> Gather -> Concat -> Reshape) disappear.
"""

import warnings
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from . import folding, held
from .errors import Float64Warning, OnnxImportError
from .host_cuts import is_host_cut, plan_cut, reads_host_tensor
from .host_outputs import HostOutput, StringInput, pass_through, string_vocabulary
from .model_io import read_model, sparse_to_numpy, tensor_to_numpy
from .ops import TABLE, lookup
from .sequence_values import NON_TENSOR, OptionalValue, SequenceValue, element_name
from .types import DOUBLE as DOUBLE_TYPE
from .types import FLOAT16 as FLOAT16_TYPE
from .types import (
    NUMPY_TO_WEBNN,
    ONNX_TO_NUMPY,
    ONNX_TO_WEBNN,
    double_as_float32,
    onnx_type_name,
)

STRING_TYPE = 8  # TensorProto.STRING
_MISSING = object()  # not given (input_shapes=)

# Import(float16=...): how float16 values are computed (Importer.__init__ says what each does).
FLOAT16_MODES = ("float32", "float16")
# Import(float64=...): "float32" holds double values as float32 (Float64Warning), "error"
# refuses them; WebNN has no float64 type either way.
FLOAT64_MODES = ("float32", "error")


@dataclass
class TensorInfo:
    """One graph input or output, as ONNX declares it and as the WebNN graph holds it."""

    name: str  # the ONNX name
    graph_name: str  # the name in the WebNN graph (same as name unless renamed for saving)
    onnx_type: str  # 'tensor(float)', as onnxruntime reports it
    elem_type: int  # ONNX TensorProto.DataType
    shape: list  # ONNX shape: int, str (a named dim) or None (unknown), as onnxruntime reports
    webnn_shape: list = field(default_factory=list)  # ints and {"name", "maxSize"} dicts
    webnn_dtype: str = ""  # the WebNN data type (bool is held as uint8)
    numpy_dtype: object = None  # the numpy dtype ONNX Runtime would return


@dataclass
class ModelMetadata:
    producer_name: str = ""
    producer_version: str = ""
    domain: str = ""
    model_version: int = 0
    doc_string: str = ""
    graph_name: str = ""
    graph_description: str = ""
    custom_metadata_map: dict = field(default_factory=dict)


@dataclass
class ImportedModel:
    """The result of import_model: the builder's outputs plus what a session needs to know."""

    builder: object
    inputs: list  # TensorInfo of the run-time inputs of the WebNN graph
    outputs: list  # TensorInfo of every ONNX graph output
    operands: dict  # graph output name -> MLOperand, ready for builder.build / builder.save
    metadata: ModelMetadata
    opsets: dict  # domain ('' for the standard one) -> version
    folded_inputs: dict  # ONNX input name -> the numpy value it was fixed to (constants=)
    dynamic_dims: dict  # dynamic dimension name -> maxSize
    # With host_cuts=True: where the import stopped at a node that runs on the host (then
    # `outputs` are the values the rest of the model reads, not the ONNX graph outputs).
    host_cut: object = None
    # graph output name -> HostOutput (host_outputs.py): strings / maps finished on the host
    host_outputs: dict = field(default_factory=dict)
    # graph input name -> StringInput: string inputs the session encodes as int32 indices
    host_inputs: dict = field(default_factory=dict)
    # graph output name -> how a sequence / optional output is made of graph outputs: a list
    # (a sequence) of structures, ("optional", structure or None), or a graph output's name
    composite_outputs: dict = field(default_factory=dict)
    # graph input name -> the graph input names of a sequence input's elements
    sequence_inputs: dict = field(default_factory=dict)

    def build(self):
        if not self.operands and self.composite_outputs:
            raise OnnxImportError(
                "every graph output is an empty sequence or optional: there is no tensor for a "
                "WebNN graph to compute (InferenceSession returns them without one)"
            )
        return self.builder.build(self.operands)


def _dim_list(type_proto):
    dims = []
    if type_proto.tensor_type.HasField("shape"):
        for d in type_proto.tensor_type.shape.dim:
            if d.HasField("dim_value") and d.dim_value > 0:
                dims.append(int(d.dim_value))
            elif d.HasField("dim_param") and d.dim_param:
                dims.append(d.dim_param)
            else:
                dims.append(None)
        return dims
    return None


def _valid_dyn_name(name):
    import re

    text = re.sub(r"[^A-Za-z0-9_]", "_", str(name))
    if not text or text[0].isdigit():
        text = "d_" + text
    return text


class SharedWeights:
    """What every import of one model computes alike, kept by an InferenceSession so that its
    graphs for other input shapes (one per shape signature) reuse it instead of importing the
    weights again: the prepared model (functions inlined, QDQ triples fused), the initializers
    as read-only numpy arrays, and the values of top-level nodes folded from initializers and
    Constant nodes alone (dequantized or transposed weights, ...), which no input shape or
    folded input changes. The context's constant store (src/backends/constant_store.h) then
    shares the bytes and the packed forms between those graphs.

    Thread-safe in the sense that matters here: concurrent imports may compute one value twice,
    never differently.
    """

    def __init__(self):
        self.prepared = None  # the model after _inline_functions and QDQ fusion
        self.initializers = {}  # name -> read-only array
        self.folded = {}  # node output name -> read-only array (weight-only values)
        self.loads = 0  # imports that read or folded weights themselves (one per session)
        self.widened = set()  # names of float16 values held as float32 (Importer.widen)
        self.narrowed = {}  # names of double values held as float32, first seen first (narrow)
        self.clamped_doubles = {}  # name -> how many finite doubles beyond float32 were clamped
        self.float64_warned = False  # the Float64Warning is given once per SharedWeights
        self.caller_frames = 0  # frames between the user's call and load (the warning's line)
        self.narrowed_arrays = {}  # Importer.narrow's float32 copies of double weights

    def entries(self):
        return len(self.initializers) + len(self.folded)

    def nbytes(self):
        return sum(a.nbytes for a in self.initializers.values()) + sum(
            a.nbytes for a in self.folded.values() if a is not None
        )


def _read_only(array):
    if isinstance(array, np.ndarray) and array.flags.writeable:
        array.flags.writeable = False
    return array


class NodeContext:
    """What a converter sees: the node, its attributes, inputs and helpers."""

    def __init__(self, importer, node, inputs, opset):
        self.importer = importer
        self.node = node
        self.inputs = inputs
        self.opset = opset
        self.b = importer.builder
        self._attrs = None
        # the ONNX type of each input WebNN lacks (held.py), None for the others
        self.elems = [None] * len(inputs)

    # -- attributes -------------------------------------------------------------------------
    @property
    def attrs(self):
        if self._attrs is None:
            from onnx import helper

            attrs = {}
            for a in self.node.attribute:
                if a.ref_attr_name:
                    self.fail(f"attribute '{a.name}' refers to a function attribute")
                value = helper.get_attribute_value(a)
                if isinstance(value, bytes):
                    value = value.decode("utf-8")
                elif isinstance(value, list) and value and isinstance(value[0], bytes):
                    value = [v.decode("utf-8") for v in value]
                attrs[a.name] = value
            self._attrs = attrs
        return self._attrs

    def attr(self, name, default=None):
        return self.attrs.get(name, default)

    # -- inputs -----------------------------------------------------------------------------
    def has(self, i):
        return i < len(self.inputs) and self.inputs[i] is not None

    def is_const(self, i):
        return self.has(i) and isinstance(self.inputs[i], np.ndarray)

    def value(self, i):
        return self.inputs[i] if self.has(i) else None

    def x(self, i):
        """Input i as an MLOperand (constants are materialized once), or None when absent."""
        if not self.has(i):
            return None
        return self.importer.operand(self.inputs[i], self)

    def c(self, i, default=None, what=None):
        """Input i as a numpy array: it must be known at import."""
        if not self.has(i):
            return default
        v = self.inputs[i]
        if not isinstance(v, np.ndarray):
            self.needs_constant = self.node.input[i]
            self.fail(
                f"input {i} ('{self.node.input[i]}'{', ' + what if what else ''}) must be known "
                "at import (a constant, or computed from constants and static shapes); it is "
                "computed at run time here. Fix the inputs it depends on with input_shapes=, "
                "free_dims= or constants="
            )
        return v

    def shape(self, i):
        v = self.inputs[i]
        if isinstance(v, np.ndarray):
            return list(v.shape)
        return self.b.operand_shape(v)

    def static_shape(self, i):
        shape = self.shape(i)
        for axis, d in enumerate(shape):
            if not isinstance(d, int):
                self.fail(
                    f"input {i} ('{self.node.input[i]}') has dynamic dimension {d['name']!r} on "
                    f"axis {axis}, where this operator needs a static size; fix it with "
                    "free_dims= or input_shapes="
                )
        return shape

    def rank(self, i):
        return len(self.shape(i))

    def dtype(self, i):
        v = self.inputs[i]
        if isinstance(v, np.ndarray):
            if v.dtype == np.bool_:
                return "uint8"
            return NUMPY_TO_WEBNN.get(v.dtype, str(v.dtype))
        return self.b.operand_data_type(v)

    def np_dtype(self, i):
        v = self.inputs[i]
        if isinstance(v, np.ndarray):
            return v.dtype
        return np.dtype(self.importer.webnn_numpy(self.b.operand_data_type(v)))

    @property
    def n_inputs(self):
        return len(self.inputs)

    def const(self, value, dtype):
        """A constant operand of a WebNN dtype (scalars broadcast)."""
        from .types import WEBNN_TO_NUMPY

        return self.importer.operand(np.asarray(value, dtype=WEBNN_TO_NUMPY[dtype]), self)

    # -- errors -----------------------------------------------------------------------------
    def describe(self):
        node = self.node
        named = [o for o in node.output if o]
        if node.name:
            who = f"'{node.name}'"
        elif named:
            who = f"with output '{named[0]}'"
        else:  # a malformed node: no name, no named output (its inputs identify it)
            who = f"without name or output, reading {list(node.input)}"
        domain = node.domain or "ai.onnx"
        return f"node {who} ({domain}::{node.op_type}, opset {self.opset})"

    def fail(self, reason):
        error = OnnxImportError(f"{self.describe()}: {reason}")
        # The value that had to be known at import (a graph input may be given as constants=).
        error.needs_constant = getattr(self, "needs_constant", None)
        raise error


def schema_function(op_type, opset):
    """The FunctionProto by which the ONNX standard defines op_type at opset, or None (not a
    function, or one that depends on the input types)."""
    from onnx import defs

    try:
        schema = defs.get_schema(op_type, opset, "")
    except defs.SchemaError:
        return None
    if not schema.has_function:
        return None
    import onnx

    body = schema.get_function_with_opset_version(opset) or schema.function_body
    if isinstance(body, bytes):
        body = onnx.FunctionProto.FromString(body)
    return body if body is not None and len(body.node) else None


def _add_attribute_defaults(graph, op_types, opset):
    """Nodes of op_types (standard operators about to be inlined from their schema's function)
    get the schema's default for every attribute they leave out (e.g. HannWindow's
    output_datatype): onnx's inliner drops a reference to an attribute the node does not set."""
    from onnx import defs

    for node in graph.node:
        if node.domain in ("", "ai.onnx") and node.op_type in op_types:
            schema = defs.get_schema(node.op_type, opset, "")
            have = {a.name for a in node.attribute}
            for name, attr in schema.attributes.items():
                default = attr.default_value
                if name not in have and default is not None and default.type:
                    added = node.attribute.add()
                    added.CopyFrom(default)
                    added.name = name
        for a in node.attribute:
            for sub in [a.g] if a.type == a.GRAPH else list(a.graphs):
                _add_attribute_defaults(sub, op_types, opset)


class Scope(dict):
    """Values visible in one graph; sub-graphs (If/Loop/Scan bodies) see their parents'."""

    def __init__(self, parent=None):
        super().__init__()
        self.parent = parent

    def lookup(self, name):
        scope = self
        while scope is not None:
            if name in scope:
                return scope[name]
            scope = scope.parent
        return None

    def knows(self, name):
        scope = self
        while scope is not None:
            if name in scope:
                return True
            scope = scope.parent
        return False


def _run_time(value):
    """Whether a value is a run-time tensor (an operand: not folded, not a sequence)."""
    return value is not None and not isinstance(value, (np.ndarray, *NON_TENSOR, HostOutput))


def _refuse(ctx, message):
    """Raise the importer's error: naming the node through `ctx` when there is one."""
    if ctx is not None:
        ctx.fail(message)
    raise OnnxImportError(message)


class Importer:
    def __init__(self, builder, proto, base_dir, *, free_dims, input_shapes, constants,
                 max_sizes, rename, weights=None, float16="float32",
                 float64="float32", host_cuts=False):  # fmt: skip
        if float16 not in FLOAT16_MODES:
            raise OnnxImportError(f"float16={float16!r}: one of {', '.join(FLOAT16_MODES)}")
        if float64 not in FLOAT64_MODES:
            raise OnnxImportError(f"float64={float64!r}: one of {', '.join(FLOAT64_MODES)}")
        self.float64 = float64
        # names of double values held as float32 (Importer.narrow)
        self.narrowed = weights.narrowed if weights is not None else {}
        self.clamped_doubles = weights.clamped_doubles if weights is not None else {}
        self.builder = builder
        # "float32": float16 values are computed in float32 and rounded to float16 where the
        # graph casts to float16 and at its outputs, as ONNX Runtime's CPU provider does;
        # "float16": every float16 operator's result is rounded (ONNX's definition).
        self.float16 = float16
        # names of float16 values held as float32 ("float32" mode)
        self.widened = weights.widened if weights is not None else set()
        self._readers = None  # Importer.readers' table, made on first use
        # id(operand) -> (operand, source): Expand's results and the operand they broadcast,
        # for converters that do less work on the source (scatter_reduce.py: one index per
        # row, a GNN's expanded edge index); the operand is held so that its id stays unique.
        self.expanded = {}
        self.weights = weights  # a SharedWeights, or None (a one-off import)
        self._invariant = set()  # top-level value names computed from weights alone
        self.proto = proto
        self.base_dir = base_dir
        self.free_dims = dict(free_dims or {})
        self.input_shapes = {  # None: an optional input without an element
            k: None if v is None else list(v) for k, v in (input_shapes or {}).items()
        }
        self.constants = dict(constants or {})
        self.max_sizes = dict(max_sizes or {})
        self.rename = rename or (lambda name: name)
        self.opsets = {}
        for entry in proto.opset_import:
            domain = entry.domain
            if domain == "ai.onnx":
                domain = ""
            self.opsets[domain] = int(entry.version)
        self._const_cache = {}  # id(array) -> (array, MLOperand)
        # id(double array) -> (array, its float32 copy); shared by a session's imports, whose
        # graphs then read the same float32 weights (the constant store shares them)
        self._narrowed_arrays = weights.narrowed_arrays if weights is not None else {}
        self._local_narrowed = {}  # the same for this import's own arrays
        self._leaves = set()  # ids of operands that are graph inputs or constants
        self._keep = []
        self.dynamic_dims = {}
        self.dynamic_origin = {}  # dynamic dim name -> (graph input, axis) it comes from
        # Stop at the first value-dependent-size node reading run-time values (host_cuts.py).
        self.host_cuts = host_cuts
        self.cut = None
        # run-time value name -> the ONNX type WebNN lacks that it holds (held.py)
        self.held = {}

    # -- constants --------------------------------------------------------------------------
    def webnn_numpy(self, dtype):
        from .types import WEBNN_TO_NUMPY

        if dtype not in WEBNN_TO_NUMPY:
            raise OnnxImportError(f"WebNN data type {dtype} has no numpy equivalent here")
        return WEBNN_TO_NUMPY[dtype]

    def operand(self, value, ctx=None):
        if isinstance(value, np.generic):  # a numpy scalar from arithmetic on 0-d arrays
            value = np.asarray(value)
        if not isinstance(value, np.ndarray):
            if isinstance(value, StringInput):
                _refuse(ctx, f"reads {value.where}, a string tensor WebNN cannot hold (only "
                        "LabelEncoder / CategoryMapper with string keys can read one)")  # fmt: skip
            if isinstance(value, HostOutput):
                _refuse(ctx, f"reads a {value.kind} (from {value.where}), which WebNN cannot "
                        "hold: such values are made on the host and can only be graph outputs")  # fmt: skip
            if isinstance(value, NON_TENSOR):
                kind = "a sequence" if isinstance(value, SequenceValue) else "an optional"
                _refuse(ctx, f"reads {kind} where a tensor is needed (take an element with "
                        "SequenceAt / OptionalGetElement)")  # fmt: skip
            return value
        hit = self._const_cache.get(id(value))
        if hit is not None and hit[0] is value:
            return hit[1]
        array = value
        if array.dtype == np.bool_:
            array = array.astype(np.uint8)
        if array.dtype == np.float64:  # a double constant made by a converter
            array = self.narrow(ctx.node.output[0] if ctx is not None else "a constant", array)
        if held.elem_of_array(array) is not None:  # int16, bfloat16, float8 codes, ...
            array = held.to_holding(array)
        if array.dtype not in NUMPY_TO_WEBNN:
            _refuse(ctx, f"a {array.dtype} tensor is needed at run time; WebNN has no "
                    f"{array.dtype} type")  # fmt: skip
        if 0 in array.shape:
            _refuse(ctx, f"an empty tensor (shape {list(array.shape)}) is needed at run time; "
                    "WebNN operands cannot have a 0-sized dimension")  # fmt: skip
        if not array.flags.c_contiguous:
            array = np.require(array, requirements="C")
        op = self.builder.constant(array)
        self._const_cache[id(value)] = (value, op)
        self._leaves.add(id(op))
        self._keep.append(op)
        return op

    # -- inputs -----------------------------------------------------------------------------
    def _input_info(self, vi, output=False):
        if not vi.type.HasField("tensor_type") and output and not vi.type.HasField("sequence_type"):
            return TensorInfo(vi.name, self.rename(vi.name), "tensor(unknown)", 0, None)
        if not vi.type.HasField("tensor_type") and output:
            raise OnnxImportError(
                f"graph output '{vi.name}' is declared a sequence, but the node making it gives "
                "a tensor"
            )
        if not vi.type.HasField("tensor_type"):
            raise OnnxImportError(
                f"graph input '{vi.name}' is not a tensor, a sequence or an optional (map "
                "inputs are not supported)"
            )
        elem = vi.type.tensor_type.elem_type
        shape = _dim_list(vi.type)
        info = TensorInfo(
            name=vi.name,
            graph_name=self.rename(vi.name),
            onnx_type=f"tensor({onnx_type_name(elem)})",
            elem_type=elem,
            shape=list(shape) if shape is not None else None,
        )
        info.numpy_dtype = ONNX_TO_NUMPY.get(elem)
        if elem in held.HELD:
            info.numpy_dtype = held.numpy_type(elem)
        return info

    def _resolve_shape(self, info):
        name = info.name
        if name in self.input_shapes:
            given = self.input_shapes[name]
            if info.shape is not None and len(given) != len(info.shape):
                raise OnnxImportError(
                    f"input_shapes['{name}'] has rank {len(given)} but the model declares rank "
                    f"{len(info.shape)} ({info.shape})"
                )
            for axis, (g, d) in enumerate(zip(given, info.shape or given)):
                if isinstance(d, int) and isinstance(g, int) and g != d:
                    raise OnnxImportError(
                        f"input_shapes['{name}'] axis {axis} is {g}, but the model fixes it to {d}"
                    )
            dims = list(given)
        elif info.shape is None:
            raise OnnxImportError(
                f"graph input '{name}' has no declared shape; give it with input_shapes="
            )
        else:
            dims = list(info.shape)
        out = []
        for axis, d in enumerate(dims):
            if isinstance(d, (int, np.integer)) and not isinstance(d, bool):
                if d < 0:
                    raise OnnxImportError(
                        f"graph input '{name}' axis {axis} has size {d}; sizes are >= 0 (an "
                        "input with a 0-sized axis has no elements and becomes a constant)"
                    )
                out.append(int(d))
            elif isinstance(d, dict):
                out.append({"name": d["name"], "maxSize": int(d.get("maxSize", d.get("max_size")))})
            elif isinstance(d, str) and d in self.free_dims:
                out.append(int(self.free_dims[d]))
            elif isinstance(d, str) and d in self.max_sizes:
                dyn = _valid_dyn_name(d)
                self.dynamic_dims[dyn] = int(self.max_sizes[d])
                self.dynamic_origin.setdefault(dyn, (name, axis))
                out.append({"name": dyn, "maxSize": int(self.max_sizes[d])})
            else:
                what = f"named {d!r}" if isinstance(d, str) else "unnamed"
                hint = (
                    f"free_dims={{{d!r}: N}}, max_sizes={{{d!r}: N}} (dynamic) or "
                    if isinstance(d, str)
                    else ""
                )
                raise OnnxImportError(
                    f"graph input '{name}' axis {axis} is a free ({what}) dimension; fix it with "
                    f"{hint}input_shapes={{{name!r}: [...]}}"
                )
        return out

    # -- the graph --------------------------------------------------------------------------
    def check_supported(self):
        """One error listing every operator without a converter, before building anything."""
        counts = Counter()

        def walk(graph):
            for node in graph.node:
                domain = "" if node.domain in ("", "ai.onnx") else node.domain
                if lookup(domain, node.op_type) is None:
                    counts[(domain or "ai.onnx", node.op_type, self.opsets.get(domain, 0))] += 1
                for a in node.attribute:
                    if a.type == a.GRAPH:
                        walk(a.g)
                    for g in a.graphs:
                        walk(g)

        walk(self.proto.graph)
        if counts:
            lines = [
                f"  {domain}::{op} (opset {opset}): {count} node{'s' if count > 1 else ''}"
                for (domain, op, opset), count in sorted(counts.items())
            ]
            raise OnnxImportError(
                f"the model uses {len(counts)} operator{'s' if len(counts) > 1 else ''} that "
                "webnn.onnx cannot convert:\n" + "\n".join(lines),
                unsupported=[(d, o, s, c) for (d, o, s), c in sorted(counts.items())],
            )

    def _inline_functions(self):
        """Model-local functions, and standard operators without a converter whose schema
        defines them as a function of other operators, are inlined (onnx.inliner)."""
        import onnx
        from onnx import inliner

        wanted = {}

        def walk(graph):
            for node in graph.node:
                domain = "" if node.domain in ("", "ai.onnx") else node.domain
                if domain == "" and lookup(domain, node.op_type) is None:
                    wanted.setdefault(node.op_type, None)
                for a in node.attribute:
                    for g in [a.g] if a.type == a.GRAPH else list(a.graphs):
                        walk(g)

        walk(self.proto.graph)
        local = {(f.domain, f.name) for f in self.proto.functions}
        bodies = []
        opset = self.opsets.get("", 1)
        for op_type in wanted:
            body = None if ("", op_type) in local else schema_function(op_type, opset)
            if body is None:
                continue
            function = onnx.FunctionProto()
            function.CopyFrom(body)
            function.domain, function.name = "", op_type
            bodies.append(function)
        if not self.proto.functions and not bodies:
            return
        proto = onnx.ModelProto()
        proto.CopyFrom(self.proto)
        _add_attribute_defaults(proto.graph, {f.name for f in bodies}, opset)
        proto.functions.extend(bodies)
        try:
            self.proto = inliner.inline_local_functions(proto)
        except Exception as exc:
            raise OnnxImportError(f"inlining the model's functions failed: {exc}") from exc

    def _prepare(self):
        """Functions inlined, QDQ triples fused: once per model (SharedWeights.prepared)."""
        if self.weights is not None and self.weights.prepared is not None:
            self.proto = self.weights.prepared
            return
        self._inline_functions()
        if any(node.op_type == "QuantizeLinear" for node in self.proto.graph.node):
            import onnx

            from .qdq import fuse_qdq

            proto = onnx.ModelProto()
            proto.CopyFrom(self.proto)
            if fuse_qdq(proto):
                self.proto = proto
        if self.weights is not None:
            self.weights.prepared = self.proto

    def _initializer(self, init):
        if self.weights is None:
            return self.widen(init.name, tensor_to_numpy(init, self.base_dir))
        array = self.weights.initializers.get(init.name)
        if array is None:
            array = _read_only(self.widen(init.name, tensor_to_numpy(init, self.base_dir)))
            self.weights.initializers[init.name] = array
        return array

    def double_refused(self, what):
        """The float64="error" refusal of `what` (a description naming the tensor)."""
        return OnnxImportError(
            f"{what} is a double (float64) tensor; WebNN has no float64 type. float64="
            "'float32' (the default) computes it in float32 (with a Float64Warning)"
        )

    def narrow(self, name, value):
        """A double array as float32, its name noted (float64="error": refused): for what
        reaches run time. Values folded at import stay float64 (numpy computes them in
        double, as ONNX defines), so a shape computed in double is not rounded to float32."""
        if not isinstance(value, np.ndarray) or value.dtype != np.float64:
            return value
        self.note_double(name, f"value '{name}'")
        # One float32 copy per double array: a weight read by several nodes stays one constant
        # (read-only arrays are a session's weights and weight-only folds, kept by it anyway)
        cache = self._local_narrowed if value.flags.writeable else self._narrowed_arrays
        hit = cache.get(id(value))
        if hit is None or hit[0] is not value:
            narrowed, beyond = double_as_float32(value)
            if beyond:
                self.clamped_doubles[name] = beyond
            hit = (value, _read_only(narrowed))
            cache[id(value)] = hit
        return hit[1]

    def note_double(self, name, what):
        """`name` is a double value held as float32 (operands are never double: a cast to
        double makes float32, elementwise.py); float64="error" refuses it, naming `what`."""
        if self.float64 == "error":
            raise self.double_refused(what)
        self.narrowed[name] = None

    def _refuse_declared_doubles(self):
        """float64="error": the first graph input or output declared double."""
        graph = self.proto.graph
        initializers = {t.name for t in graph.initializer}
        for kind, items in (("graph input", graph.input), ("graph output", graph.output)):
            for item in items:
                if kind == "graph input" and (item.name in initializers or item.name in
                                              self.constants):  # fmt: skip
                    continue  # a weight or a folded input: refused where used at run time
                tensor = item.type.tensor_type if item.type.HasField("tensor_type") else None
                if tensor is not None and tensor.elem_type == DOUBLE_TYPE:
                    raise self.double_refused(f"{kind} '{item.name}'")

    def readers(self, name):
        """The op types of the nodes that read value `name` (in any graph of the model), or
        None when a graph output is `name`."""
        if self._readers is None:
            readers, outputs = {}, set()

            def walk(graph):
                outputs.update(o.name for o in graph.output)
                for node in graph.node:
                    for i in node.input:
                        readers.setdefault(i, set()).add(node.op_type)
                    for a in node.attribute:
                        for g in [a.g] if a.type == a.GRAPH else list(a.graphs):
                            walk(g)

            walk(self.proto.graph)
            self._readers = (readers, outputs)
        readers, outputs = self._readers
        return None if name in outputs else readers.get(name, set())

    def widen(self, name, value):
        """In "float32" mode a float16 value (array or operand) as float32, its name noted."""
        if self.float16 != "float32" or value is None or isinstance(value, HostOutput):
            return value
        if isinstance(value, NON_TENSOR):  # its elements were widened where they were made
            return value
        if isinstance(value, np.ndarray):
            if value.dtype != np.float16:
                return value
            self.widened.add(name)
            return value.astype(np.float32)
        if (
            not isinstance(value, (list, tuple))
            and self.builder.operand_data_type(value) == "float16"
        ):
            self.widened.add(name)
            return self.builder.cast(value, "float32")
        return value

    def run(self):
        self._prepare()
        onnx_graph = self.proto.graph
        if not onnx_graph.output:  # also what zero bytes (or a cut-off file) parse as
            raise OnnxImportError("the model's graph declares no outputs: nothing to compute")
        self.check_supported()
        if self.float64 == "error":
            self._refuse_declared_doubles()
        for name in self.input_shapes:
            if name not in {vi.name for vi in onnx_graph.input}:
                raise OnnxImportError(f"input_shapes names '{name}', which is not a graph input")
        for name in self.constants:
            if name not in {vi.name for vi in onnx_graph.input}:
                raise OnnxImportError(f"constants names '{name}', which is not a graph input")
        scope = Scope()
        self._top_scope = scope
        known = self.weights.entries() if self.weights is not None else 0
        for init in onnx_graph.initializer:
            scope[init.name] = self._initializer(init)
            self._invariant.add(init.name)
        for sparse in onnx_graph.sparse_initializer:
            name = sparse.values.name
            scope[name] = self.widen(name, sparse_to_numpy(sparse, self.base_dir))
        inputs, folded, host_inputs, sequence_inputs = [], {}, {}, {}
        for vi in onnx_graph.input:
            if vi.name in scope and vi.name not in self.constants:
                continue  # an initializer listed as an input (IR < 4): a weight
            if vi.type.HasField("sequence_type") or vi.type.HasField("optional_type"):
                scope[vi.name] = self._sequence_input(vi, inputs, sequence_inputs)
                continue
            info = self._input_info(vi)
            if vi.name in self.constants:
                dtype = info.numpy_dtype or np.float32
                value = np.asarray(self.constants[vi.name], dtype=dtype)
                if info.shape is not None and len(info.shape) == value.ndim:
                    for axis, d in enumerate(info.shape):
                        if isinstance(d, int) and d != value.shape[axis]:
                            raise OnnxImportError(
                                f"constants['{vi.name}'] has shape {list(value.shape)}, but the "
                                f"model declares {info.shape}"
                            )
                elif info.shape is not None and value.ndim == 0 and len(info.shape) == 1:
                    value = value.reshape(1)  # a scalar given for a [1] input (silero's sr)
                scope[vi.name] = self.widen(vi.name, value)
                folded[vi.name] = value
                continue
            vocabulary = (
                string_vocabulary(onnx_graph, vi.name) if info.elem_type == STRING_TYPE else None
            )
            if vocabulary is not None:  # strings mapped to indices on the host (host_outputs.py)
                info.webnn_dtype = "int32"
                info.webnn_shape = self._resolve_shape(info)
                op = self.builder.input(info.graph_name, info.webnn_shape, "int32")
                self._leaves.add(id(op))
                self._keep.append(op)
                scope[vi.name] = StringInput(op, vocabulary, vi.name)
                host_inputs[info.graph_name] = scope[vi.name]
                inputs.append(info)
                continue
            if info.elem_type == DOUBLE_TYPE:  # held as float32 (refused above in "error")
                self.narrowed[vi.name] = None
                info.webnn_dtype = "float32"
            elif info.elem_type in held.HELD:  # int16 as int32, float8 as codes, ...
                info.webnn_dtype = held.holding_type(info.elem_type)
                self.held[vi.name] = info.elem_type
            elif info.elem_type not in ONNX_TO_WEBNN:
                raise OnnxImportError(
                    f"graph input '{vi.name}': type {info.onnx_type}, which WebNN cannot hold"
                )
            else:
                info.webnn_dtype = ONNX_TO_WEBNN[info.elem_type]
            info.webnn_shape = self._resolve_shape(info)
            if 0 in info.webnn_shape:
                # No elements: its value is known (CastLike's shape-only `like`), a constant.
                value = np.zeros(info.webnn_shape, info.numpy_dtype)
                scope[vi.name] = self.widen(vi.name, value)
                folded[vi.name] = value
                continue
            try:
                op = self.builder.input(info.graph_name, info.webnn_shape, info.webnn_dtype)
            except (ValueError, TypeError) as exc:
                raise OnnxImportError(f"graph input '{vi.name}': {exc}") from exc
            self._leaves.add(id(op))
            self._keep.append(op)
            scope[vi.name] = self.widen(vi.name, op)
            inputs.append(info)
        self.run_nodes(onnx_graph.node, scope)
        if self.weights is not None and self.weights.entries() > known:
            self.weights.loads += 1  # this import read weights (the first one of a session)
        outputs, operands, used, host = [], {}, set(), {}
        output_infos = list(onnx_graph.output)
        if self.cut is not None:  # the values the rest of the model reads, types as computed
            from onnx import ValueInfoProto

            output_infos = [ValueInfoProto(name=n) for n in self.cut.exported]
        composite = {}
        flat = []  # (ValueInfoProto, value): tensors, sequence / optional outputs flattened
        for vi in output_infos:
            value = scope.lookup(vi.name)
            if isinstance(value, NON_TENSOR):
                composite[vi.name] = self._flatten_output(vi.name, value, vi.type, flat)
            else:
                flat.append((vi, value))
        for vi, value in flat:
            if isinstance(value, HostOutput):  # the graph computes its numbers (a map too)
                info = TensorInfo(vi.name, self.rename(vi.name), "tensor(unknown)", 0, None)
                host[info.graph_name] = value
                value = value.operand
            else:
                info = self._input_info(vi, output=True)
            if value is None:
                raise OnnxImportError(f"graph output '{vi.name}' is not produced by any node")
            self._check_held_output(vi.name, value, info.elem_type)
            try:
                op = self.operand(self.narrow(vi.name, value))
            except OnnxImportError as exc:  # a constant WebNN cannot hold (empty, a string)
                raise OnnxImportError(f"graph output '{vi.name}': {exc}") from exc
            if info.elem_type == FLOAT16_TYPE and self.builder.operand_data_type(op) == "float32":
                op = self.builder.cast(op, "float16")  # "float32" mode: rounded at the output
            if info.elem_type == DOUBLE_TYPE:
                self.narrowed[vi.name] = None  # a float32 operand, returned as float64 by a session
            if id(op) in self._leaves or id(op) in used:
                op = self.builder.identity(op)
            used.add(id(op))
            self._keep.append(op)
            info.webnn_shape = self.builder.operand_shape(op)
            info.webnn_dtype = self.builder.operand_data_type(op)
            if not info.elem_type:  # undeclared type: what the graph computes
                from .types import ONNX_TO_WEBNN as _O2W

                info.elem_type = next(k for k, v in _O2W.items() if v == info.webnn_dtype)
                info.onnx_type = f"tensor({onnx_type_name(info.elem_type)})"
            if info.numpy_dtype is None:
                from .types import WEBNN_TO_NUMPY

                info.numpy_dtype = WEBNN_TO_NUMPY.get(info.webnn_dtype)
            operands[info.graph_name] = op
            outputs.append(info)
        if self.narrowed and not (self.weights is not None and self.weights.float64_warned):
            first = next(iter(self.narrowed))
            frames = 0
            if self.weights is not None:
                self.weights.float64_warned = True
                frames = self.weights.caller_frames
            clamped = ""
            if self.clamped_doubles:
                name, count = next(iter(self.clamped_doubles.items()))
                total = sum(self.clamped_doubles.values())
                clamped = (
                    f"; {total} finite double value(s) beyond float32's range (the first in "
                    f"'{name}', {count} there) are held as +-3.4028235e38"
                )
            warnings.warn(
                Float64Warning(
                    f"the model has double (float64) tensors (the first: '{first}'); WebNN has "
                    "no float64, so they are computed in float32 (about 7 significant digits)"
                    f"{clamped}. float64='error' refuses such models instead"
                ),
                stacklevel=4 + frames,  # the caller of load / convert (run <- import_model)
            )
        return ImportedModel(
            builder=self.builder,
            inputs=inputs,
            outputs=outputs,
            operands=operands,
            metadata=self._metadata(),
            opsets=dict(self.opsets),
            folded_inputs=folded,
            dynamic_dims=dict(self.dynamic_dims),
            host_cut=self.cut,
            host_outputs=host,
            host_inputs=host_inputs,
            composite_outputs=composite,
            sequence_inputs=sequence_inputs,
        )

    def held_elem(self, name, value):
        """The ONNX type WebNN lacks of a value (held.py), or None."""
        if isinstance(value, np.ndarray):
            return held.elem_of_array(value)
        if not name or value is None or isinstance(value, (*NON_TENSOR, HostOutput)):
            return None
        if name in self.held:
            return self.held[name]
        # A value no converter tagged: a subgraph's input (a Loop's carried state) or an If's
        # output, held as its declared type says (when the operand has that holding type).
        declared = self._declared_types().get(name)
        if (
            declared in held.HELD
            and not isinstance(value, (list, tuple))
            and self.builder.operand_data_type(value) == held.holding_type(declared)
        ):
            return declared
        return None

    def _declared_types(self):
        """Value name -> declared ONNX element type, over every graph of the model."""
        if getattr(self, "_declared", None) is None:
            types = {}

            def walk(graph):
                for vi in [*graph.input, *graph.output, *graph.value_info]:
                    if vi.type.HasField("tensor_type"):
                        types.setdefault(vi.name, vi.type.tensor_type.elem_type)
                for node in graph.node:
                    for a in node.attribute:
                        for g in [a.g] if a.type == a.GRAPH else list(a.graphs):
                            walk(g)

            walk(self.proto.graph)
            self._declared = types
        return self._declared

    def _check_held_output(self, name, value, declared):
        """A graph output declared of a held type must be computed as one (and the reverse):
        codes or 16-bit integers must never come out as other numbers. Only what converters
        recorded counts here (not the declared type held_elem falls back to)."""
        if isinstance(value, np.ndarray):
            return  # a folded value: its numpy type converts
        have = self.held.get(name)
        if not declared or have == declared or (have is None and declared not in held.HELD):
            return
        if have is None and held.holding_type(declared) in ("int32", "float32") and \
                declared not in held.FLOAT_CODED and \
                self.builder.operand_data_type(value) == held.holding_type(declared):  # fmt: skip
            return  # computed in the holding type by an operator without a schema
        raise OnnxImportError(
            f"graph output '{name}' is declared {onnx_type_name(declared)}, but the importer "
            f"computes it as {onnx_type_name(have) if have else 'another type'}"
        )

    def _sequence_input(self, vi, inputs, sequence_inputs):
        """A sequence or optional graph input. A sequence's elements become graph inputs
        ('x[0]', 'x[1]', ...) of the shapes given by input_shapes={'x': [[...], ...]}; an
        optional is given as input_shapes={'x': None} (no element) or its element's shape(s).
        sequence_inputs[name] gets the graph input names the value is fed through."""
        name = vi.name
        given = self.input_shapes.get(name, _MISSING)
        if vi.type.HasField("optional_type"):
            inner = vi.type.optional_type.elem_type
            if given is _MISSING:
                raise OnnxImportError(
                    f"graph input '{name}' is an optional; the MLGraph API has tensors only, so "
                    f"say whether it has an element with input_shapes={{{name!r}: None}} (none) "
                    "or the shape of its element (InferenceSession does this from its feed)"
                )
            if given is None:
                sequence_inputs[name] = []
                return OptionalValue(None)
            if inner.HasField("sequence_type"):
                return OptionalValue(self._sequence_elements(name, inner, given, inputs,
                                                             sequence_inputs))  # fmt: skip
            if not inner.HasField("tensor_type"):
                raise OnnxImportError(f"graph input '{name}': an optional of a non-tensor")
            op, graph_name = self._element_input(name, name, inner, given, inputs)
            sequence_inputs[name] = [graph_name]
            return OptionalValue(op)
        return self._sequence_elements(name, vi.type, given, inputs, sequence_inputs)

    def _sequence_elements(self, name, seq_type, shapes, inputs, sequence_inputs):
        elem_proto = seq_type.sequence_type.elem_type
        if not elem_proto.HasField("tensor_type"):
            raise OnnxImportError(
                f"graph input '{name}' is a sequence of non-tensors; only sequences of tensors "
                "are supported"
            )
        elem = elem_proto.tensor_type.elem_type
        if (
            shapes is _MISSING
            or not isinstance(shapes, (list, tuple))
            or not all(isinstance(s, (list, tuple)) for s in shapes)
        ):
            raise OnnxImportError(
                f"graph input '{name}' is a sequence (seq(tensor({onnx_type_name(elem)}))); the "
                "MLGraph API has tensors only, so give the number of its elements and their "
                f"shapes with input_shapes={{{name!r}: [[...], ...]}} (its elements become the "
                f"graph inputs '{element_name(name, 0)}', ...; InferenceSession does this from "
                "the list it is fed)"
            )
        elements, names = [], []
        for index, shape in enumerate(shapes):
            op, graph_name = self._element_input(
                name, element_name(name, index), elem_proto, shape, inputs
            )
            elements.append(op)
            names.append(graph_name)
        sequence_inputs[name] = names
        return SequenceValue(elements, elem)

    def _element_input(self, name, ename, tensor_proto, shape, inputs):
        """The graph input `ename` for an element of sequence / optional input `name`."""
        elem = tensor_proto.tensor_type.elem_type
        if elem not in ONNX_TO_WEBNN and elem != DOUBLE_TYPE:
            raise OnnxImportError(
                f"graph input '{name}': elements of type {onnx_type_name(elem)}, which WebNN "
                "cannot hold"
            )
        declared = _dim_list(tensor_proto)
        info = TensorInfo(ename, self.rename(ename), f"tensor({onnx_type_name(elem)})", elem,
                          list(declared) if declared is not None else None)  # fmt: skip
        info.numpy_dtype = ONNX_TO_NUMPY.get(elem)
        self.input_shapes[ename] = list(shape)
        info.webnn_shape = self._resolve_shape(info)
        if elem == DOUBLE_TYPE:
            self.narrowed[ename] = None
            info.webnn_dtype = "float32"
        else:
            info.webnn_dtype = ONNX_TO_WEBNN[elem]
        if 0 in info.webnn_shape:
            raise OnnxImportError(
                f"graph input '{ename}' has shape {info.webnn_shape}: WebNN operands cannot "
                "have a 0-sized dimension"
            )
        op = self.builder.input(info.graph_name, info.webnn_shape, info.webnn_dtype)
        self._leaves.add(id(op))
        self._keep.append(op)
        inputs.append(info)
        return self.widen(ename, op), info.graph_name

    def _flatten_output(self, name, value, type_proto, flat):
        """A sequence / optional graph output as graph outputs: appends (ValueInfoProto,
        tensor) pairs to `flat`, returns the structure (ImportedModel.composite_outputs)."""
        from onnx import ValueInfoProto, helper

        def tensor_info(tname, proto):
            if proto is not None and proto.HasField("tensor_type"):
                elem = proto.tensor_type.elem_type
                if elem:
                    return helper.make_tensor_value_info(tname, elem, None)
            return ValueInfoProto(name=tname)

        if isinstance(value, OptionalValue):
            inner = type_proto.optional_type.elem_type if type_proto is not None and \
                type_proto.HasField("optional_type") else None  # fmt: skip
            if value.element is None:
                return ("optional", None)
            if isinstance(value.element, NON_TENSOR):
                return ("optional", self._flatten_output(name, value.element, inner, flat))
            flat.append((tensor_info(name, inner), value.element))
            return ("optional", self.rename(name))
        inner = type_proto.sequence_type.elem_type if type_proto is not None and \
            type_proto.HasField("sequence_type") else None  # fmt: skip
        if (inner is None or not inner.HasField("tensor_type")) and value.elem_type:
            from onnx import TypeProto

            inner = TypeProto()
            inner.tensor_type.elem_type = value.elem_type
        out = []
        for index, element in enumerate(value):
            ename = element_name(name, index)
            if isinstance(element, NON_TENSOR):
                out.append(self._flatten_output(ename, element, inner, flat))
            else:
                flat.append((tensor_info(ename, inner), element))
                out.append(self.rename(ename))
        return out

    def _metadata(self):
        p = self.proto
        return ModelMetadata(
            producer_name=p.producer_name,
            producer_version=p.producer_version,
            domain=p.domain,
            model_version=int(p.model_version),
            doc_string=p.doc_string,
            graph_name=p.graph.name,
            graph_description=p.graph.doc_string,
            custom_metadata_map={e.key: e.value for e in p.metadata_props},
        )

    def run_nodes(self, nodes, scope):
        at_top = scope is getattr(self, "_top_scope", None)
        top = self.weights is not None and at_top
        for index, node in enumerate(nodes):
            if top and self._reuse_folded(node, scope):
                continue
            inputs = [scope.lookup(name) if name else None for name in node.input]
            for name, v in zip(node.input, inputs):
                if name and v is None and not scope.knows(name):
                    # Named as every node error is (a node may have neither name nor outputs:
                    # node.output[0] was an IndexError, found by the fuzzer).
                    domain = "" if node.domain in ("", "ai.onnx") else node.domain
                    where = NodeContext(self, node, inputs, self.opsets.get(domain, 1))
                    raise OnnxImportError(
                        f"{where.describe()}: reads '{name}', which no earlier node, input or "
                        "initializer defines"
                    )
            if at_top and self.host_cuts and is_host_cut(node, inputs, self.builder.operand_shape):
                self.cut = self._plan_cut(index, nodes, scope)
                return
            if at_top and self.host_cuts and reads_host_tensor(node, inputs):
                # A tensor the host finishes (an SVM's coupled probabilities) read by a later
                # node: the graph ends here, the rest takes the finished tensor (host_cuts.py).
                self.cut = self._plan_cut(index, nodes, scope, runs_node=False)
                return
            try:
                outputs = self.convert_node(node, inputs, scope)
            except OnnxImportError as exc:
                # A value this node needs at import (TopK's K, a shape) computed at run time:
                # the session cuts here and an inner session runs the rest with that value
                # folded, one graph per value (host_cuts.py, "folded cuts").
                name = exc.needs_constant
                if not (at_top and self.host_cuts and name and _run_time(scope.lookup(name))):
                    raise
                self.cut = self._plan_cut(index, nodes, scope, runs_node=False)
                self.cut.fold = [name]
                return
            if self.float16 == "float32":
                outputs = [self.widen(name, v) for name, v in zip(node.output, outputs)]
            for name, v in zip(node.output, outputs):
                if name:
                    scope[name] = v
            if top:
                self._remember_folded(node, outputs)

    def _plan_cut(self, index, nodes, scope, runs_node=True):
        cut = plan_cut(index, nodes, scope, self.proto.graph.output, runs_node=runs_node)
        # exported values of types WebNN lacks: the rest of the model takes them in their
        # ONNX type (the session converts the holding arrays back, host_segments.py)
        cut.held = {n: self.held_elem(n, scope.lookup(n)) for n in cut.exported}
        cut.held = {n: e for n, e in cut.held.items() if e is not None}
        return cut

    def _weight_only(self, node):
        """A top-level node whose value depends on weights alone (not on any input, shape or
        folded input): initializers and Constant nodes, and nodes computed from those only."""
        if any(a.type in (a.GRAPH, a.GRAPHS) for a in node.attribute):
            return False
        names = [n for n in node.input if n]
        if not names:
            return node.op_type == "Constant" and node.domain in ("", "ai.onnx")
        return all(n in self._invariant for n in names)

    def _reuse_folded(self, node, scope):
        if not node.output or not self._weight_only(node):
            return False
        outs = [o for o in node.output if o]
        if not outs or not all(o in self.weights.folded for o in outs):
            return False
        for o in outs:
            scope[o] = self.weights.folded[o]
            self._invariant.add(o)
        return True

    def _remember_folded(self, node, outputs):
        if not self._weight_only(node):
            return
        pairs = [(o, v) for o, v in zip(node.output, outputs) if o]
        if not pairs or not all(isinstance(v, np.ndarray) for _, v in pairs):
            return
        for o, v in pairs:
            self.weights.folded[o] = _read_only(v)
            self._invariant.add(o)

    def convert_node(self, node, inputs, scope):
        domain = "" if node.domain in ("", "ai.onnx") else node.domain
        opset = self.opsets.get(domain, 1)
        ctx = NodeContext(self, node, inputs, opset)
        ctx.scope = scope
        entry = lookup(domain, node.op_type)
        forwarded = pass_through(node, inputs)
        if forwarded is not None:
            return forwarded
        for v in inputs:
            if isinstance(v, HostOutput):
                self.operand(v, ctx)  # the error: WebNN cannot hold it
        present = [v for v in inputs if v is not None]
        if (
            entry.foldable
            and all(isinstance(v, np.ndarray) for v in present)
            and not any(a.type in (a.GRAPH, a.GRAPHS) for a in node.attribute)
            and (present or entry.fold_without_inputs)
        ):
            folded = folding.evaluate(node, inputs, self.opsets, domain)
            if folded is not None:
                return folded
        # Run time: double values known at import become float32 (what converters and WebNN
        # hold); folding above kept them double.
        ctx.elems = elems = [self.held_elem(name, v) for name, v in zip(node.input, inputs)]
        if (
            any(e in held.FLOAT_CODED for e in elems)
            and not (node.op_type in held.SELF_TAGGING or node.op_type in held.MOVERS)
            or (domain and any(elems) and node.op_type not in held.SELF_TAGGING)
            or (node.op_type in held.EIGHT_BIT_ONLY and any(elems))
        ):
            i = next(i for i, e in enumerate(elems) if e)
            ctx.fail(
                f"reads '{node.input[i]}', a {onnx_type_name(elems[i])} tensor: WebNN has no such "
                "type, and this operator cannot take it (float8 / float4 values are held as "
                "codes, read only by Cast, CastLike, QuantizeLinear, DequantizeLinear and data "
                "movement; the 8-bit integer operators and other domains' operators take none "
                "of the held types; docs/onnx.md, Held types)"
            )
        ctx.inputs = inputs = [
            (held.to_holding(v) if e is not None else self.narrow(name, v))
            if isinstance(v, np.ndarray)
            else v
            for name, v, e in zip(node.input, inputs, elems)
        ]
        try:
            result = entry.convert(ctx)
        except OnnxImportError:
            raise
        except TypeError as exc:
            text = str(exc)
            if "incompatible function arguments" in text and "NoneType" in text:
                # An omitted input (None) reached a builder call: say that, not the binding's
                # list of signatures (found by the fuzzer: Gather without indices).
                text = (
                    f"malformed node, a required input is missing (None given to the builder's "
                    f"{text.split('(')[0]}())"
                )
            raise OnnxImportError(f"{ctx.describe()}: {text}") from exc
        except (ValueError, RuntimeError, ArithmeticError) as exc:
            raise OnnxImportError(f"{ctx.describe()}: {exc}") from exc
        except (IndexError, KeyError, AttributeError, StopIteration) as exc:
            # A converter reached for an input, attribute or type the node does not have: the
            # node is malformed (fuzzing finds these); say which node instead of a traceback.
            raise OnnxImportError(
                f"{ctx.describe()}: malformed node, a missing or invalid input or attribute "
                f"({type(exc).__name__}: {exc})"
            ) from exc
        if not isinstance(result, (list, tuple)) or isinstance(result, SequenceValue):
            result = [result]  # one output (a sequence is a tuple of its elements)
        result = list(result)
        if len(result) < len(node.output):
            missing = [o for o in node.output[len(result) :] if o]
            if missing:
                ctx.fail(f"outputs {missing} are not supported by this converter")
        if any(elems) and node.op_type not in held.SELF_TAGGING:
            result = self._held_results(ctx, domain, opset, elems, result)
        if node.op_type in ("If", "Loop", "Scan") and not domain:
            self._tag_control_flow(node, result)
        return result

    def _tag_control_flow(self, node, result):
        """If / Loop / Scan outputs take the held type of the subgraph output they come from
        (its tag from the body's converters, or its declared type)."""
        graphs = {a.name: a.g for a in node.attribute if a.type == a.GRAPH}
        body = graphs.get("then_branch") or graphs.get("body")
        if body is None:
            return
        skip = 1 if node.op_type == "Loop" else 0  # a Loop body's first output: the condition
        declared = self._declared_types()
        for j, name in enumerate(node.output):
            if not name or j >= len(result) or j + skip >= len(body.output):
                continue
            inner = body.output[j + skip].name
            elem = self.held.get(inner, declared.get(inner))
            value = result[j]
            if (
                elem in held.HELD
                and value is not None
                and not isinstance(value, (np.ndarray, *NON_TENSOR, HostOutput, list, tuple))
                and self.builder.operand_data_type(value) == held.holding_type(elem)
            ):
                self.held[name] = elem

    def _held_results(self, ctx, domain, opset, elems, result):
        """Outputs of held types (by the schema's type constraints) recorded, and made exact
        (int16 wrapped, bfloat16 rounded) unless the operator only moves or selects values."""
        node = ctx.node
        out_elems = held.output_elems(domain, node.op_type, opset, elems, len(node.output))
        result = list(result)
        for j, (name, elem) in enumerate(zip(node.output, out_elems)):
            if elem is None or not name or j >= len(result):
                continue
            value = result[j]
            if isinstance(value, (np.ndarray, NON_TENSOR)) or value is None:
                continue
            if self.builder.operand_data_type(value) != held.holding_type(elem):
                ctx.fail(
                    f"output '{name}' is {onnx_type_name(elem)}, held as "
                    f"{held.holding_type(elem)}, but the converter made "
                    f"{self.builder.operand_data_type(value)}"
                )
            if node.op_type not in held.SELECTORS:
                value = held.fix_result(ctx, value, elem)
            self.held[name] = elem
            result[j] = value
        return result


def import_model(builder, model, *, free_dims=None, input_shapes=None, constants=None,
                 base_dir=None, max_sizes=None, rename=None, weights=None,
                 float16="float32", float64="float32", host_cuts=False):  # fmt: skip
    """Import an ONNX model (path, bytes or ModelProto) into `builder`; returns ImportedModel.

    See webnn.onnx.load for the arguments. `rename` maps an ONNX input/output name to the name
    used in the WebNN graph (convert() uses it to make names the .webnn format can hold).
    `weights`: a SharedWeights that imports of the same model for other shapes share.
    `float16`: how float16 values are computed, "float32" (default: as ONNX Runtime's CPU
    provider, rounded where the graph casts to float16 and at the outputs) or "float16"
    (every operator's result rounded, ONNX's definition); docs/onnx.md, Numerics.
    `float64`: "float32" (default) holds and computes double tensors as float32, warning with
    Float64Warning; "error" refuses them (OnnxImportError naming the first).
    `host_cuts`: stop at the first NonZero / NonMaxSuppression / ... reading run-time values
    instead of failing (ImportedModel.host_cut says where; InferenceSession runs the rest).
    """
    proto, directory = read_model(model, base_dir)
    importer = Importer(
        builder,
        proto,
        directory,
        free_dims=free_dims,
        input_shapes=input_shapes,
        constants=constants,
        max_sizes=max_sizes,
        rename=rename,
        weights=weights,
        float16=float16,
        float64=float64,
        host_cuts=host_cuts,
    )
    return importer.run()


def supported_operators():
    """Sorted (domain, op_type) pairs the importer has a converter for."""
    return sorted(TABLE)
