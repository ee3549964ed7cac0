"""An ONNX Runtime–style ``InferenceSession`` running ONNX models on webnn.

An application written for ``onnxruntime.InferenceSession`` runs on webnn by swapping the
class: the constructor takes ORT's positional order (``path_or_bytes, sess_options,
providers``) and the session offers the part of ORT's API that applications use (``run``,
``get_inputs``/``get_outputs`` with NodeArg-like objects, ``get_providers``,
``get_modelmeta``, ``get_session_options``).

How ORT's arguments map onto webnn (the rules; docs/onnx_session.md has them too):

* ``providers`` (strings or ``(name, options)`` pairs, like ORT; anything else is a
  ``ValueError``, as in ORT). The first entry that names something webnn runs picks the
  backend: ``"CPUExecutionProvider"`` -> the ``cpu`` backend; a webnn backend name
  (``"cpu"``, ``"reference"``) -> that backend. Every other provider (CUDA, DirectML, ...)
  is skipped with a warning, as ORT skips providers it was not built with. No usable entry
  (or ``providers=None``) -> ``cpu``. Provider options are accepted and ignored.
* ``sess_options``: an ``onnxruntime.SessionOptions`` or any object with the same attributes
  (``webnn.onnx.session.SessionOptions`` is a stand-in for when ORT is not installed). Only
  ``intra_op_num_threads`` is used: webnn's thread count belongs to a context (its thread
  pool is sized when the context is created, from ``WEBNN_NUM_THREADS``), so a value ``n >
  0`` gives the session a context with ``n`` threads and ``0`` (ORT's default) one with the
  default count (``WEBNN_NUM_THREADS``, else every core). Sessions with the same backend and
  thread count share one context, hence one thread pool. ``context=`` overrides all of this
  (the context's own thread count then applies). Other options (graph optimisation level,
  memory arena, logging, ``inter_op_num_threads``, execution mode) have no webnn counterpart
  and are ignored; ``run_options`` is accepted and ignored.

Shapes: the model is parsed once, at construction. A graph is imported (``webnn.onnx.load``)
and compiled per *shape signature* -- the concrete shape of every input plus the values of
the inputs that are folded as constants -- and kept in a bounded LRU cache
(``max_cached_graphs``), so a later call with the same shapes never re-imports. Inputs
folded as constants: every integer or bool input with at most one element (sample rates,
flags: what ``If`` conditions and shape sub-graphs test, so folding lets the importer
resolve them), every input fed an empty array (a 0-sized dimension, which WebNN tensors
cannot have: e.g. a decoder's key/value cache of length 0 on its first call), plus the names
given in ``constant_inputs=``. With ``max_sizes={"seq": 512}``
the axes of that name stay dynamic dimensions instead (WebNN allows them on batch and sequence
axes, not on convolution spatial axes): one graph, hence one packing of the weights, serves
every size up to the bound.

``run`` is thread-safe: the cache is guarded by a lock, an import happens once per signature
even when several threads ask for it at the same time, imports of different signatures run
one at a time (so the model's weights are read once, not once per racing signature), and
each call dispatches on its own tensors, so dispatches of one session may run concurrently.
"""

from __future__ import annotations

import collections
import functools
import os
import re
import threading
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto

import webnn

from . import held
from .errors import OnnxImportError
from .session_sequences import (
    NoGraph,
    check_optional_feed,
    check_sequence_feed,
    element_dtype,
    feed_key,
    feed_shapes,
    flatten_feed,
    pack_output,
)
from .types import double_as_float32

__all__ = ["InferenceSession", "ModelMetadata", "NodeArg", "SessionOptions"]

# ORT reports an unset model_version as INT64_MAX (its "unknown" value); we do the same.
_UNSET_MODEL_VERSION = 2**63 - 1
_CPU_PROVIDER = "CPUExecutionProvider"
# Keywords ORT's InferenceSession accepts that steer its own graph optimiser: ignored here.
_ORT_KEYWORDS = frozenset({"disabled_optimizers", "read_config_from_model"})


class NodeArg:
    """An input or output of the model, as ORT's ``NodeArg``: name, shape and type.

    ``shape`` lists ints for fixed dimensions, the ``dim_param`` string for named symbolic
    ones and ``None`` for unknown ones (ORT's convention); ``type`` is ``'tensor(float)'``,
    ``'tensor(int64)'``, ...
    """

    __slots__ = ("name", "shape", "type")

    def __init__(self, name: str, shape: list | None, type: str):
        self.name = name
        self.shape = shape
        self.type = type

    def __repr__(self) -> str:
        return f"NodeArg(name={self.name!r}, type={self.type!r}, shape={self.shape!r})"


class ModelMetadata:
    """The model's metadata, with the fields of ORT's ``ModelMetadata``."""

    def __init__(self, model: onnx.ModelProto):
        self.producer_name = model.producer_name
        self.graph_name = model.graph.name
        self.domain = model.domain
        self.description = model.doc_string
        self.graph_description = model.graph.doc_string
        self.version = (
            model.model_version if model.HasField("model_version") else _UNSET_MODEL_VERSION
        )
        self.custom_metadata_map = {p.key: p.value for p in model.metadata_props}

    def __repr__(self) -> str:
        return (
            f"ModelMetadata(producer_name={self.producer_name!r}, graph_name={self.graph_name!r}, "
            f"version={self.version}, custom_metadata_map keys={list(self.custom_metadata_map)})"
        )


