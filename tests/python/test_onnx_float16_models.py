"""Whole float16 ONNX models (a small CNN and a transformer encoder block, every tensor float16)
imported and run on the cpu backend, against ONNX Runtime's float16 result and against our
reference backend.

By default (float16="float32") float16 values are computed in float32 and rounded where ONNX
Runtime's CPU provider rounds them (graph outputs, casts that a data-moving operator reads):
within 1e-3 * max|ORT|, the bound of the real-model checks. With float16="float16" every
operator's result is rounded, as ONNX defines: a few float16 steps from ORT."""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
import webnn
import webnn.onnx
from onnx import TensorProto, helper, numpy_helper
from webnn.onnx import InferenceSession

F16 = np.float16
RNG = np.random.default_rng(16)


def _init(name, shape, scale):
    return numpy_helper.from_array((RNG.standard_normal(shape) * scale).astype(F16), name)


def _model(nodes, inputs, outputs, inits):
    graph = helper.make_graph(nodes, "g", inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model.SerializeToString()


def _cnn():
    """conv-bn-hardswish, depthwise conv-relu, maxpool, conv + residual, pool, gemm, softmax."""
    h = TensorProto.FLOAT16
    inits = [
        _init("w1", [16, 3, 3, 3], 0.3),
        _init("b1", [16], 0.1),
        numpy_helper.from_array(RNG.uniform(0.5, 1.5, [16]).astype(F16), "s"),
        _init("bb", [16], 0.1),
        _init("m", [16], 0.1),
        numpy_helper.from_array(RNG.uniform(0.5, 1.5, [16]).astype(F16), "v"),
        _init("w2", [16, 1, 3, 3], 0.3),
        _init("w3", [16, 16, 1, 1], 0.25),
        _init("wf", [16, 10], 0.3),
        _init("bf", [10], 0.1),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("BatchNormalization", ["c1", "s", "bb", "m", "v"], ["n1"]),
        helper.make_node("HardSwish", ["n1"], ["a1"]),
        helper.make_node("Conv", ["a1", "w2"], ["c2"], pads=[1, 1, 1, 1], group=16),
        helper.make_node("Relu", ["c2"], ["a2"]),
        helper.make_node("MaxPool", ["a2"], ["p2"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p2", "w3"], ["c3"]),
        helper.make_node("Add", ["c3", "p2"], ["r3"]),
        helper.make_node("Sigmoid", ["r3"], ["g3"]),
        helper.make_node("Mul", ["r3", "g3"], ["a3"]),
        helper.make_node("GlobalAveragePool", ["a3"], ["gp"]),
        helper.make_node("Flatten", ["gp"], ["f"]),
        helper.make_node("Gemm", ["f", "wf", "bf"], ["logits"]),
        helper.make_node("Softmax", ["logits"], ["y"], axis=1),
    ]
    return _model(
        nodes,
        [helper.make_tensor_value_info("x", h, [2, 3, 32, 32])],
        [helper.make_tensor_value_info("y", h, [2, 10])],
        inits,
    )


def _encoder_block(seq=24, dim=32, heads=4):
    """Pre-norm attention + GELU MLP, with the reshapes/transposes of a BERT-style export."""
    h = TensorProto.FLOAT16
    hd = dim // heads
    inits = [
        numpy_helper.from_array(RNG.uniform(0.8, 1.2, [dim]).astype(F16), "g1"),
        _init("be1", [dim], 0.05),
        _init("wq", [dim, dim], dim**-0.5),
        _init("wk", [dim, dim], dim**-0.5),
        _init("wv", [dim, dim], dim**-0.5),
        _init("wo", [dim, dim], dim**-0.5),
        _init("bq", [dim], 0.05),
        numpy_helper.from_array(np.array([1, seq, heads, hd], np.int64), "split_heads"),
        numpy_helper.from_array(np.array([1, seq, dim], np.int64), "merge_heads"),
        numpy_helper.from_array(np.array(hd**-0.5, F16), "scale"),
        numpy_helper.from_array(RNG.uniform(0.8, 1.2, [dim]).astype(F16), "g2"),
        _init("be2", [dim], 0.05),
        _init("w1", [dim, 4 * dim], dim**-0.5),
        _init("b1", [4 * dim], 0.05),
        _init("w2", [4 * dim, dim], (4 * dim) ** -0.5),
        numpy_helper.from_array(np.array(2**-0.5, F16), "rsqrt2"),
        numpy_helper.from_array(np.array(1.0, F16), "one"),
        numpy_helper.from_array(np.array(0.5, F16), "half"),
    ]
    nodes = [
        helper.make_node("LayerNormalization", ["x", "g1", "be1"], ["ln1"], axis=-1),
        helper.make_node("MatMul", ["ln1", "wq"], ["q0"]),
        helper.make_node("Add", ["q0", "bq"], ["q1"]),
        helper.make_node("MatMul", ["ln1", "wk"], ["k1"]),
        helper.make_node("MatMul", ["ln1", "wv"], ["v1"]),
        helper.make_node("Reshape", ["q1", "split_heads"], ["q2"]),
        helper.make_node("Reshape", ["k1", "split_heads"], ["k2"]),
        helper.make_node("Reshape", ["v1", "split_heads"], ["v2"]),
        helper.make_node("Transpose", ["q2"], ["q"], perm=[0, 2, 1, 3]),
        helper.make_node("Transpose", ["k2"], ["kt"], perm=[0, 2, 3, 1]),
        helper.make_node("Transpose", ["v2"], ["v"], perm=[0, 2, 1, 3]),
        helper.make_node("MatMul", ["q", "kt"], ["s0"]),
        helper.make_node("Mul", ["s0", "scale"], ["s1"]),
        helper.make_node("Softmax", ["s1"], ["p"], axis=-1),
        helper.make_node("MatMul", ["p", "v"], ["o0"]),
        helper.make_node("Transpose", ["o0"], ["o1"], perm=[0, 2, 1, 3]),
        helper.make_node("Reshape", ["o1", "merge_heads"], ["o2"]),
        helper.make_node("MatMul", ["o2", "wo"], ["o3"]),
        helper.make_node("Add", ["x", "o3"], ["r1"]),
        helper.make_node("LayerNormalization", ["r1", "g2", "be2"], ["ln2"], axis=-1),
        helper.make_node("MatMul", ["ln2", "w1"], ["m0"]),
        helper.make_node("Add", ["m0", "b1"], ["m1"]),
        # GELU as exported by PyTorch: 0.5 * x * (1 + erf(x / sqrt(2))).
        helper.make_node("Mul", ["m1", "rsqrt2"], ["e0"]),
        helper.make_node("Erf", ["e0"], ["e1"]),
        helper.make_node("Add", ["e1", "one"], ["e2"]),
        helper.make_node("Mul", ["m1", "e2"], ["e3"]),
        helper.make_node("Mul", ["e3", "half"], ["gelu"]),
        helper.make_node("MatMul", ["gelu", "w2"], ["m2"]),
        helper.make_node("Add", ["r1", "m2"], ["y"]),
    ]
    return _model(
        nodes,
        [helper.make_tensor_value_info("x", h, [1, seq, dim])],
        [helper.make_tensor_value_info("y", h, [1, seq, dim])],
        inits,
    )


MODELS = {
    "cnn": (_cnn, lambda: RNG.uniform(-1, 1, [2, 3, 32, 32]).astype(F16)),
    "encoder block": (_encoder_block, lambda: RNG.standard_normal([1, 24, 32]).astype(F16)),
}


def _ours(data, x, backend, float16="float32"):
    ctx = webnn.ML().create_context(accelerated=False, backend=backend)
    return InferenceSession(data, context=ctx, float16=float16).run(None, {"x": x})[0]


@pytest.mark.parametrize("backend", ["cpu", "reference"])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_float16_model_within_the_real_model_bound_of_onnxruntime(name, backend):
    make, sample = MODELS[name]
    data, x = make(), sample()
    want = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    got = _ours(data, x, backend)
    assert got.dtype == F16 and got.shape == want.shape
    want32 = want.astype(np.float32)
    err = float(np.abs(got.astype(np.float32) - want32).max())
    assert err <= 1e-3 * float(np.abs(want32).max()), err


@pytest.mark.parametrize("name", sorted(MODELS))
def test_float16_model_rounded_per_operator_matches_onnxruntime_float16(name):
    make, sample = MODELS[name]
    data, x = make(), sample()
    want = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    got = _ours(data, x, "cpu", "float16")
    ref = _ours(data, x, "reference", "float16")
    assert got.dtype == F16 and got.shape == want.shape
    scale = float(np.abs(want.astype(np.float32)).max())
    # float16 has 11 bits: a few steps of the output's magnitude after a dozen rounded ops.
    tol = 4 * 2.0**-11 * scale
    np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=0, atol=tol)
    np.testing.assert_allclose(got.astype(np.float32), ref.astype(np.float32), rtol=0, atol=tol)


def _cast_chain(middle):
    """float32 x * 3.3 -> Cast(float16) -> middle -> Sigmoid -> * k (float16) -> Cast(float)."""
    h, f = TensorProto.FLOAT16, TensorProto.FLOAT
    nodes = [
        helper.make_node("Mul", ["x", "w"], ["a"]),
        helper.make_node("Cast", ["a"], ["b"], to=h),
        helper.make_node(middle, ["b"], ["c"]),
        helper.make_node("Sigmoid", ["c"], ["d"]),
        helper.make_node("Mul", ["d", "k"], ["e"]),
        helper.make_node("Cast", ["e"], ["y"], to=f),
    ]
    inits = [
        numpy_helper.from_array(np.array([3.3], np.float32), "w"),
        numpy_helper.from_array(np.array([1.0001], F16), "k"),
    ]
    out = [4, 64] if middle == "Exp" else [64, 4]
    return _model(
        nodes,
        [helper.make_tensor_value_info("x", f, [4, 64])],
        [helper.make_tensor_value_info("y", f, out)],
        inits,
    )


def _rounded(v):
    return v.astype(F16).astype(np.float32)


@pytest.mark.parametrize("middle", ["Exp", "Transpose"])
def test_cast_to_float16_rounds_where_onnxruntime_does(middle, monkeypatch):
    # ORT runs Exp/Sigmoid/Mul in float32 behind casts of its own and removes the pair made of
    # the model's Cast and its own: nothing is rounded before the end. A Transpose runs on the
    # float16 data: the Cast's rounding stays. Ours follows; float16="float16" rounds per op
    # (on cpu with WEBNN_FLOAT16=per_op: the cpu backend otherwise computes a float16 graph in
    # float32, graph/passes/float16_promotion.cc).
    data = _cast_chain(middle)
    x = np.random.default_rng(3).standard_normal([4, 64]).astype(np.float32)
    want = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    ctx = webnn.ML().create_context(accelerated=False, backend="cpu")
    got = ctx.compute(webnn.onnx.load(ctx, data), {"x": x})["y"]
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
    a = _rounded(x * np.float32(3.3))
    c = _rounded(np.exp(a)) if middle == "Exp" else a.T
    per_op = _rounded(_rounded(1 / (1 + np.exp(-c))) * np.float32(F16(1.0001)))
    monkeypatch.setenv("WEBNN_FLOAT16", "per_op")
    exact = ctx.compute(webnn.onnx.load(ctx, data, float16="float16"), {"x": x})["y"]
    np.testing.assert_allclose(exact, per_op, rtol=2**-10, atol=0)
    assert np.abs(exact - want).max() > 1e-5  # the two rules do differ on this model


def test_castlike_to_a_float16_like_rounds_and_takes_an_empty_like_input():
    # CastLike's `like` gives only the type; an empty input (0-sized axis) has no values, so
    # it becomes a constant (WebNN operands cannot be empty). The cast to float16 that a
    # Reshape reads is rounded in both modes.
    f, h = TensorProto.FLOAT, TensorProto.FLOAT16
    nodes = [
        helper.make_node("CastLike", ["x", "like"], ["c"]),
        helper.make_node("Reshape", ["c", "shape"], ["y"]),
    ]
    data = _model(
        nodes,
        [
            helper.make_tensor_value_info("x", f, [3, 8]),
            helper.make_tensor_value_info("like", h, [0]),
        ],
        [helper.make_tensor_value_info("y", h, [24])],
        [numpy_helper.from_array(np.array([24], np.int64), "shape")],
    )
    x = np.random.default_rng(4).standard_normal([3, 8]).astype(np.float32) * 100
    feeds = {"x": x, "like": np.zeros([0], F16)}
    want = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    np.testing.assert_array_equal(want, x.reshape(-1).astype(F16))
    for backend in ("cpu", "reference"):
        ctx = webnn.ML().create_context(accelerated=False, backend=backend)
        graph = webnn.onnx.load(ctx, data, input_shapes={"x": [3, 8], "like": [0]})
        assert set(graph.input_descriptors) == {"x"}
        np.testing.assert_array_equal(ctx.compute(graph, {"x": x})["y"], want)
        session = InferenceSession(data, context=ctx)
        np.testing.assert_array_equal(session.run(None, feeds)[0], want)


def test_float16_mode_is_checked():
    with pytest.raises(ValueError, match="float16"):
        webnn.onnx.load(webnn.ML().create_context(), _cast_chain("Exp"), float16="bfloat16")
