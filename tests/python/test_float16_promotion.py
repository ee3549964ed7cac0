"""float16 graphs on the cpu backend in their float32 form (graph/passes/float16_promotion.cc)
against the reference backend, which rounds every op's result to float16: random CNN-like and
transformer-like graphs within float16 tolerances, a cast to float16 whose rounding must show,
an output that overflows float16, and the API-visible types staying float16."""

import numpy as np
import pytest
import webnn

F16 = np.float16

_CONTEXTS = {}


def _context(backend):
    if backend not in _CONTEXTS:
        _CONTEXTS[backend] = webnn.ML().create_context(accelerated=False, backend=backend)
    return _CONTEXTS[backend]


def _build(backend, make, inputs, constants):
    ctx = _context(backend)
    b = ctx.create_graph_builder()
    ops = {k: b.input(k, list(v.shape), str(v.dtype)) for k, v in inputs.items()}
    ops.update({k: b.constant(v) for k, v in constants.items()})
    return ctx, b.build(make(b, ops))


def _run(backend, make, inputs, constants):
    ctx, graph = _build(backend, make, inputs, constants)
    return ctx.compute(graph, inputs), graph


def _assert_close(got, want, steps):
    """Within `steps` float16 steps of the output's largest magnitude (float16 keeps 11 bits;
    the reference rounds after every op, the promoted graph only at the end)."""
    assert got.dtype == want.dtype == F16 and got.shape == want.shape
    g, w = got.astype(np.float64), want.astype(np.float64)
    assert np.isfinite(g).all() and np.isfinite(w).all()
    tol = steps * 2.0**-11 * max(np.abs(w).max(), 1e-3)
    np.testing.assert_allclose(g, w, rtol=0, atol=tol)


def _weights(rng, shape, scale):
    return (rng.standard_normal(shape) * scale).astype(F16)


def _cnn(rng, channels):
    c0, c1, c2 = channels
    consts = {
        "w1": _weights(rng, [c1, c0, 3, 3], 0.3),
        "b1": _weights(rng, [c1], 0.1),
        "mean": _weights(rng, [c1], 0.1),
        "var": rng.uniform(0.5, 2, [c1]).astype(F16),
        "scale": _weights(rng, [c1], 0.5) + F16(1),
        "shift": _weights(rng, [c1], 0.1),
        "dw": _weights(rng, [c1, 1, 3, 3], 0.3),
        "w2": _weights(rng, [c2, c1, 1, 1], 0.3),
        "fc": _weights(rng, [c2, 5], 0.3),
    }
    activation = rng.integers(0, 3)

    def act(b, y):
        return [b.relu, b.hard_swish, lambda v: b.clamp(v, min_value=0, max_value=6)][activation](y)

    def make(b, o):
        y = b.conv2d(o["x"], o["w1"], bias=o["b1"], padding=[1, 1, 1, 1], strides=[2, 2])
        y = b.batch_normalization(y, o["mean"], o["var"], scale=o["scale"], bias=o["shift"])
        y = act(b, y)
        d = b.conv2d(y, o["dw"], padding=[1, 1, 1, 1], groups=c1)
        y = b.add(act(b, d), y)  # residual
        y = b.conv2d(y, o["w2"])
        y = b.global_average_pool(y)
        y = b.reshape(y, [1, c2])
        y = b.softmax(b.matmul(y, o["fc"]), axis=1)
        return {"y": y, "arg": b.arg_max(y, axis=1)}

    return make, consts


@pytest.mark.parametrize("seed", range(6))
def test_random_cnn_matches_the_float16_reference(seed):
    rng = np.random.default_rng(seed)
    channels = [int(v) for v in rng.integers(2, 9, 3)]
    make, consts = _cnn(rng, channels)
    x = rng.standard_normal([1, channels[0], 12, 10]).astype(F16)
    got, graph = _run("cpu", make, {"x": x}, consts)
    want, _ = _run("reference", make, {"x": x}, consts)
    _assert_close(got["y"], want["y"], 6)
    assert graph.compile_stats["passes"]["float16_promotion"] > 0
    # The float32 passes apply now: batch normalization folds into the convolution.
    assert graph.compile_stats["passes"]["batch_norm_folding"] >= 1
    assert got["arg"].dtype == want["arg"].dtype == np.int32
    top = np.sort(want["y"].astype(np.float64).ravel())
    if top[-1] - top[-2] > 4 * 2.0**-11:  # argMax is well defined at float16 precision
        np.testing.assert_array_equal(got["arg"], want["arg"])