class SessionOptions:
    """A stand-in for ``onnxruntime.SessionOptions`` (usable without ORT installed).

    Holds the attributes applications set; only ``intra_op_num_threads`` has an effect
    (see the module docstring).
    """

    def __init__(self):
        self.intra_op_num_threads = 0
        self.inter_op_num_threads = 0
        self.log_severity_level = 2
        self.log_verbosity_level = 0
        self.enable_cpu_mem_arena = True
        self.enable_mem_pattern = True
        self.graph_optimization_level = None
        self.execution_mode = None
        self._config = {}

    def add_session_config_entry(self, key: str, value: str) -> None:
        self._config[str(key)] = str(value)

    def get_session_config_entry(self, key: str) -> str:
        return self._config[key]


def _value_type_string(type_proto: onnx.TypeProto) -> str:
    """ORT's spelling of a value type: 'tensor(float)', 'seq(tensor(int64))', ..."""
    kind = type_proto.WhichOneof("value")
    if kind == "tensor_type":
        return f"tensor({TensorProto.DataType.Name(type_proto.tensor_type.elem_type).lower()})"
    if kind == "sequence_type":
        return f"seq({_value_type_string(type_proto.sequence_type.elem_type)})"
    if kind == "map_type":
        key = TensorProto.DataType.Name(type_proto.map_type.key_type).lower()
        return f"map({key},{_value_type_string(type_proto.map_type.value_type)})"
    if kind == "optional_type":
        return f"optional({_value_type_string(type_proto.optional_type.elem_type)})"
    return "unknown"


def _dims(value_info: onnx.ValueInfoProto) -> list | None:
    """A value's shape as ORT reports it (None when the rank itself is unknown)."""
    t = value_info.type.tensor_type
    if not value_info.type.HasField("tensor_type") or not t.HasField("shape"):
        return None
    out = []
    for d in t.shape.dim:
        if d.HasField("dim_value") and d.dim_value >= 0:
            out.append(int(d.dim_value))
        elif d.HasField("dim_param") and d.dim_param:
            out.append(d.dim_param)
        else:
            out.append(None)  # unknown (ORT also maps a negative dim_value here)
    return out


def _node_arg(value_info: onnx.ValueInfoProto) -> NodeArg:
    shape = _dims(value_info)
    if value_info.type.WhichOneof("value") in ("sequence_type", "optional_type"):
        shape = []  # as ORT reports a sequence's / optional's shape
    return NodeArg(value_info.name, shape, _value_type_string(value_info.type))


def _numpy_dtype(value_info: onnx.ValueInfoProto) -> np.dtype | None:
    if not value_info.type.HasField("tensor_type"):
        return None
    elem = value_info.type.tensor_type.elem_type
    if elem == TensorProto.STRING:
        return np.dtype(object)
    try:
        return np.dtype(onnx.helper.tensor_dtype_to_np_dtype(elem))
    except (KeyError, TypeError, ValueError):
        return None


def _normalize_providers(providers, provider_options) -> list:
    """ORT's accepted forms: names, or (name, options dict) pairs; else ValueError like ORT."""
    if providers is None:
        return []
    if isinstance(providers, str):
        providers = [providers]
    out = []
    for i, p in enumerate(providers):
        if isinstance(p, str):
            opts = {}
            if provider_options is not None and i < len(provider_options):
                opts = provider_options[i]
            out.append((p, opts))
        elif (
            isinstance(p, tuple)
            and len(p) == 2
            and isinstance(p[0], str)
            and isinstance(p[1], dict)
        ):
            out.append(p)
        else:
            raise ValueError(
                f"InferenceSession: 'providers' values must be either strings or (string, dict) "
                f"tuples (got {p!r} at index {i})"
            )
    return out


def _backend_for(providers: list) -> str:
    """The first provider that webnn can honour picks the backend (module docstring)."""
    available = webnn.backends()
    for name, _opts in providers:
        if name == _CPU_PROVIDER:
            return "cpu"
        if name in available:
            return name
        warnings.warn(
            f"InferenceSession: provider {name!r} is not available in webnn and is skipped "
            f"(webnn runs {_CPU_PROVIDER} as its 'cpu' backend; backends: {available})",
            RuntimeWarning,
            stacklevel=3,
        )
    return "cpu"


def _effective_threads(requested: int) -> int:
    if requested and requested > 0:
        return int(requested)
    env = os.environ.get("WEBNN_NUM_THREADS", "")
    if env.isdigit() and int(env) > 0:
        return int(env)
    return os.cpu_count() or 1


_CONTEXTS: dict = {}
_CONTEXTS_LOCK = threading.Lock()


