"""Hostile random call sequences on the public Python API (issue 8, items 4 and 6).

Contexts, builders, operands (every builder operation, with random shapes, data types and
options), graphs (built, saved, loaded, loaded from damaged files), tensors (created with
random shapes, written and read with wrong sizes and types, resized) and dispatches (with
missing, extra, mismatched, destroyed and foreign tensors) are made and used in random order,
and dropped in random order: a context before its graphs and tensors, a builder before its
operands, from several threads sharing the same objects.

Only the documented exceptions may come out of a call (api.md §5: TypeError, ValueError,
OverflowError, RuntimeError, NotImplementedError, OSError), each with a message that is not
an internal error; anything else, a crash, or a step that makes no progress for
--hang-seconds (the watchdog dumps every thread's stack and exits 3) is a finding.

    python tests/fuzz/fuzz_python_api.py --seed 1 --steps 2000 [--threads 4]

Under ASan: tests/python/test_api_random_sequences.py runs this module; scale it with
WEBNN_API_FUZZ_SEEDS / WEBNN_API_FUZZ_STEPS (docs/reliability.md).
"""

from __future__ import annotations

import argparse
import ast
import faulthandler
import gc
import os
import random
import re
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path

import numpy as np
import webnn

ALLOWED = (TypeError, ValueError, OverflowError, RuntimeError, NotImplementedError, OSError)
BAD_MESSAGE = re.compile(r"internal", re.IGNORECASE)
DTYPES = [
    "float32",
    "float16",
    "int32",
    "uint32",
    "int64",
    "uint64",
    "int8",
    "uint8",
    "int4",
    "uint4",
]
NUMPY_OF = {"int4": np.int8, "uint4": np.uint8}
MAX_ELEMENTS = 1 << 16  # operands kept for further use: dispatches stay fast under ASan
ENUMS = [
    "nchw", "nhwc", "oihw", "hwio", "ohwi", "ihwo", "iohw", "hwoi", "forward", "backward",
    "both", "zrn", "rzn", "iofg", "ifgo", "nearest-neighbor", "linear", "constant", "edge",
    "reflection", "symmetric", "floor", "ceil", "sigmoid", "tanh", "relu", "int32", "int64",
    "float32", "uint8", "", "NCHW", "x" * 300, "nchw\x00",
]  # fmt: skip
HOSTILE_INTS = [-1, -(2**31), 2**31, 2**32 + 1, 2**63 - 1, 2**63, 2**64, -(2**63)]
HOSTILE_SCALARS = [None, "3", 1.5, float("nan"), [], {}, object(), b"\x00"]
SKIPPED_METHODS = {"__init__", "input", "constant", "build", "save", "operand_shape",
                   "operand_data_type"}  # fmt: skip


def builder_operations():
    """Each MLGraphBuilder operation: (name, [(param, annotation, has_default, kw_only)])."""
    stub = Path(webnn.__file__).with_name("_webnn.pyi")
    tree = ast.parse(stub.read_text())
    ops = []
    for cls in tree.body:
        if not (isinstance(cls, ast.ClassDef) and cls.name == "MLGraphBuilder"):
            continue
        for fn in cls.body:
            if not isinstance(fn, ast.FunctionDef) or fn.name in SKIPPED_METHODS:
                continue
            pos = fn.args.args[1:]
            first_default = len(pos) - len(fn.args.defaults)
            params = [(a.arg, ast.unparse(a.annotation), i >= first_default, False)
                      for i, a in enumerate(pos)]  # fmt: skip
            params += [(a.arg, ast.unparse(a.annotation), True, True) for a in fn.args.kwonlyargs]
            ops.append((fn.name, params))
    return ops


def element_count(shape):
    """Elements of a shape (dynamic dimensions at their maxSize); 2**64 for a hostile one."""
    n = 1
    for d in shape if isinstance(shape, (list, tuple)) else [2**64]:
        d = d.get("maxSize") if isinstance(d, dict) else d
        if not isinstance(d, int) or d < 0:
            return 2**64
        n *= d
    return n


class Finding(Exception):
    pass


