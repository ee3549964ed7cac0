"""The kernels of the 2026-12-04 sessions under threads (docs/reliability.md, tools/sanitize.sh
tsan): vectorized casts (cpu/cast.inc), float32 comparisons and `where` on vector selects
(predicate.inc, where.cc), gather of constant indices by runs (gather.cc), NCHW <-> NHWC
transposes split by output rows (layout_transpose.cc), TopK's sorting network (an ONNX TopK),
erf, pad (movement.cc), argMin / argMax (arg_min_max.cc), column reduceMax / reduceMin
(reduction.cc) and the dynamically quantized LSTM (dynamic_lstm.cc).

Each graph is large enough to be split over the pool's two threads. Four Python threads
dispatch it at once on one context with WEBNN_NUM_THREADS=2, two by two on the same compiled
graph and on a second one compiled from the same builder calls (so packed constants are
shared), each with inputs of its own; every result is bit-identical to a run of the same inputs
on a one-thread context, and those serial results are checked against numpy, the reference
backend or ONNX Runtime."""

import math

import numpy as np
import pytest
import webnn
from test_threads_models import hammer

THREADS = 4
ROUNDS = 3


def same_bits(got, want):
    assert got.keys() == want.keys()
    for name in want:
        a, b = np.ascontiguousarray(got[name]), np.ascontiguousarray(want[name])
        assert a.dtype == b.dtype and a.shape == b.shape, name
        assert np.array_equal(a.view(np.uint8), b.view(np.uint8)), name


def context(monkeypatch, threads, backend="cpu"):
    monkeypatch.setenv("WEBNN_NUM_THREADS", str(threads))
    return webnn.ML().create_context(accelerated=False, backend=backend)


def run_threaded(monkeypatch, build, feeds, check):
    """build(ctx) -> MLGraph; feeds: one dict per Python thread; check(feeds, result) tests a
    serial result against an independent expectation."""
    serial_ctx = context(monkeypatch, 1)
    serial_graph = build(serial_ctx)
    serial = [serial_ctx.compute(serial_graph, f) for f in feeds]
    for f, r in zip(feeds, serial):
        check(f, r)
    pooled = context(monkeypatch, 2)
    graphs = [build(pooled), build(pooled)]
    for f, r in zip(feeds, serial):  # one thread at a time first: the pool's split alone
        same_bits(pooled.compute(graphs[0], f), r)

    def work(i):
        for _ in range(ROUNDS):
            same_bits(pooled.compute(graphs[i % 2], feeds[i]), serial[i])

    hammer(len(feeds), work)


def builder_graph(make):
    """make(b) -> {name: input descriptor (shape, type)}, {name: output operand}."""

    def build(ctx):
        b = ctx.create_graph_builder()
        return b.build(make(b))

    return build


def matches_reference(make, monkeypatch):
    def check(feeds, result):
        ref = context(monkeypatch, 1, "reference")
        same_bits(result, ref.compute(builder_graph(make)(ref), feeds))

    return check


def per_thread(fn):
    return [fn(np.random.default_rng(100 + i)) for i in range(THREADS)]


# ---- casts, comparisons, where -------------------------------------------------------------

N = 1 << 18
CAST_TARGETS = ["int8", "uint8", "int32", "uint32", "int64", "uint64"]


def test_vectorized_casts(monkeypatch):
    def make(b):
        x = b.input("x", [N], "float32")
        i = b.input("i", [N], "int32")
        outs = {f"x_{t}": b.cast(x, t) for t in CAST_TARGETS}
        outs.update({f"i_{t}": b.cast(i, t) for t in ("float32", "int8", "uint8", "int64")})
        return outs

    def feeds(rng):
        x = rng.uniform(-3e4, 3e4, N).astype(np.float32)
        x[::97] = rng.uniform(-300, 300, x[::97].size).round(1)  # in every small target's range
        x[5::1013] = np.nan
        x[7::1019] = np.inf
        i = rng.integers(-(2**31), 2**31, N, dtype=np.int64).astype(np.int32)
        return {"x": x, "i": i}

    run_threaded(
        monkeypatch, builder_graph(make), per_thread(feeds), matches_reference(make, monkeypatch)
    )


