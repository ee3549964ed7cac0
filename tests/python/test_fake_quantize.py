"""quantizeLinear -> dequantizeLinear pairs with the same parameters, which the cpu backend runs
as one fake-quantize step (graph/passes/fake_quantize.cc, cpu/quantize_linear.cc). The fused
graph must give the bits of the same graph without the pass (the stand-alone quantize and
dequantize kernels), of the reference backend and of a numpy expectation (double division,
round half to even, saturation, NaN to 0, then (q - zp) * s), per tensor and per channel, uint8
and int8, at rounding ties, saturation, +-inf, NaN, -0 and tiny values; a blockwise pair is left
alone and still correct; and a QDQ model's output is unchanged by the pass. The last test reruns
this file with 1 and 3 threads.
"""

import numpy as np
import pytest
import rerun
from test_passes_random import _run, _spec_from

# Every cpu pass but fake_quantize: the stand-alone kernels the fused step must reproduce.
WITHOUT = (
    "canonicalization,qdq_fusion,constant_folding,integer_matmul,qdq_tables,"
    "batch_norm_folding,layout_assignment,epilogue_fusion"
)
RANGES = {"uint8": (0, 255), "int8": (-128, 127)}


def _expand(p, shape):
    """A scale or zero point repeated over the elements it applies to (blocks along each axis)."""
    p = np.asarray(p).reshape([1] * (len(shape) - np.ndim(p)) + list(np.shape(p)))
    for axis, n in enumerate(shape):
        p = np.repeat(p, n // p.shape[axis], axis=axis)
    return p


def _expected(x, qscale, dscale, zp, qtype):
    lo, hi = RANGES[qtype]
    s, d, z = (_expand(v, x.shape).astype(np.float64) for v in (qscale, dscale, zp))
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        q = np.round(x.astype(np.float64) / s) + z
        q = np.where(np.isnan(q), 0.0, np.clip(q, lo, hi))
        return ((q - z) * d).astype(np.float32)


def _inputs(shape, scale, zp, rng):
    """Random values over the quantized range and past it, with rounding ties (k + 0.5) * s,
    the saturation bounds and special values spread over every channel."""
    s = _expand(scale, shape).astype(np.float64)
    z = _expand(zp, shape).astype(np.float64)
    x = ((rng.uniform(-200, 300, shape) - z) * s).astype(np.float32)
    flat = x.reshape(-1)
    n = flat.size
    k = rng.integers(-140, 270, n)
    ties = ((k + 0.5 - z.reshape(-1)) * s.reshape(-1)).astype(np.float32)
    pick = rng.random(n) < 0.3
    flat[pick] = ties[pick]
    special = np.array(
        [np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-45, -1e-45, 1e30, -1e30, 3.4e38], np.float32
    )
    idx = rng.choice(n, size=min(n, 4 * special.size), replace=False)
    flat[idx] = np.resize(special, idx.size)
    return x


def _pair(shape, pshape, qtype, scale_values, seed, onnx_style=False):
    """quantizeLinear then dequantizeLinear with the same parameters; onnx_style: as the ONNX
    importer writes QuantizeLinear, x / s (float32) quantized with scale 1, then dequantized
    with s."""
    rng = np.random.default_rng(seed)
    count = int(np.prod(pshape))
    scale = rng.choice(scale_values, count).astype(np.float32).reshape(pshape)
    lo, hi = RANGES[qtype]
    zp = rng.integers(lo, hi + 1, count).astype(qtype).reshape(pshape)
    x = _inputs(shape, scale, zp, rng)

    def fn(b, v):
        s, z = b.constant(scale), b.constant(zp)
        if onnx_style:
            q = b.quantize_linear(b.div(v, s), b.constant(np.ones_like(scale)), z)
        else:
            q = b.quantize_linear(v, s, z)
        return b.dequantize_linear(q, s, z)

    if onnx_style:
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            divided = x / _expand(scale, shape)  # float32, correctly rounded like the div kernel
        want = _expected(divided, np.ones_like(scale), scale, zp, qtype)
    else:
        want = _expected(x, scale, scale, zp, qtype)
    return _spec_from(shape, fn), x, want


SCALES = {
    # 0.5 and 1 (the quantize kernel's own path) make ties exact; the others are typical.
    "simple": [0.5, 1.0, 2.0, 0.25],
    "typical": [0.0173, 0.00392157, 0.031, 1.7e-5],
}

CASES = {
    # (value shape, parameter shape, quantized type, scales, pairs fused)
    "tensor_u8": ([2, 5, 7, 9], [1, 1, 1, 1], "uint8", "typical", 1),
    "tensor_i8_simple": ([3, 11, 13], [1, 1, 1], "int8", "simple", 1),
    "tensor_rank1": ([37], [1], "uint8", "simple", 1),
    "channel_nchw_u8": ([2, 5, 6, 7], [1, 5, 1, 1], "uint8", "typical", 1),
    "channel_nhwc_i8": ([1, 6, 7, 13], [1, 1, 1, 13], "int8", "typical", 1),
    "channel_first_i8": ([4, 3, 5], [4, 1, 1], "int8", "simple", 1),
    "block_of_axes_u8": ([2, 3, 4, 5], [1, 3, 4, 1], "uint8", "typical", 1),
    # Several tasks (65536 elements each) per run; channel runs straddle task ends.
    "large_channel_u8": ([1, 7, 150, 151], [1, 7, 1, 1], "uint8", "typical", 1),
    "large_tensor_i8": ([1, 3, 300, 250], [1, 1, 1, 1], "int8", "typical", 1),
    # Blockwise (one value per 2x3 block): not a pair the pass takes.
    "blockwise_u8": ([4, 6], [2, 3], "uint8", "simple", 0),
}
# As the ONNX importer writes QuantizeLinear (x / s, then scale 1).
ONNX_STYLE = {"onnx_tensor_u8", "onnx_channel_i8", "onnx_large_channel_u8"}
CASES["onnx_tensor_u8"] = CASES["tensor_u8"]
CASES["onnx_channel_i8"] = CASES["channel_nhwc_i8"]
CASES["onnx_large_channel_u8"] = CASES["large_channel_u8"]


def _bits(a):
    return np.ascontiguousarray(a, np.float32).view(np.uint32)


@pytest.mark.parametrize("name", list(CASES))
def test_fake_quantize_pair(name):
    shape, pshape, qtype, scales, fused = CASES[name]
    spec, x, want = _pair(shape, pshape, qtype, SCALES[scales], len(name), name in ONNX_STYLE)
    got, stats = _run(spec, "cpu", "all", "all", x)
    unfused, ustats = _run(spec, "cpu", WITHOUT, "all", x)
    ref, _ = _run(spec, "reference", "all", "all", x)
    assert stats["passes"].get("fake_quantize", 0) == fused
    assert "fake_quantize" not in ustats["passes"]
    np.testing.assert_array_equal(_bits(got), _bits(unfused))
    np.testing.assert_array_equal(_bits(got), _bits(ref))
    np.testing.assert_array_equal(_bits(got), _bits(want))


def test_pair_with_other_parameters_is_not_fused():
    """A dequantizeLinear whose zero point differs from the quantizeLinear's is two steps."""
    rng = np.random.default_rng(3)
    x = rng.uniform(-3, 3, [2, 3, 4]).astype(np.float32)
    scale = np.float32(0.05)

    def fn(b, v):
        s = b.constant(np.full([1, 1, 1], scale))
        q = b.quantize_linear(v, s, b.constant(np.full([1, 1, 1], 3, np.uint8)))
        return b.dequantize_linear(q, s, b.constant(np.full([1, 1, 1], 5, np.uint8)))

    spec = _spec_from([2, 3, 4], fn)
    got, stats = _run(spec, "cpu", "all", "all", x)
    assert stats["passes"].get("fake_quantize", 0) == 0
    q = np.clip(np.round(x.astype(np.float64) / scale) + 3, 0, 255)
    np.testing.assert_array_equal(got, ((q - 5) * np.float64(scale)).astype(np.float32))


def _residual_cnn(path):
    """Convolutions around a residual add, a product of two values and a resize: ONNX Runtime's
    QDQ form leaves a quantize -> dequantize pair between the product and the resize that no
    int8 pass takes."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(1)
    inits = [numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")]

    def w(name, shape):
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) * 0.3).astype("f4"), name))
        return name

    nodes = [
        helper.make_node("Conv", ["x", w("w1", [6, 3, 3, 3]), w("b1", [6])], ["c1"], pads=[1] * 4),
        helper.make_node("Conv", ["c1", w("w2", [6, 6, 1, 1]), w("b2", [6])], ["c2"]),
        helper.make_node("Add", ["c1", "c2"], ["s"]),
        helper.make_node("Mul", ["s", "c2"], ["m"]),
        helper.make_node("Resize", ["m", "", "scales"], ["r"], mode="nearest"),
        helper.make_node("Conv", ["r", w("w3", [5, 6, 3, 3]), w("b3", [5])], ["y"], pads=[1] * 4),
    ]
    graph = helper.make_graph(
        nodes,
        "residual_cnn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 12, 10])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)
    return {"x": rng.standard_normal((1, 3, 12, 10)).astype(np.float32)}


@pytest.mark.parametrize("per_channel", [False, True])
def test_qdq_model_unchanged(tmp_path, monkeypatch, per_channel):
    """A QDQ-quantized CNN: the pair left around its float ops runs fused, with the same output
    bits as without the pass (1 and 2 threads), within one quantization step of ORT."""
    pytest.importorskip("onnxruntime.quantization")
    from test_qdq_int8 import _ours, _quantize, _theirs, output_step

    src = str(tmp_path / "cnn.onnx")
    feeds = _residual_cnn(src)
    dst = str(tmp_path / "cnn_qdq.onnx")
    _quantize(src, dst, feeds, per_channel)
    without, _ = _ours(dst, feeds, monkeypatch, WITHOUT, 1)
    step = output_step(dst)
    for threads in (1, 2):
        got, stats = _ours(dst, feeds, monkeypatch, "all", threads)
        assert stats["passes"].get("fake_quantize", 0) >= 1, stats["passes"]
        np.testing.assert_array_equal(_bits(got), _bits(without))
        assert float(np.max(np.abs(got - _theirs(dst, feeds)))) <= step * 1.001


@rerun.each_cpu_setting
def test_rerun_with_cpu_settings(env):
    if rerun.nested():
        pytest.skip("already inside a rerun")
    rerun.assert_file_passes(__file__, env)