def _shared_context(backend: str, threads: int) -> webnn.MLContext:
    """One context per (backend, thread count), shared by sessions: one thread pool each.

    A context sizes its pool from WEBNN_NUM_THREADS when it is created, so the variable is
    set for the duration of create_context (under a lock) and restored afterwards.
    """
    key = (backend, threads)
    with _CONTEXTS_LOCK:
        ctx = _CONTEXTS.get(key)
        if ctx is None:
            saved = os.environ.get("WEBNN_NUM_THREADS")
            os.environ["WEBNN_NUM_THREADS"] = str(threads)
            try:
                ctx = webnn.ML().create_context(accelerated=False, backend=backend)
            finally:
                if saved is None:
                    del os.environ["WEBNN_NUM_THREADS"]
                else:
                    os.environ["WEBNN_NUM_THREADS"] = saved
            _CONTEXTS[key] = ctx
        return ctx


def _read_model(path_or_bytes) -> tuple:
    """(ModelProto without external data, base_dir): the importer reads external data itself."""
    if isinstance(path_or_bytes, onnx.ModelProto):
        return path_or_bytes, None
    if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
        model = onnx.ModelProto()
        try:
            model.ParseFromString(bytes(path_or_bytes))
        except Exception as e:  # protobuf's DecodeError
            raise ValueError(
                f"InferenceSession: the bytes given are not an ONNX model ({e})"
            ) from e
        return model, None
    if isinstance(path_or_bytes, (str, os.PathLike)):
        path = os.fspath(path_or_bytes)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"InferenceSession: no model file at {path!r}")
        try:
            model = onnx.load(path, load_external_data=False)
        except Exception as e:
            raise ValueError(
                f"InferenceSession: cannot parse {path!r} as an ONNX model ({e})"
            ) from e
        return model, os.path.dirname(os.path.abspath(path))
    raise TypeError(
        "InferenceSession: path_or_bytes must be a file path, bytes or an onnx.ModelProto "
        f"(got {type(path_or_bytes).__name__})"
    )


def _without_negative_dims(model: onnx.ModelProto, copy: bool) -> onnx.ModelProto:
    """Paddle's exporter writes unknown dims as dim_value -1; ORT treats them as unknown, and so
    does the session (the import then takes the size from the feed). A caller's proto is copied
    before it is changed."""
    graph = model.graph
    values = list(graph.input) + list(graph.output)
    if not any(
        d.HasField("dim_value") and d.dim_value < 0
        for vi in values
        for d in vi.type.tensor_type.shape.dim
    ):
        return model
    if copy:
        clone = onnx.ModelProto()
        clone.CopyFrom(model)
        model, graph = clone, clone.graph
    for vi in list(graph.input) + list(graph.output):
        for d in vi.type.tensor_type.shape.dim:
            if d.HasField("dim_value") and d.dim_value < 0:
                d.ClearField("dim_value")
    return model


def _merge_inferred_shapes(declared: list, inferred: list) -> list:
    """ORT completes declared output shapes with its own inference: fill unknown dims only."""
    if declared is None:
        return inferred
    if inferred is None or len(inferred) != len(declared):
        return declared
    return [
        i if not isinstance(d, int) and isinstance(i, int) else d
        for d, i in zip(declared, inferred)
    ]


def _dim_size(dim, bound: dict) -> int:
    """A descriptor dim's size: an int, a named dynamic dim bound from the inputs, or a derived
    one, whose name is the canonical affine text of api.md 11.4 ('past + seq', '2*seq + 1')."""
    if isinstance(dim, int):
        return dim
    total = 0
    for term in dim["name"].split(" + "):
        if term.isdigit():
            total += int(term)
            continue
        coeff, _, name = term.rpartition("*")
        if name not in bound:
            raise RuntimeError(
                f"InferenceSession: output dimension {dim['name']!r} depends on {name!r}, "
                "which no input binds"
            )
        total += (int(coeff) if coeff else 1) * bound[name]
    return total


class _Compiled:
    """One imported graph and free lists of tensor sets for it, per concrete input shapes
    (one shape for a static graph; several when the graph has dynamic dimensions)."""

    _MAX_SHAPES = 8  # tensor sets kept for this many distinct shapes of a dynamic graph

    def __init__(self, context, graph, input_names, host_outputs=None, host_inputs=None):
        self.context = context
        self.graph = graph
        self.host_outputs = host_outputs or {}  # name -> HostOutput (strings, maps)
        self.host_inputs = host_inputs or {}  # name -> StringInput (strings -> indices)
        described = graph.input_descriptors
        # An input no output depends on may be left out of the graph: it is then not fed.
        self.input_desc = {n: described[n] for n in input_names if n in described}
        self.output_desc = graph.output_descriptors
        self._free: collections.OrderedDict = collections.OrderedDict()
        self._lock = threading.Lock()

    def _new_tensors(self, feed: dict):
        ctx = self.context
        bound = {}
        for n, d in self.input_desc.items():
            for dim, size in zip(d["shape"], feed[n].shape):
                if isinstance(dim, dict):
                    bound[dim["name"]] = int(size)
        ins = {
            n: ctx.create_tensor(list(feed[n].shape), d["data_type"], writable=True)
            for n, d in self.input_desc.items()
        }
        outs = {
            n: ctx.create_tensor(
                [_dim_size(x, bound) for x in d["shape"]], d["data_type"], readable=True
            )
            for n, d in self.output_desc.items()
        }
        return ins, outs

    def run(self, feed: dict) -> dict:
        if self.host_inputs:
            feed = dict(feed)
            for name, host in self.host_inputs.items():
                feed[name] = host.encode(feed[name])
        shapes = tuple(feed[n].shape for n in self.input_desc)
        with self._lock:
            free = self._free.get(shapes)
            tensors = free.pop() if free else None
        if tensors is None:
            tensors = self._new_tensors(feed)
        ins, outs = tensors
        ctx = self.context
        for name, t in ins.items():
            ctx.write_tensor(t, feed[name])
        ctx.dispatch(self.graph, ins, outs)
        result = {name: ctx.read_tensor(t) for name, t in outs.items()}
        for name, host in self.host_outputs.items():
            result[name] = host.finish(result[name])
        with self._lock:
            self._free.setdefault(shapes, []).append(tensors)
            self._free.move_to_end(shapes)
            while len(self._free) > self._MAX_SHAPES:
                self._free.popitem(last=False)
        return result