def test_float32_comparisons_and_where(monkeypatch):
    ops = ["equal", "not_equal", "greater", "greater_or_equal", "lesser", "lesser_or_equal"]
    ufunc = {
        "equal": np.equal,
        "not_equal": np.not_equal,
        "greater": np.greater,
        "greater_or_equal": np.greater_equal,
        "lesser": np.less,
        "lesser_or_equal": np.less_equal,
    }

    def make(b):
        a = b.input("a", [512, 512], "float32")
        c = b.input("c", [512, 512], "float32")
        r = b.input("r", [1, 512], "float32")  # a broadcast row
        m = b.input("m", [512, 512], "uint8")
        q = b.input("q", [512, 512], "int8")
        outs = {f"{op}": getattr(b, op)(a, c) for op in ops}
        outs.update({f"{op}_row": getattr(b, op)(a, r) for op in ops})
        outs["where"] = b.where(m, a, r)
        outs["where_int8"] = b.where(m, q, b.cast(m, "int8"))
        return outs

    def feeds(rng):
        a = (rng.integers(-4, 5, (512, 512)) * 0.5).astype(np.float32)  # many ties
        c = (rng.integers(-4, 5, (512, 512)) * 0.5).astype(np.float32)
        a[::37, ::11] = np.nan
        c[::41, 3::13] = -0.0
        r = (rng.integers(-4, 5, (1, 512)) * 0.5).astype(np.float32)
        m = rng.choice(np.array([0, 1, 7], np.uint8), (512, 512))
        q = rng.integers(-128, 128, (512, 512)).astype(np.int8)
        return {"a": a, "c": c, "r": r, "m": m, "q": q}

    reference = matches_reference(make, monkeypatch)

    def check(f, result):
        reference(f, result)
        for op in ops:
            np.testing.assert_array_equal(result[op], ufunc[op](f["a"], f["c"]).astype(np.uint8))
            np.testing.assert_array_equal(
                result[op + "_row"], ufunc[op](f["a"], f["r"]).astype(np.uint8)
            )
        want = np.where(f["m"] != 0, f["a"], np.broadcast_to(f["r"], (512, 512)))
        assert np.array_equal(result["where"].view(np.uint32), want.view(np.uint32))

    run_threaded(monkeypatch, builder_graph(make), per_thread(feeds), check)


# ---- movement: gather by runs, layout transposes, pad ----------------------------------------


def test_gather_of_constant_indices_by_runs(monkeypatch):
    lane = np.arange(8192)
    cols = np.r_[lane[1000:3000], lane[5000:8000], lane[:1000]].astype(np.int32)
    rows = (np.arange(8192) ^ 64).astype(np.int64)

    def make(b):
        x = b.input("x", [64, 8192], "float32")
        z = b.input("z", [8192, 16], "float32")
        return {
            "cols": b.gather(x, b.constant(cols), axis=1),
            "rows": b.gather(z, b.constant(rows), axis=0),
        }

    def feeds(rng):
        return {
            "x": rng.standard_normal((64, 8192), dtype=np.float32),
            "z": rng.standard_normal((8192, 16), dtype=np.float32),
        }

    def check(f, result):
        same_bits(result, {"cols": f["x"][:, cols], "rows": f["z"][rows]})

    run_threaded(monkeypatch, builder_graph(make), per_thread(feeds), check)


TRANSPOSES = {
    "to_nhwc": ([1, 48, 96, 96], [0, 2, 3, 1]),  # whole output rows per thread
    "to_nchw": ([1, 96, 96, 48], [0, 3, 1, 2]),  # 9216-float output rows, split by rows
    "wide": ([1, 1030, 6, 6], [0, 2, 3, 1]),  # > 1024 channels: split by rows
}


def test_layout_transposes(monkeypatch):
    def make(b):
        return {
            k: b.transpose(b.input(k, shape, "float32"), perm)
            for k, (shape, perm) in TRANSPOSES.items()
        }

    def feeds(rng):
        return {k: rng.standard_normal(s, dtype=np.float32) for k, (s, _) in TRANSPOSES.items()}

    def check(f, result):
        same_bits(result, {k: f[k].transpose(p) for k, (_, p) in TRANSPOSES.items()})

    run_threaded(monkeypatch, builder_graph(make), per_thread(feeds), check)


PADS = {
    "odometer": ([1, 64, 100, 16, 1], [0, 0, 0, 0, 0], [0, 0, 0, 0, 1], "constant"),
    "constant": ([256, 300], [2, 3], [1, 5], "constant"),
    "edge": ([256, 300], [3, 1], [2, 4], "edge"),
    "reflection": ([256, 300], [3, 2], [1, 4], "reflection"),
}
NUMPY_MODE = {"constant": "constant", "edge": "edge", "reflection": "reflect"}


def test_pad(monkeypatch):
    def make(b):
        outs = {}
        for k, (shape, begin, end, mode) in PADS.items():
            kwargs = {"value": 1.5} if mode == "constant" else {}
            outs[k] = b.pad(b.input(k, shape, "float32"), begin, end, mode=mode, **kwargs)
        return outs

    def feeds(rng):
        return {k: rng.standard_normal(p[0], dtype=np.float32) for k, p in PADS.items()}

    def check(f, result):
        want = {}
        for k, (_, begin, end, mode) in PADS.items():
            kwargs = {"constant_values": 1.5} if mode == "constant" else {}
            want[k] = np.pad(f[k], list(zip(begin, end)), mode=NUMPY_MODE[mode], **kwargs)
        same_bits(result, want)

    run_threaded(monkeypatch, builder_graph(make), per_thread(feeds), check)


