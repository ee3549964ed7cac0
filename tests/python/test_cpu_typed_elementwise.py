"""The cpu backend's typed element-wise kernels (cpu/typed_elementwise.cc) against the
reference backend, bit for bit: comparisons and logical ops of every type with random
broadcasts, integer arithmetic (wrapping, division by zero, INT_MIN / -1), logicalNot,
isNaN / isInfinite with special values, and cast between every pair of types (NaN, infinities
and out-of-range values saturate like the reference), at 1 and 2 threads."""

import numpy as np
import pytest
import webnn

TYPES = ["float32", "float16", "int8", "uint8", "int32", "uint32", "int64", "uint64"]
COMPARISONS = ["equal", "not_equal", "greater", "greater_or_equal", "lesser", "lesser_or_equal"]
ARITHMETIC = ["add", "sub", "mul", "div", "max", "min", "pow"]


def _values(rng, shape, dtype):
    if dtype.startswith("float"):
        x = np.asarray((rng.standard_normal(shape) * 4).round(1)).astype(dtype)
        special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 65504.0], dtype)
        mask = rng.random(shape) < 0.2
        x[mask] = rng.choice(special, int(mask.sum()))
        return x
    info = np.iinfo(dtype)
    x = np.asarray(rng.integers(max(info.min, -9), min(info.max, 9) + 1, shape)).astype(dtype)
    mask = rng.random(shape) < 0.15
    x[mask] = rng.choice(np.array([info.min, info.max, 0], dtype), int(mask.sum()))
    return x


def _broadcastable(rng, shape):
    keep = int(rng.integers(0, len(shape) + 1))
    return [1 if rng.random() < 0.4 else d for d in shape[len(shape) - keep :]]


def _run(backend, build, feeds):
    context = webnn.ML().create_context(accelerated=False, backend=backend)
    b = context.create_graph_builder()
    ins = {k: b.input(k, list(v.shape), str(v.dtype)) for k, v in feeds.items()}
    graph = b.build({"y": build(b, ins)})
    return context.compute(graph, feeds)["y"]


def _same_bits(build, feeds, what):
    got = _run("cpu", build, feeds)
    want = _run("reference", build, feeds)
    assert got.dtype == want.dtype and got.shape == want.shape, what
    np.testing.assert_array_equal(
        got.reshape(-1).view(np.uint8), want.reshape(-1).view(np.uint8), err_msg=what
    )


@pytest.mark.parametrize("threads", [1, 2])
def test_binary_and_comparison_ops_match_reference(monkeypatch, threads):
    monkeypatch.setenv("WEBNN_NUM_THREADS", str(threads))
    rng = np.random.default_rng(31)
    for case in range(60):
        dtype = TYPES[case % len(TYPES)]
        shape = [int(d) for d in rng.integers(1, 6, int(rng.integers(0, 5)))]
        if case % 12 == 0:
            shape = [3, 50, 257]  # several tasks
        a = _values(rng, _broadcastable(rng, shape) if case % 3 else shape, dtype)
        b = _values(rng, _broadcastable(rng, shape), dtype)
        ops = COMPARISONS if dtype.startswith("float") else COMPARISONS + ARITHMETIC
        op = ops[case % len(ops)]
        feeds = {"a": a, "b": b}
        _same_bits(lambda bl, i, op=op: getattr(bl, op)(i["a"], i["b"]), feeds, f"{op} {dtype}")


def test_logical_ops_match_reference():
    rng = np.random.default_rng(32)
    a = rng.choice(np.array([0, 1, 2, 255], np.uint8), (4, 1, 33))
    b = rng.choice(np.array([0, 1, 7], np.uint8), (5, 33))
    for op in ["logical_and", "logical_or", "logical_xor"]:
        _same_bits(lambda bl, i, op=op: getattr(bl, op)(i["a"], i["b"]), {"a": a, "b": b}, op)
    _same_bits(lambda bl, i: bl.logical_not(i["a"]), {"a": a}, "logical_not")


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_classification_ops_match_reference(dtype):
    x = _values(np.random.default_rng(33), [7, 300], dtype)
    for op in ["is_nan", "is_infinite"]:
        _same_bits(lambda bl, i, op=op: getattr(bl, op)(i["x"]), {"x": x}, f"{op} {dtype}")


@pytest.mark.parametrize("source", TYPES)
def test_cast_between_every_pair_matches_reference(source):
    rng = np.random.default_rng(34)
    x = _values(rng, [5, 41], source)
    if source.startswith("float"):  # out of every integer range too
        x[0, :6] = np.array([3e4, -3e4, 1e4, 300.5, -129.9, 2.5], source)
    for target in TYPES:
        _same_bits(
            lambda bl, i, t=target: bl.cast(i["x"], t), {"x": x}, f"cast {source} -> {target}"
        )


@pytest.mark.parametrize("target", ["int8", "uint8"])
def test_float32_to_byte_cast_at_its_edges_matches_reference(target):
    # The branchless float32 -> (u)int8 cast: truncation next to every bound, saturation,
    # infinities, NaN and -0, over enough elements for the vector loop and its tail.
    edges = [-1e30, -256.5, -129.0, -128.5, -128.0, -127.9, -1.5, -0.9, -0.0, 0.0, 0.5, 0.99]
    edges += [126.99, 127.0, 127.5, 128.0, 254.9, 255.0, 255.9, 256.0, 3e38, np.inf, -np.inf]
    edges += [np.nan]
    rng = np.random.default_rng(5)
    x = np.concatenate([np.tile(np.array(edges, np.float32), 40), rng.uniform(-300, 300, 77)])
    x = x.astype(np.float32).reshape(1, -1)
    _same_bits(lambda bl, i: bl.cast(i["x"], target), {"x": x}, f"cast float32 -> {target}")