class ApiFuzz:
    def __init__(self, seed, workdir):
        self.seed = seed
        self.workdir = Path(workdir)
        self.ml = webnn.ML()
        self.ops = builder_operations()
        self.pools = {
            "ctx": [],
            "builder": [],
            "operand": [],
            "graph": [],
            "tensor": [],
            "file": [],
        }
        self.lock = threading.Lock()  # guards the pools only: engine calls run outside it
        self.counts = {"steps": 0, "calls": 0, "ok": 0}
        self.refusals = {}
        self.built = set()  # id() of the builders that build() consumed (they stay pooled)
        self.ok_by_call = {}  # how far the sequences get: successful calls of each kind
        self.findings = []
        self.progress = 0
        self.file_id = 0

    # ---- pools -------------------------------------------------------------------------
    def pick(self, rng, kind):
        with self.lock:
            items = self.pools[kind]
            if kind == "builder" and rng.random() < 0.9:  # mostly builders not yet built
                items = [b for b in items if id(b[1]) not in self.built] or items
            return rng.choice(items) if items else None

    def add(self, kind, item):
        with self.lock:
            self.pools[kind].append(item)
            if len(self.pools[kind]) > 40:  # bounded: the oldest go (a release in any order)
                self.pools[kind].pop(0)

    def drop(self, rng):
        with self.lock:
            kind = rng.choice(list(self.pools))
            if self.pools[kind]:
                self.pools[kind].pop(rng.randrange(len(self.pools[kind])))

    # ---- the one place where the API is called -----------------------------------------
    def call(self, what, fn, *args, **kwargs):
        with self.lock:
            self.counts["calls"] += 1
        try:
            result = fn(*args, **kwargs)
        except ALLOWED as exc:
            message = str(exc)
            if BAD_MESSAGE.search(message) or not message.strip():
                self.finding(what, f"{type(exc).__name__}: {message!r}", args, kwargs)
            with self.lock:
                name = type(exc).__name__
                self.refusals[name] = self.refusals.get(name, 0) + 1
            return None, exc
        except Exception as exc:  # noqa: BLE001 - anything else is the finding
            self.finding(what, f"{type(exc).__name__}: {exc}", args, kwargs)
            return None, exc
        with self.lock:
            self.counts["ok"] += 1
            self.ok_by_call[what] = self.ok_by_call.get(what, 0) + 1
        return result, None

    def finding(self, what, error, args, kwargs):
        text = f"{what}: {error}\n    args={shorten(args)} kwargs={shorten(kwargs)}"
        with self.lock:
            self.findings.append(text)
        print(f"FINDING (seed {self.seed}): {text}", file=sys.stderr, flush=True)

    # ---- random values -----------------------------------------------------------------
    def dtype(self, rng):
        r = rng.random()
        if r < 0.93:
            return rng.choice(DTYPES)
        return rng.choice(["float64", "bool", "FLOAT32", "", None, 3, "bfloat16"])

    def shape(self, rng, dynamic=False):
        r = rng.random()
        if r < 0.05:
            return rng.choice([[0], [-1], [2**40, 2**40], [2**64], ["a"], [1.5], None, 7,
                               [2**31, 2**31, 4], [1] * 20, [{"name": "n"}]])  # fmt: skip
        rank = rng.choice([0, 1, 1, 2, 2, 3, 3, 4, 4, 5])
        dims = [rng.choice([1, 1, 2, 2, 3, 4, 5, 6]) for _ in range(rank)]
        if dynamic and rank and rng.random() < 0.2:
            dims[rng.randrange(rank)] = {
                "name": rng.choice(["n", "m"]),
                "maxSize": rng.choice([2, 4, 8]),
            }
        return dims

    def array(self, rng, shape, dtype):
        np_type = NUMPY_OF.get(dtype, dtype) if dtype in DTYPES else np.float32
        count = element_count(shape)
        if count > MAX_ELEMENTS or not all(isinstance(d, (int, dict)) for d in shape):
            shape, count = [3], 3  # a hostile shape asked for: some data of the wrong size
        if np.dtype(np_type).kind == "f":
            values = rng.choice([np.float32("nan"), np.inf, -1.5, 0.0, 3.25, 6e4, -1e9])
            data = np.linspace(-3, 3, count).astype(np_type)
            if count and rng.random() < 0.3:
                data[rng.randrange(count)] = values
        else:
            lo, hi = {"int4": (-8, 7), "uint4": (0, 15)}.get(dtype, (0, 7))
            data = np.array([rng.randint(lo, hi) for _ in range(count)]).astype(np_type)
        return data.reshape([d["maxSize"] if isinstance(d, dict) else d for d in shape])

    def value_for(self, rng, name, annotation, builder, rank, like=None):
        """A value for one parameter of a builder operation, usually plausible."""
        if rng.random() < 0.03:
            return rng.choice(HOSTILE_SCALARS + HOSTILE_INTS)
        optional = annotation.endswith("| None")
        if optional and rng.random() < 0.4:
            return None
        base = annotation.removesuffix(" | None")
        if base == "MLOperand":
            return self.operand_arg(rng, builder, like)
        if base == "Sequence[MLOperand]":
            return [self.operand_arg(rng, builder, like) for _ in range(rng.randint(0, 3))]
        if base == "bool":
            return rng.random() < 0.5
        if base in ("float", "int | float"):
            return rng.choice([0.0, 1.0, -1.0, 0.5, 1e-5, 3, float("nan"), float("inf"), 1e308])
        if base == "str":
            if name == "label":
                return rng.choice(["", "l", "x" * 1000, "é\n\x00", "{}"])
            return rng.choice(DTYPES + ENUMS) if "type" in name else rng.choice(ENUMS)
        if base == "int":
            if name in ("axis",):
                return rng.randint(-rank - 1, rank)
            return rng.choice([0, 1, 1, 2, 3, 4, -1] + HOSTILE_INTS[:2])
        if base == "int | Sequence[int]":
            return (
                rng.randint(1, 3)
                if rng.random() < 0.5
                else [rng.randint(0, 3) for _ in range(rng.randint(1, 3))]
            )
        if base.startswith("Sequence[int"):
            n = rank if rng.random() < 0.7 else rng.randint(0, 5)
            if name in ("axes", "permutation"):
                values = list(range(rank))
                rng.shuffle(values)
                return values[: rng.randint(0, rank)] if name == "axes" else values
            return [rng.choice([0, 1, 1, 2, 3]) for _ in range(n)]
        if base == "Sequence[float]":
            return [
                rng.choice([0.5, 1.0, 2.0, 3.0, 0.0, -1.0, float("nan")])
                for _ in range(rng.randint(0, 3))
            ]
        if base == "Sequence[str]":
            return [rng.choice(ENUMS) for _ in range(rng.randint(0, 3))]
        return None

    def operand_arg(self, rng, builder, like=None):
        """An operand of `builder`; often one with the shape and type of `like` (the
        operation's first operand), so that elementwise operations get valid pairs."""
        r = rng.random()
        if r < 0.02:
            return rng.choice([None, 1, "x"])
        if r < 0.05 and (t := self.pick(rng, "tensor")) is not None:
            return t[1]
        with self.lock:
            own = [o for o in self.pools["operand"] if o[0] is builder]
            any_op = self.pools["operand"]
            if r < 0.08 and any_op:
                return rng.choice(any_op)[1]  # maybe another builder's
            if like is not None and rng.random() < 0.7:
                same = [o for o in own if o[2] == like[2] and o[3] == like[3]]
                if same:
                    return rng.choice(same)[1]
            if own:
                computed = [o for o in own if o[4]]
                return rng.choice(computed if computed and rng.random() < 0.5 else own)[1]
        return None

    # ---- actions -----------------------------------------------------------------------
    def step(self, rng):
        with self.lock:
            self.counts["steps"] += 1
            self.progress += 1
        ctx_entry = self.pick(rng, "ctx")
        if ctx_entry is None or rng.random() < 0.02:
            return self.create_context(rng)
        action = rng.choices(
            [self.create_context, self.create_builder, self.make_input, self.make_constant,
             self.make_operation, self.query_operand, self.build, self.save_and_load,
             self.load_damaged, self.create_tensor, self.write_tensor, self.read_tensor,
             self.resize_tensor, self.dispatch, self.compute, self.destroy_tensor,
             self.inspect_graph, self.drop_objects],
            weights=[1, 3, 6, 6, 25, 2, 5, 1, 1, 5, 5, 4, 2, 10, 3, 2, 2, 6],
        )[0]  # fmt: skip
        action(rng)

    def create_context(self, rng):
        backend = rng.choice(
            ["cpu", "reference", "cpu", "auto"] + (["gpu", "", 1] if rng.random() < 0.1 else [])
        )
        pp = (
            "default"
            if rng.random() < 0.9
            else rng.choice(["low-power", "high-performance", "fast", None])
        )
        ctx, _ = self.call("create_context", self.ml.create_context, pp, False, backend)
        if ctx is not None:
            self.add("ctx", ctx)

    def create_builder(self, rng):
        ctx = self.pick(rng, "ctx")
        builder, _ = self.call("create_graph_builder", ctx.create_graph_builder)
        if builder is not None:
            self.add("builder", (ctx, builder))

    def remember(self, builder, op, computed):
        """Keeps a new operand for later calls if it is small enough to compute quickly:
        (builder, operand, shape, data type, whether an operation made it)."""
        if not isinstance(op, webnn.MLOperand):
            return
        shape, _ = self.call("operand_shape", builder.operand_shape, op)
        dtype, _ = self.call("operand_data_type", builder.operand_data_type, op)
        if shape is not None and element_count(shape) <= MAX_ELEMENTS:
            self.add("operand", (builder, op, shape, dtype, computed))

    def make_input(self, rng):
        if (entry := self.pick(rng, "builder")) is None:
            return
        name = rng.choice(["x", "y", "z", f"in{rng.randrange(100)}", "", "a b", "é"])
        op, _ = self.call(
            "input", entry[1].input, name, self.shape(rng, dynamic=True), self.dtype(rng)
        )
        self.remember(entry[1], op, False)

    def make_constant(self, rng):
        if (entry := self.pick(rng, "builder")) is None:
            return
        builder = entry[1]
        shape = self.shape(rng)
        if element_count(shape) > MAX_ELEMENTS or not all(isinstance(d, int) for d in shape):
            value, shape_arg = (
                rng.choice([1.0, [[1, 2], [3]], "abc", None, np.zeros((2, 0))]),
                shape,
            )
        else:
            dtype = rng.choice(DTYPES + ["float64", "bool"])
            source = {"float64": np.float64, "bool": np.bool_}.get(dtype)
            value = (
                self.array(rng, shape, "float32").astype(source)
                if source
                else self.array(rng, shape, dtype)
            )
            shape_arg = None if rng.random() < 0.7 else self.shape(rng)
        data_type = None if rng.random() < 0.6 else self.dtype(rng)
        op, _ = self.call("constant", builder.constant, value, shape_arg, data_type)
        self.remember(builder, op, False)

    def make_operation(self, rng):
        if (entry := self.pick(rng, "builder")) is None:
            return
        builder = entry[1]
        name, params = rng.choice(self.ops)
        args, kwargs = [], {}
        rank, like = 0, None
        positional = rng.random() < 0.5
        for param, annotation, has_default, kw_only in params:
            if has_default and rng.random() < 0.5:
                positional = False  # a skipped parameter: the rest by keyword
                continue
            value = self.value_for(rng, param, annotation, builder, rank, like)
            if isinstance(value, webnn.MLOperand) and like is None:
                with self.lock:
                    like = next((o for o in self.pools["operand"] if o[1] is value), None)
                rank = len(like[2]) if like else 0
            if positional and not kw_only:
                args.append(value)
            else:
                kwargs[param] = value
        result, _ = self.call(name, getattr(builder, name), *args, **kwargs)
        for op in result if isinstance(result, list) else [result]:
            self.remember(builder, op, True)

    def query_operand(self, rng):
        entry, builder = self.pick(rng, "operand"), self.pick(rng, "builder")
        if entry is None or builder is None:
            return
        target = builder[1] if rng.random() < 0.2 else entry[0]
        self.call("operand_shape", target.operand_shape, entry[1])
        self.call("operand_data_type", target.operand_data_type, entry[1])

    def outputs_for(self, rng, builder):
        with self.lock:
            own = [
                o[1]
                for o in self.pools["operand"]
                if o[0] is builder and (o[4] or rng.random() < 0.1)
            ]
            other = [o[1] for o in self.pools["operand"]]
        if rng.random() < 0.05:
            return rng.choice([{}, [], None, {"": own[0]} if own else {}, {"y": 3}])
        chosen = rng.sample(own, min(len(own), rng.randint(1, 3))) if own else []
        if other and rng.random() < 0.05:
            chosen.append(rng.choice(other))
        return {f"out{i}": op for i, op in enumerate(chosen)}

    def build(self, rng):
        if (entry := self.pick(rng, "builder")) is None:
            return
        ctx, builder = entry
        graph, _ = self.call("build", builder.build, self.outputs_for(rng, builder))
        with self.lock:
            self.built.add(id(builder))  # consumed on failure too (api.md 9.6)
        if graph is not None:
            self.add("graph", (ctx, graph))

    def save_and_load(self, rng):
        if (entry := self.pick(rng, "builder")) is None:
            return
        with self.lock:
            self.file_id += 1
            path = self.workdir / f"g{self.seed}_{self.file_id % 8}.webnn"
        if rng.random() < 0.05:
            path = self.workdir / "missing_dir" / "g.webnn"
        _, exc = self.call("save", entry[1].save, self.outputs_for(rng, entry[1]), str(path))
        if exc is None:
            self.add("file", path)
        ctx = self.pick(rng, "ctx")
        graph, _ = self.call("load_graph", ctx.load_graph, str(path))
        if graph is not None:
            self.add("graph", (ctx, graph))

    def load_damaged(self, rng):
        """A saved graph or its sidecar with bytes flipped, cut or appended, then loaded."""
        path, ctx = self.pick(rng, "file"), self.pick(rng, "ctx")
        if path is None:
            return
        sidecar = path.with_suffix(".safetensors")
        victim = sidecar if sidecar.exists() and rng.random() < 0.5 else path
        try:
            data = bytearray(victim.read_bytes())
        except OSError:
            return  # another thread's save is renaming it
        if data:
            for _ in range(rng.randint(1, 4)):
                i = rng.randrange(len(data))
                data[i] = rng.randrange(256)
            if rng.random() < 0.3:
                data = data[: rng.randrange(len(data))]
        with self.lock:
            self.file_id += 1
            damaged_dir = self.workdir / f"damaged{self.seed}_{self.file_id % 4}"
        damaged_dir.mkdir(exist_ok=True)
        for f in (path, sidecar):
            if f.exists() and f != victim:
                try:
                    (damaged_dir / f.name).write_bytes(f.read_bytes())
                except OSError:
                    return
        (damaged_dir / victim.name).write_bytes(bytes(data))
        graph, _ = self.call("load_graph(damaged)", ctx.load_graph, str(damaged_dir / path.name))
        if graph is not None:
            self.add("graph", (ctx, graph))

    def create_tensor(self, rng, shape=None, dtype=None, ctx=None):
        ctx = ctx or self.pick(rng, "ctx")
        shape = shape if shape is not None else self.shape(rng)
        flags = [rng.random() < 0.8, rng.random() < 0.8]
        if rng.random() < 0.03:
            flags = [rng.choice([1, "yes", None]), True]
        tensor, _ = self.call(
            "create_tensor", ctx.create_tensor, shape, dtype or self.dtype(rng), *flags
        )
        if tensor is not None:
            self.add("tensor", (ctx, tensor))
        return tensor

    def tensor_and_context(self, rng):
        entry = self.pick(rng, "tensor")
        if entry is None:
            return None, None
        ctx = entry[0] if rng.random() < 0.9 else self.pick(rng, "ctx")
        return entry[1], ctx

    def data_for(self, rng, tensor):
        try:
            shape, dtype = tensor.shape, tensor.data_type
        except ALLOWED:
            shape, dtype = [2], "float32"
        r = rng.random()
        if r < 0.6:
            return self.array(rng, shape, dtype)
        if r < 0.75:
            return self.array(rng, shape, rng.choice(DTYPES))  # needs adapting or refusing
        if r < 0.9:
            return self.array(
                rng,
                self.shape(rng) if rng.random() < 0.5 else [element_count(shape) + 1],
                "float32",
            )
        return rng.choice([None, "abc", [[1, 2], [3]], 1.5, [float("nan")], np.zeros(3, np.complex64),
                           np.zeros((4, 4), np.float32)[:, ::2], object()])  # fmt: skip

    def write_tensor(self, rng):
        tensor, ctx = self.tensor_and_context(rng)
        if tensor is None:
            return
        if rng.random() < 0.03:
            tensor = rng.choice([None, 3, self.pick(rng, "graph")])
        data = self.data_for(rng, tensor) if isinstance(tensor, webnn.MLTensor) else np.zeros(2)
        if isinstance(data, np.ndarray) and data.size and data.size * data.itemsize > (1 << 26):
            return
        self.call("write_tensor", ctx.write_tensor, tensor, data)

    def read_tensor(self, rng):
        tensor, ctx = self.tensor_and_context(rng)
        if tensor is None:
            return
        dtype = (
            None if rng.random() < 0.85 else rng.choice([np.float32, np.int8, "float16", "xx", 3])
        )
        self.call("read_tensor", ctx.read_tensor, tensor, dtype)

    def resize_tensor(self, rng):
        tensor, ctx = self.tensor_and_context(rng)
        if tensor is None:
            return
        method = ctx.resize_tensor if rng.random() < 0.6 else ctx.set_tensor_capacity
        self.call(method.__name__, method, tensor, self.shape(rng))

    def bindings(self, rng, ctx, descriptors, tensors_of_ctx):
        """Tensors for a graph's inputs or outputs: usually right, sometimes wrong."""
        named = {}
        for name, desc in descriptors.items():
            sizes = {}
            shape = [
                sizes.setdefault(d["name"], rng.randint(1, d["maxSize"]))
                if isinstance(d, dict)
                else d
                for d in desc["shape"]
            ]
            match = [t for t in tensors_of_ctx if safe_meta(t) == (desc["data_type"], shape)]
            if match and rng.random() < 0.7:
                named[name] = rng.choice(match)
            else:
                named[name] = self.create_tensor(rng, shape, desc["data_type"], ctx)
        r = rng.random()
        if r < 0.05 and named:
            named.pop(rng.choice(list(named)))
        elif r < 0.1:
            named[rng.choice(["extra", "x", ""])] = (
                rng.choice(tensors_of_ctx) if tensors_of_ctx else None
            )
        elif r < 0.15 and named and (t := self.pick(rng, "tensor")) is not None:
            named[rng.choice(list(named))] = t[1]  # any shape, type or context
        elif r < 0.17:
            return rng.choice([None, [], "x", {1: None}])
        return named

    def dispatch(self, rng):
        entry = self.pick(rng, "graph")
        if entry is None:
            return
        ctx, graph = entry
        if rng.random() < 0.05:
            ctx = self.pick(rng, "ctx")
        ins, _ = self.call("input_descriptors", lambda: graph.input_descriptors)
        outs, _ = self.call("output_descriptors", lambda: graph.output_descriptors)
        if ins is None or outs is None:
            return
        with self.lock:
            mine = [t for c, t in self.pools["tensor"] if c is ctx]
        inputs = self.bindings(rng, ctx, ins, mine)
        outputs = self.bindings(rng, ctx, outs, mine)
        if isinstance(inputs, dict) and isinstance(outputs, dict):
            for t in list(inputs.values()) + list(outputs.values()):
                if isinstance(t, webnn.MLTensor) and rng.random() < 0.05:
                    self.call("write_tensor", ctx.write_tensor, t, self.data_for(rng, t))
        _, exc = self.call("dispatch", ctx.dispatch, graph, inputs, outputs)
        if exc is None and isinstance(outputs, dict):
            for t in outputs.values():
                if isinstance(t, webnn.MLTensor) and t.readable:
                    self.call("read_tensor", ctx.read_tensor, t)

    def compute(self, rng):
        entry = self.pick(rng, "graph")
        if entry is None:
            return
        ctx, graph = entry
        ins, _ = self.call("input_descriptors", lambda: graph.input_descriptors)
        if ins is None:
            return
        feeds = {}
        for name, desc in ins.items():
            shape = [d["maxSize"] if isinstance(d, dict) else d for d in desc["shape"]]
            feeds[name] = self.array(
                rng, shape if rng.random() < 0.9 else self.shape(rng), desc["data_type"]
            )
        if feeds and rng.random() < 0.1:
            feeds.pop(rng.choice(list(feeds)))
        self.call("compute", ctx.compute, graph, feeds)

    def destroy_tensor(self, rng):
        entry = self.pick(rng, "tensor")
        if entry is not None:
            self.call("destroy", entry[1].destroy)

    def inspect_graph(self, rng):
        entry = self.pick(rng, "graph")
        if entry is None:
            return
        graph = entry[1]
        for attr in ("input_descriptors", "output_descriptors", "compile_stats", "profile",
                     "operand_count", "operation_count"):  # fmt: skip
            self.call(attr, getattr, graph, attr)
        self.call("set_profiling", graph.set_profiling, rng.random() < 0.5)
        self.call("repr", repr, graph)

    def drop_objects(self, rng):
        for _ in range(rng.randint(1, 3)):
            self.drop(rng)
        if rng.random() < 0.1:
            gc.collect()