# ---- reductions: argMin / argMax, column extrema ---------------------------------------------


def test_arg_min_max_and_column_extrema(monkeypatch):
    def make(b):
        rows = b.input("rows", [80, 6625], "float32")  # a CTC decoder's classes
        cols = b.input("cols", [4096, 64], "float32")  # inner axis: column blocks
        mid = b.input("mid", [16, 1024, 48], "float32")
        return {
            "arg_max_rows": b.arg_max(rows, 1),
            "arg_min_cols": b.arg_min(cols, 0, output_data_type="int64"),
            "arg_max_mid": b.arg_max(mid, 1, keep_dimensions=True),
            "max_cols": b.reduce_max(cols, [0]),
            "min_cols": b.reduce_min(cols, [0]),
            "max_mid": b.reduce_max(mid, [1]),
            "min_mid": b.reduce_min(mid, [1], keep_dimensions=True),
        }

    def feeds(rng):
        # Small integers: ties everywhere (the first position wins, as numpy's).
        return {
            "rows": rng.integers(-50, 50, (80, 6625)).astype(np.float32),
            "cols": rng.integers(-50, 50, (4096, 64)).astype(np.float32),
            "mid": rng.standard_normal((16, 1024, 48), dtype=np.float32),
        }

    def check(f, result):
        want = {
            "arg_max_rows": np.argmax(f["rows"], 1).astype(np.int32),
            "arg_min_cols": np.argmin(f["cols"], 0).astype(np.int64),
            "arg_max_mid": np.argmax(f["mid"], 1, keepdims=True).astype(np.int32),
            "max_cols": f["cols"].max(0),
            "min_cols": f["cols"].min(0),
            "max_mid": f["mid"].max(1),
            "min_mid": f["mid"].min(1, keepdims=True),
        }
        same_bits(result, want)

    run_threaded(monkeypatch, builder_graph(make), per_thread(feeds), check)


# ---- erf -----------------------------------------------------------------------------------


def test_erf(monkeypatch):
    from test_cpu_backend import assert_ulp

    def make(b):
        return {"y": b.erf(b.input("x", [N], "float32"))}

    def feeds(rng):
        return {"x": rng.uniform(-4.5, 4.5, N).astype(np.float32)}

    exact = np.vectorize(math.erf, otypes=[np.float64])

    def check(f, result):
        # Within 2 ULP of the double erf on every instruction set (test_cpu_transcendental.py).
        assert_ulp(result["y"], exact(f["x"].astype(np.float64)).astype(np.float32), 2)

    run_threaded(monkeypatch, builder_graph(make), per_thread(feeds), check)


# ---- ONNX: TopK's sorting network, the dynamically quantized LSTM ----------------------------


def test_topk_sorting_network(monkeypatch):
    pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    import webnn.onnx as wo
    from test_onnx_topk import _model

    data = _model([8, 4104], 300)  # above the rank bound: the bitonic network, padded to 8192
    # One ORT thread: its pool threads free what the caller allocated, through atomics that
    # TSan cannot see in the uninstrumented wheel (as in test_threads_models.py).
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])

    def feeds(rng):
        x = rng.integers(-200, 200, (8, 4104)).astype(np.float32)  # ties in every row
        x[:, 1000::600] = np.nan
        return {"x": x}

    def check(f, result):
        values, indices = session.run(None, f)
        np.testing.assert_array_equal(result["indices"], indices)
        np.testing.assert_array_equal(result["values"], values)

    run_threaded(monkeypatch, lambda ctx: wo.load(ctx, data), per_thread(feeds), check)


def test_dynamic_quantized_lstm(monkeypatch):
    pytest.importorskip("onnx")
    import webnn.onnx as wo
    from test_cpu_dynamic_lstm import WITHOUT, _model

    args = {
        "direction": "bidirectional",  # two directions: one pool thread each
        "batch": 9,
        "steps": 6,
        "size": 32,
        "hidden": 64,
        "per_channel": True,
        "full_range": False,
        "bias": True,
        "states": True,
        "zero_points": True,
    }
    data, first = _model(np.random.default_rng(5), **args)

    def feeds(rng):
        return {k: rng.standard_normal(v.shape).astype(v.dtype) for k, v in first.items()}

    def build(ctx):
        graph = wo.load(ctx, data)
        assert graph.compile_stats["passes"].get("dynamic_quant_lstm", 0) == 2
        return graph

    def check(f, result):
        # The fused kernel gives the bits of the unfused graph (test_cpu_dynamic_lstm.py).
        monkeypatch.setenv("WEBNN_PASSES", WITHOUT)
        ctx = context(monkeypatch, 1)
        unfused = wo.load(ctx, data)
        monkeypatch.delenv("WEBNN_PASSES")
        same_bits(result, ctx.compute(unfused, f))

    run_threaded(monkeypatch, build, per_thread(feeds), check)