def _transformer(rng, s, d, heads, ffn):
    consts = {
        "wq": _weights(rng, [d, d], d**-0.5),
        "wk": _weights(rng, [d, d], d**-0.5),
        "wv": _weights(rng, [d, d], d**-0.5),
        "wo": _weights(rng, [d, d], d**-0.5),
        "g": _weights(rng, [d], 0.1) + F16(1),
        "beta": _weights(rng, [d], 0.1),
        "w1": _weights(rng, [d, ffn], d**-0.5),
        "b1": _weights(rng, [ffn], 0.1),
        "w2": _weights(rng, [ffn, d], ffn**-0.5),
        "scale": np.array(1 / np.sqrt(d // heads), F16),
    }

    def make(b, o):
        x = o["x"]

        def split(t):
            return b.transpose(b.reshape(t, [s, heads, d // heads]), permutation=[1, 0, 2])

        q, k, v = (split(b.matmul(x, o[w])) for w in ("wq", "wk", "wv"))
        att = b.mul(b.matmul(q, b.transpose(k, permutation=[0, 2, 1])), o["scale"])
        p = b.softmax(att, axis=2)
        h = b.reshape(b.transpose(b.matmul(p, v), permutation=[1, 0, 2]), [s, d])
        h = b.add(x, b.matmul(h, o["wo"]))
        h = b.layer_normalization(h, scale=o["g"], bias=o["beta"], axes=[1], epsilon=1e-5)
        f = b.matmul(b.gelu(b.add(b.matmul(h, o["w1"]), o["b1"])), o["w2"])
        return {"y": b.add(h, f)}

    return make, consts


@pytest.mark.parametrize("seed", range(4))
def test_random_transformer_block_matches_the_float16_reference(seed):
    rng = np.random.default_rng(50 + seed)
    heads = int(rng.integers(1, 4))
    d = heads * int(rng.integers(4, 12))
    s = int(rng.integers(3, 10))
    make, consts = _transformer(rng, s, d, heads, 2 * d)
    x = rng.standard_normal([s, d]).astype(F16)
    got, graph = _run("cpu", make, {"x": x}, consts)
    want, _ = _run("reference", make, {"x": x}, consts)
    _assert_close(got["y"], want["y"], 8)
    assert graph.compile_stats["passes"]["float16_promotion"] > 0


def _cast_round_trip(b, o):
    # 1 + 2^-13 is between float16 values: the cast rounds it to 1, then * 2^13 - 2^13 shows it.
    y = b.add(o["x"], o["tiny"])  # float32 inside: 1 + 2^-13 kept
    y = b.cast(y, "float16")
    y = b.sub(b.mul(y, o["big"]), o["big"])
    return {"y": y, "unrounded": b.sub(b.mul(b.add(o["x"], o["tiny"]), o["big"]), o["big"])}


def test_cast_to_float16_inside_the_graph_still_rounds():
    x = np.ones([4, 8], F16)
    consts = {"tiny": np.array(2.0**-13, F16), "big": np.array(2.0**13, F16)}
    got, graph = _run("cpu", _cast_round_trip, {"x": x}, consts)
    want, _ = _run("reference", _cast_round_trip, {"x": x}, consts)
    np.testing.assert_array_equal(got["y"], np.zeros([4, 8], F16))  # rounded to 1 by the cast
    np.testing.assert_array_equal(want["y"], got["y"])
    # Without the cast the float32 form keeps the bit the reference (float16 per op) drops.
    np.testing.assert_array_equal(got["unrounded"], np.ones([4, 8], F16))
    np.testing.assert_array_equal(want["unrounded"], np.zeros([4, 8], F16))
    assert graph.compile_stats["passes"]["float16_promotion"] > 0


def test_cast_from_float16_to_other_types_is_exact():
    rng = np.random.default_rng(7)
    x = (rng.standard_normal([6, 50]) * 300).astype(F16)

    def make(b, o):
        y = b.relu(o["x"])
        return {
            "i": b.cast(y, "int32"),
            "f": b.cast(y, "float32"),
            "u": b.cast(b.neg(o["x"]), "uint8"),
            "gt": b.greater(y, o["x"]),
            "w": b.where(b.lesser(o["x"], y), o["x"], y),
        }

    got, _ = _run("cpu", make, {"x": x}, {})
    want, _ = _run("reference", make, {"x": x}, {})
    for k in got:
        assert got[k].dtype == want[k].dtype
        np.testing.assert_array_equal(got[k], want[k], err_msg=k)


def test_float16_output_overflows_to_inf():
    x = np.array([[60000, -60000, 1000, 3]], F16)

    def make(b, o):
        big = b.mul(o["x"], o["two"])  # float32 inside: 120000 stays finite ...
        return {"y": b.add(big, o["x"]), "back": b.div(big, o["two"])}

    consts = {"two": np.array(2, F16)}
    got, graph = _run("cpu", make, {"x": x}, consts)
    want, _ = _run("reference", make, {"x": x}, consts)
    # ... and the output rounds to inf as the reference's does.
    np.testing.assert_array_equal(got["y"], np.array([[np.inf, -np.inf, 3000, 9]], F16))
    np.testing.assert_array_equal(want["y"], got["y"])
    # An intermediate that overflows float16 stays finite in the float32 form (the reference's
    # per-op float16 gives inf): the one visible difference, documented in the pass.
    np.testing.assert_array_equal(got["back"], x)
    np.testing.assert_array_equal(want["back"], np.array([[np.inf, -np.inf, 1000, 3]], F16))
    assert graph.compile_stats["passes"]["float16_promotion"] > 0


def test_api_types_stay_float16_and_per_op_turns_it_off(monkeypatch):
    rng = np.random.default_rng(3)
    make, consts = _cnn(rng, [3, 4, 5])
    x = rng.standard_normal([1, 3, 8, 8]).astype(F16)
    ctx, graph = _build("cpu", make, {"x": x}, consts)
    assert graph.input_descriptors["x"]["data_type"] == "float16"
    assert graph.output_descriptors["y"]["data_type"] == "float16"
    promoted = ctx.compute(graph, {"x": x})["y"]
    monkeypatch.setenv("WEBNN_FLOAT16", "per_op")
    ctx, per_op = _build("cpu", make, {"x": x}, consts)
    assert per_op.compile_stats["passes"]["float16_promotion"] == 0
    assert per_op.compile_stats["passes"]["batch_norm_folding"] == 0
    _assert_close(ctx.compute(per_op, {"x": x})["y"], promoted, 6)
    # The reference backend never promotes (it is the oracle).
    monkeypatch.setenv("WEBNN_FLOAT16", "promote")
    _, ref = _build("reference", make, {"x": x}, consts)
    assert "float16_promotion" not in ref.compile_stats["passes"]


def test_single_node_graphs_keep_their_float16_kernel_unless_promote(monkeypatch):
    x = np.linspace(-4, 4, 64, dtype=F16).reshape(8, 8)

    def make(b, o):
        return {"y": b.sigmoid(o["x"])}

    _, graph = _build("cpu", make, {"x": x}, {})
    assert graph.compile_stats["passes"]["float16_promotion"] == 0
    monkeypatch.setenv("WEBNN_FLOAT16", "promote")
    ctx, graph = _build("cpu", make, {"x": x}, {})
    assert graph.compile_stats["passes"]["float16_promotion"] == 1
    want, _ = _run("reference", make, {"x": x}, {})
    _assert_close(ctx.compute(graph, {"x": x})["y"], want["y"], 1)


def test_unknown_mode_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("WEBNN_FLOAT16", "fast")
    with pytest.raises(ValueError, match="WEBNN_FLOAT16.*'fast'"):
        _build("cpu", lambda b, o: {"y": b.relu(b.neg(o["x"]))}, {"x": np.ones(4, F16)}, {})


def test_constants_no_output_reaches_are_left_alone():
    # build() releases the bytes of constants the outputs do not reach (PP-OCRv4 rec imported
    # with float16="float16" has three): the pass must not read them.
    x = np.linspace(-2, 2, 12, dtype=F16).reshape(3, 4)

    def make(b, o):
        b.add(o["x"], o["unused"])  # a node no output reaches, and its constant
        return {"y": b.relu(b.mul(o["x"], o["two"]))}

    consts = {"unused": np.ones([3, 4], F16), "two": np.array(2, F16)}
    got, graph = _run("cpu", make, {"x": x}, consts)
    want, _ = _run("reference", make, {"x": x}, consts)
    np.testing.assert_array_equal(got["y"], want["y"])
    assert graph.compile_stats["passes"]["float16_promotion"] > 0