def safe_meta(tensor):
    try:
        return tensor.data_type, tensor.shape
    except ALLOWED:
        return None


def shorten(value):
    text = repr(value)
    return text if len(text) < 300 else text[:300] + "..."


def run(seed, steps, threads=1, hang_seconds=120.0, workdir=None):
    warnings.simplefilter("ignore")  # numpy casting warnings of hostile data: not findings
    """Runs `steps` steps per thread; returns the fuzzer (counts, refusals, findings)."""
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        fuzz = ApiFuzz(seed, tmp)
        done = threading.Event()

        def worker(index):
            rng = random.Random(seed * 1000 + index)
            for _ in range(steps):
                fuzz.step(rng)

        def watchdog():  # a hang is a finding: every thread's stack, then exit
            last, since = -1, time.monotonic()
            while not done.wait(1.0):
                if fuzz.progress != last:
                    last, since = fuzz.progress, time.monotonic()
                elif time.monotonic() - since > hang_seconds:
                    print(
                        f"HANG (seed {seed}): no step finished in {hang_seconds} s", file=sys.stderr
                    )
                    faulthandler.dump_traceback(all_threads=True)
                    os._exit(3)

        dog = threading.Thread(target=watchdog, daemon=True)
        dog.start()
        try:
            if threads == 1:
                worker(0)
            else:
                pool = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
                for t in pool:
                    t.start()
                for t in pool:
                    t.join()
            for kind in fuzz.pools:  # whatever is left goes, then a collection
                fuzz.pools[kind].clear()
            gc.collect()
        finally:
            done.set()
        return fuzz


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--seeds", type=int, default=1, help="run seeds seed .. seed+N-1")
    parser.add_argument("--steps", type=int, default=2000, help="steps per thread")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--hang-seconds", type=float, default=120.0)
    parser.add_argument("--verbose", action="store_true", help="successful calls of each kind")
    a = parser.parse_args()
    total = {"steps": 0, "calls": 0, "ok": 0}
    findings = 0
    start = time.monotonic()
    for seed in range(a.seed, a.seed + a.seeds):
        fuzz = run(seed, a.steps, a.threads, a.hang_seconds)
        for k in total:
            total[k] += fuzz.counts[k]
        findings += len(fuzz.findings)
        print(
            f"seed {seed}: {fuzz.counts} refusals {fuzz.refusals} findings {len(fuzz.findings)}",
            flush=True,
        )
        if a.verbose:
            print(
                "  successful calls:", dict(sorted(fuzz.ok_by_call.items(), key=lambda kv: -kv[1]))
            )
    print(f"total: {total}, findings {findings}, {time.monotonic() - start:.0f} s")
    sys.exit(1 if findings else 0)


if __name__ == "__main__":
    main()