class _Pending:
    """A cache slot whose graph one thread is importing; others wait on it."""

    def __init__(self):
        self.done = threading.Event()
        self.compiled = None
        self.error = None


class InferenceSession:
    """Runs an ONNX model on webnn with the API of ``onnxruntime.InferenceSession``.

    Outputs WebNN cannot hold (ai.onnx.ml string labels, ZipMap's list of dicts) are made on
    the host from the numbers the graph computes, and string inputs that only LabelEncoder /
    CategoryMapper read are fed as indices computed on the host (host_outputs.py), so they
    come back as ORT returns them.

    Args:
        path_or_bytes: model file path, serialized bytes, or an ``onnx.ModelProto``.
        sess_options: ORT ``SessionOptions`` (or ``webnn.onnx.session.SessionOptions``);
            only ``intra_op_num_threads`` is used (module docstring).
        providers: ORT provider list; mapped to a webnn backend (module docstring).
        provider_options: ORT's list of option dicts parallel to ``providers``; ignored.
        context: an ``MLContext`` to run on (overrides providers and the thread count).
        free_dims: ``{"batch": 1}`` fixes named dimensions: a feed of another size is an error.
        max_sizes: ``{"seq": 512}`` keeps the named dimensions dynamic (bounded): one graph
            serves every size up to the bound, instead of one graph per size.
        base_dir: where external data is (default: the model file's directory).
        constant_inputs: names of further inputs to fold as constants (their values become
            part of the cache key).
        max_cached_graphs: how many shape signatures stay compiled (least recently used
            beyond that are dropped).
        float16: ``"float32"`` (default) computes float16 values in float32, rounded where
            the graph casts to float16 and at its outputs, as ORT's CPU provider does;
            ``"float16"`` rounds every operator's result (ONNX's definition).
        float64: ``"float32"`` (default) computes double tensors in float32 (WebNN has no
            float64; a ``webnn.onnx.Float64Warning`` says so): double inputs take float64
            feeds, as in ORT, and double outputs are returned as float64 arrays;
            ``"error"`` refuses a model with double tensors (``OnnxImportError``).
        **kwargs: ORT's ``disabled_optimizers`` / ``read_config_from_model`` are accepted and
            ignored; any other keyword is a TypeError.
    """

    def __init__(
        self,
        path_or_bytes: str | os.PathLike | bytes | onnx.ModelProto,
        sess_options: Any = None,
        providers: Sequence | None = None,
        provider_options: Sequence[dict] | None = None,
        *,
        context: webnn.MLContext | None = None,
        free_dims: Mapping[str, int] | None = None,
        max_sizes: Mapping[str, int] | None = None,
        base_dir: str | os.PathLike | None = None,
        constant_inputs: Sequence[str] = (),
        max_cached_graphs: int = 16,
        float16: str = "float32",
        float64: str = "float32",
        **kwargs: Any,
    ):
        self._model, model_dir = _read_model(path_or_bytes)
        self._model = _without_negative_dims(self._model, copy=self._model is path_or_bytes)
        self._base_dir = os.fspath(base_dir) if base_dir is not None else model_dir
        self._sess_options = sess_options if sess_options is not None else SessionOptions()
        self._providers_requested = _normalize_providers(providers, provider_options)
        if context is not None:
            if not isinstance(context, webnn.MLContext):
                raise TypeError(
                    f"InferenceSession: context must be a webnn.MLContext (got {type(context).__name__})"
                )
            self._context = context
        else:
            backend = _backend_for(self._providers_requested)
            threads = _effective_threads(getattr(self._sess_options, "intra_op_num_threads", 0))
            self._context = _shared_context(backend, threads)
        if int(max_cached_graphs) < 1:
            raise ValueError(
                f"InferenceSession: max_cached_graphs must be >= 1 (got {max_cached_graphs})"
            )
        self._max_cached = int(max_cached_graphs)
        self._free_dims = dict(free_dims) if free_dims else None
        self._max_sizes = dict(max_sizes) if max_sizes else None
        from .importer import FLOAT16_MODES

        if float16 not in FLOAT16_MODES:
            raise ValueError(
                f"InferenceSession: float16={float16!r}, expected one of {FLOAT16_MODES}"
            )
        self._float16 = float16
        from .importer import FLOAT64_MODES

        if float64 not in FLOAT64_MODES:
            raise ValueError(
                f"InferenceSession: float64={float64!r}, expected one of {FLOAT64_MODES}"
            )
        self._float64 = float64
        unknown = sorted(set(kwargs) - _ORT_KEYWORDS)
        if unknown:
            raise TypeError(f"InferenceSession: unexpected keyword arguments {unknown}")

        graph = self._model.graph
        initializers = {t.name for t in graph.initializer}
        # Old models (IR < 4) list their initializers among the inputs: those are weights.
        self._input_infos = [vi for vi in graph.input if vi.name not in initializers]
        # ORT lets a feed replace such an initializer from IR 4 on (before, all weights had to
        # be listed as inputs, and they are constants).
        self._overridable = [
            _node_arg(vi)
            for vi in graph.input
            if vi.name in initializers and self._model.ir_version >= 4
        ]
        self._overridable_names = frozenset(a.name for a in self._overridable)
        self._output_infos = list(graph.output)
        self._inputs = [_node_arg(vi) for vi in self._input_infos]
        self._outputs = None  # completed lazily (shape inference costs time on big models)
        self._input_dtypes = {vi.name: _numpy_dtype(vi) for vi in self._input_infos}
        self._input_dims = {vi.name: _dims(vi) for vi in self._input_infos}
        # sequence inputs: name -> the dtype of their elements (fed as lists of arrays)
        self._sequence_inputs = {
            vi.name: element_dtype(vi.type)
            for vi in self._input_infos
            if vi.type.HasField("sequence_type") or vi.type.HasField("optional_type")
        }
        self._input_types = {vi.name: vi.type for vi in self._input_infos}
        self._fast_checks = None  # _feed_fast_path's per-input checks, made on first use
        if self._free_dims:  # fixed sizes: _check_feed then holds feeds to them
            self._input_dims = {
                n: None
                if d is None
                else [self._free_dims.get(x, x) if isinstance(x, str) else x for x in d]
                for n, d in self._input_dims.items()
            }
        self._output_dtypes = {vi.name: _numpy_dtype(vi) for vi in self._output_infos}
        # sequence / optional outputs: name -> the dtype of their tensors (or None)
        self._composite_dtypes = {
            vi.name: element_dtype(vi.type)
            for vi in self._output_infos
            if not vi.type.HasField("tensor_type") and vi.type.WhichOneof("value")
        }
        self._output_names = [vi.name for vi in self._output_infos]

        unknown = [n for n in constant_inputs if n not in self._input_dims]
        if unknown:
            raise ValueError(
                f"InferenceSession: constant_inputs names {unknown} are not model inputs "
                f"(inputs: {list(self._input_dims)})"
            )
        self._folded = set(constant_inputs)
        for vi in self._input_infos:
            dims = self._input_dims[vi.name]
            dtype = self._input_dtypes[vi.name]
            small = (
                dims is not None
                and all(isinstance(d, int) for d in dims)
                and int(np.prod(dims)) <= 1
            )
            if small and dtype is not None and (dtype.kind in "iub"):
                self._folded.add(vi.name)

        self._cache: collections.OrderedDict = collections.OrderedDict()
        self._lock = threading.Lock()
        self.import_count = 0  # how many graphs this session imported (one per signature)
        # The model prepared, its initializers read and its weight-only values folded once, for
        # every signature's graph (whose constants and packed weights the context then shares).
        from .importer import SharedWeights

        self._weights = SharedWeights()
        # A Float64Warning (once per session) points at the caller of __init__ or run: the
        # frames _compiled_for and _import lie between it and import_model (which stands where
        # load's frame is for a load() call).
        self._weights.caller_frames = 2
        # Imports of different signatures take turns: racing ones each read and folded the
        # weights again (SharedWeights is filled by the first import that finishes), a model's
        # worth of memory per racing thread. Runs of compiled signatures do not wait on it.
        self._import_lock = threading.Lock()

        # A model whose inputs are all fixed is imported now, so that an unsupported model
        # fails at construction, as it does with ORT.
        if not self._folded and all(
            d is not None and all(isinstance(x, int) for x in d) for d in self._input_dims.values()
        ):
            # Zero-strided zeros: only the shapes matter here, and a declared shape may be far
            # larger than memory (the import refuses it by name).
            feed = {n: _zeros_view(n, self._input_dims[n], self._input_dtypes[n])
                    for n in self._input_dims}  # fmt: skip
            self._compiled_for(self._signature(feed), feed)

    # --- ORT's query API -------------------------------------------------------------------

    def get_inputs(self) -> list:
        return list(self._inputs)

    def get_outputs(self) -> list:
        if self._outputs is None:
            self._outputs = self._output_node_args()
        return list(self._outputs)

    def get_overridable_initializers(self) -> list:
        """Initializers the model also lists as inputs (ORT lets a feed replace them)."""
        return list(self._overridable)

    def get_providers(self) -> list:
        backend = self._context.backend
        return [_CPU_PROVIDER if backend == "cpu" else backend]

    def get_provider_options(self) -> dict:
        return {self.get_providers()[0]: {}}

    def get_session_options(self):
        return self._sess_options

    def get_modelmeta(self) -> ModelMetadata:
        return ModelMetadata(self._model)

    def set_providers(self, providers=None, provider_options=None) -> None:
        """Re-maps the session onto the backend the providers name (module docstring rule);
        the compiled graphs of the old context are dropped."""
        requested = _normalize_providers(providers, provider_options)
        threads = _effective_threads(getattr(self._sess_options, "intra_op_num_threads", 0))
        context = _shared_context(_backend_for(requested), threads)
        with self._lock:
            self._providers_requested = requested
            if context is not self._context:
                self._context = context
                self._cache.clear()

    def disable_fallback(self) -> None:
        """ORT's switch for falling back to CPU; webnn always runs on its own backend."""

    def enable_fallback(self) -> None:
        """ORT's switch for falling back to CPU; webnn always runs on its own backend."""

    def io_binding(self):
        raise NotImplementedError(
            "webnn.onnx.InferenceSession has no io_binding: use run(), or webnn.onnx.load() and "
            "MLContext.dispatch() on tensors created once (which is what io binding gives in ORT)"
        )

    def run_with_iobinding(self, iobinding, run_options=None):
        self.io_binding()

    def end_profiling(self) -> str:
        raise NotImplementedError(
            "webnn.onnx.InferenceSession does not profile (ORT's enable_profiling has no counterpart)"
        )

    def compiled_graphs(self) -> list:
        """The MLGraphs compiled so far, one per cached shape signature, least recently used
        first (for inspection: their compile_stats show the constants shared between them)."""
        with self._lock:
            slots = list(self._cache.values())
        return [s.compiled.graph for s in slots if s.compiled is not None]

    @property
    def weights_load_count(self) -> int:
        """How many times the model's weights were read (1 once the session imported a graph:
        the graphs of other shapes reuse them, and share their bytes and packed forms)."""
        return self._weights.loads

    @property
    def context(self) -> webnn.MLContext:
        """The webnn context this session runs on."""
        return self._context

    def _output_node_args(self) -> list:
        args = [_node_arg(vi) for vi in self._output_infos]
        if all(a.shape is not None and all(isinstance(d, int) for d in a.shape) for a in args):
            return args
        try:
            inferred = onnx.shape_inference.infer_shapes(self._model)
        except (onnx.shape_inference.InferenceError, ValueError, RuntimeError):
            return args  # best effort: the declared shapes are valid, only less precise
        by_name = {vi.name: _dims(vi) for vi in inferred.graph.output}
        for a in args:
            a.shape = _merge_inferred_shapes(a.shape, by_name.get(a.name))
        return args

    # --- running ---------------------------------------------------------------------------

    def run(self, output_names, input_feed: Mapping[str, Any], run_options: Any = None) -> list:
        """Runs the model; returns numpy arrays for ``output_names`` (None or []: every output)."""
        if not output_names:  # None or [] (ORT: every output)
            names = list(self._output_names)
        else:
            if isinstance(output_names, str):
                raise TypeError(
                    "InferenceSession.run: output_names must be a list of names or None"
                )
            names = list(output_names)
            for n in names:
                if n not in self._output_dtypes:
                    raise ValueError(
                        f"InferenceSession.run: invalid output name {n!r} "
                        f"(model outputs: {self._output_names})"
                    )
        feed = self._check_feed(input_feed)
        compiled = self._compiled_for(self._signature(feed), feed)
        sequence_inputs = getattr(compiled, "sequence_inputs", None)
        if sequence_inputs:
            feed = flatten_feed(feed, sequence_inputs)
        graph_feed = {n: feed[n] for n in compiled.input_desc}
        for n, arr in graph_feed.items():
            if arr.dtype == np.float64:  # a double input (or element) is held as float32
                graph_feed[n] = double_as_float32(arr)[0]  # as the weights (types.py)
            elif held.elem_of_array(arr) is not None:  # int16 as int32, float8 as codes, ...
                graph_feed[n] = held.to_holding(arr)
        results = compiled.run(graph_feed)
        composite = getattr(compiled, "composite_outputs", None) or {}
        out = []
        for n in names:
            if n in composite:  # a sequence (a list) or an optional (its element or None)
                out.append(pack_output(composite[n], results, self._composite_dtypes.get(n)))
                continue
            arr = results[n]
            want = self._output_dtypes.get(n)
            if want is not None and want != object and arr.dtype != want:
                if arr.dtype.kind in "OUS":  # strings the host computed (host_outputs.py)
                    raise OnnxImportError(
                        f"graph output '{n}': declared {np.dtype(want).name} in the model, but "
                        "the node computing it returns strings"
                    )
                elem = held.elem_of_array(np.zeros(0, want))
                if elem is not None:  # held in another type (int32, float32, uint8 codes)
                    arr = held.from_holding(arr, elem)
                else:
                    arr = arr.astype(want)  # e.g. an ONNX bool output carried as uint8
            out.append(arr)
        return out

    def _check_feed(self, input_feed) -> dict:
        fast = self._feed_fast_path(input_feed)
        if fast is not None:
            return fast
        if not isinstance(input_feed, Mapping):
            raise TypeError(
                f"InferenceSession.run: input_feed must be a dict of input name -> array "
                f"(got {type(input_feed).__name__})"
            )
        for name in input_feed:
            if name in self._overridable_names:
                raise ValueError(
                    f"InferenceSession.run: {name!r} is an initializer of the model; feeding a "
                    "value to override it is not supported by webnn (its weights are imported "
                    "as constants)"
                )
            if name not in self._input_dims:
                raise ValueError(
                    f"InferenceSession.run: invalid input name {name!r} "
                    f"(model inputs: {list(self._input_dims)})"
                )
        feed = {}
        for name, dims in self._input_dims.items():
            if name not in input_feed:
                raise ValueError(
                    f"InferenceSession.run: missing input {name!r} (model inputs: {list(self._input_dims)})"
                )
            value = input_feed[name]
            if name in self._sequence_inputs:
                dtype, text = self._sequence_inputs[name], self._inputs_by_name(name).type
                kind = self._input_types[name]
                if kind.HasField("optional_type"):
                    feed[name] = check_optional_feed(
                        name, value, kind.optional_type.elem_type, dtype, text
                    )
                else:
                    feed[name] = check_sequence_feed(name, value, dtype, text)
                continue
            arr = value if isinstance(value, np.ndarray) else np.asarray(value)
            want = self._input_dtypes[name]
            if (
                want is not None
                and arr.dtype != want
                and not (want == object and arr.dtype.kind in "US")
            ):
                # ORT never converts (a string input takes str arrays as well as object ones): a float64 array for a float input is an error there too.
                raise TypeError(
                    f"InferenceSession.run: input {name!r} has the wrong data type: expected "
                    f"{self._inputs_by_name(name).type}, got tensor({_dtype_name(arr.dtype)})"
                )
            if dims is not None:
                if arr.ndim != len(dims):
                    raise ValueError(
                        f"InferenceSession.run: input {name!r} has rank {arr.ndim} (shape "
                        f"{list(arr.shape)}), expected rank {len(dims)} (shape {dims})"
                    )
                for axis, (got, d) in enumerate(zip(arr.shape, dims)):
                    if isinstance(d, int) and got != d:
                        raise ValueError(
                            f"InferenceSession.run: input {name!r} has shape {list(arr.shape)}, "
                            f"expected {dims} (axis {axis}: got {got}, expected {d})"
                        )
            feed[name] = arr
        return feed

    def _feed_fast_path(self, input_feed):
        """The feed as _check_feed returns it when it plainly holds: a dict of exactly the
        model's inputs, numpy arrays of the right dtypes whose shapes match every fixed size
        (per-run checks were a fifth of a small model's call); None sends anything else
        through the checks that explain what is wrong."""
        if (
            type(input_feed) is not dict
            or len(input_feed) != len(self._input_dims)
            or self._sequence_inputs  # lists and None: checked by _check_feed
        ):
            return None
        checks = self._fast_checks
        if checks is None:
            checks = self._fast_checks = [
                (
                    name,
                    self._input_dtypes[name],
                    None if dims is None else len(dims),
                    []
                    if dims is None
                    else [(axis, d) for axis, d in enumerate(dims) if isinstance(d, int)],
                )
                for name, dims in self._input_dims.items()
            ]
        feed = {}
        for name, want, rank, fixed in checks:
            arr = input_feed.get(name)
            if type(arr) is not np.ndarray or (want is not None and arr.dtype != want):
                return None
            if rank is not None:
                shape = arr.shape
                if len(shape) != rank:
                    return None
                for axis, size in fixed:
                    if shape[axis] != size:
                        return None
            feed[name] = arr
        return feed

    def _inputs_by_name(self, name: str) -> NodeArg:
        return next(a for a in self._inputs if a.name == name)

    def _signature(self, feed: dict) -> tuple:
        key = []
        for name, dims in self._input_dims.items():
            arr = feed[name]
            if name in self._sequence_inputs:  # its length and element shapes
                key.append(feed_key(name, arr))
                continue
            if name in self._folded or arr.size == 0:
                # An empty feed (e.g. a decoder's past key/value cache of length 0 on the first
                # call) has no contents: folded as a constant, its shape is all the key needs.
                key.append((name, arr.shape, arr.dtype.str, arr.tobytes()))
            elif self._max_sizes and dims is not None:
                # Axes named in max_sizes stay dynamic: any size up to the bound shares a graph.
                axes = []
                for axis, (d, size) in enumerate(zip(dims, arr.shape)):
                    if isinstance(d, str) and d in self._max_sizes:
                        if size > self._max_sizes[d]:
                            raise ValueError(
                                f"InferenceSession.run: input {name!r} axis {axis} ({d!r}) is "
                                f"{size}, above max_sizes[{d!r}] = {self._max_sizes[d]}"
                            )
                        axes.append(d)
                    else:
                        axes.append(size)
                key.append((name, tuple(axes)))
            else:
                key.append((name, arr.shape))
        return tuple(key)

    def _input_shape(self, name: str, arr: np.ndarray) -> list:
        """The shape the graph declares for an input: the feed's sizes, with the axes named in
        max_sizes as dynamic dimensions (their names made identifiers, as WebNN wants)."""
        dims = self._input_dims[name]
        if not self._max_sizes or dims is None:
            return list(arr.shape)
        out = []
        for d, size in zip(dims, arr.shape):
            if isinstance(d, str) and d in self._max_sizes:
                ident = re.sub(r"[^A-Za-z0-9_]", "_", d)
                if not re.match(r"[A-Za-z_]", ident):
                    ident = "_" + ident
                out.append({"name": ident, "maxSize": int(self._max_sizes[d])})
            else:
                out.append(int(size))
        return out

    def _compiled_for(self, key: tuple, feed: dict) -> _Compiled:
        owner = False
        with self._lock:
            slot = self._cache.get(key)
            if slot is not None:
                self._cache.move_to_end(key)
                if slot.compiled is not None:  # imported: no need to wait on its event
                    return slot.compiled
            else:
                slot, owner = _Pending(), True
                self._cache[key] = slot
                while len(self._cache) > self._max_cached:
                    self._cache.popitem(last=False)
        if not owner:
            slot.done.wait()  # another thread imports this signature (or already did)
            if slot.error is not None:
                raise slot.error
            return slot.compiled
        try:
            slot.compiled = self._import(feed)
        except BaseException as e:
            slot.error = e
            with self._lock:
                if self._cache.get(key) is slot:
                    del self._cache[key]  # a later call may try again
            raise
        finally:
            slot.done.set()
        return slot.compiled

    def _import(self, feed: dict) -> _Compiled:
        from webnn import onnx as webnn_onnx  # the package defines load before importing us

        sequences = self._sequence_inputs
        folded = set(self._folded) | {
            n for n, a in feed.items() if n not in sequences and a.size == 0
        }
        input_shapes = {
            n: feed_shapes(a) if n in sequences else self._input_shape(n, a)
            for n, a in feed.items()
            if n not in folded
        }
        constants = {n: feed[n] for n in folded}
        kwargs = {"float16": self._float16, "float64": self._float64}
        if self._free_dims:
            kwargs["free_dims"] = self._free_dims
        if constants:
            kwargs["constants"] = constants
        if self._base_dir is not None:
            kwargs["base_dir"] = self._base_dir
        # One context for the builder, the dispatches and an inner session: a set_providers
        # of another thread may replace self._context while this import runs.
        context = self._context
        with self._import_lock:
            # host_cuts: a NonMaxSuppression / NonZero / ... on run-time values ends the graph;
            # the host runs it and an inner session the rest (host_segments.py).
            imported = webnn_onnx.import_model(
                context.create_graph_builder(),
                self._model,
                input_shapes=input_shapes,
                weights=self._weights,
                host_cuts=True,
                **kwargs,
            )
            graph = None if not imported.operands else imported.build()
        with self._lock:
            self.import_count += 1
        inputs = []
        for n in self._input_dims:
            if n not in folded:
                inputs.extend(imported.sequence_inputs.get(n, [n]))
        if graph is None:  # every output an empty sequence / optional (host_cut: never)
            compiled = NoGraph()
        else:
            compiled = _Compiled(
                context, graph, inputs, imported.host_outputs, imported.host_inputs
            )
        compiled.sequence_inputs = imported.sequence_inputs
        compiled.composite_outputs = imported.composite_outputs
        if imported.host_cut is None:
            return compiled
        from .host_segments import SegmentedModel

        return SegmentedModel(compiled, imported.host_cut, self._weights.prepared or self._model,
                              functools.partial(self._inner_session, context))  # fmt: skip

    def _inner_session(self, context, model: onnx.ModelProto, fold=()) -> InferenceSession:
        """A session for the part of the model after a host node (or from a node needing the
        values `fold` at import), on the same context."""
        return InferenceSession(
            model,
            context=context,
            constant_inputs=list(fold),
            max_cached_graphs=self._max_cached,
            float16=self._float16,
            float64=self._float64,
        )


def _zeros_view(name: str, dims: list, dtype) -> np.ndarray:
    """A feed of zeros of the declared shape that allocates one element."""
    try:
        return np.broadcast_to(np.zeros((), dtype or np.float32), dims)
    except ValueError as exc:  # a negative or absurd declared dimension
        raise OnnxImportError(f"graph input '{name}': declared shape {dims}: {exc}") from exc


def _dtype_name(dtype: np.dtype) -> str:
    """numpy dtype -> ORT's element type name ('float', 'double', 'int64', ...)."""
    try:
        elem = onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
        return TensorProto.DataType.Name(elem).lower()
    except (KeyError, TypeError, ValueError):
        return str(dtype)
