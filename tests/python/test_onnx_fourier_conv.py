"""Convolutions whose filters are a windowed Fourier basis (an STFT exported as Conv1d, as
Whisper's, NeMo's and openWakeWord's front ends do) run in the radix-2 form
(python/webnn/onnx/ops/fourier_conv.py). Compared with ONNX Runtime running the convolution
as it is written and with numpy in double, on both backends; filters that are not such a
bank (a perturbed row, a random filter, several input channels) keep the plain convolution."""

import numpy as np
import onnxruntime as ort
import pytest
import webnn
import webnn.onnx as wo
from onnx import TensorProto, helper, numpy_helper
from webnn.onnx.ops.fourier_conv import fourier_bank


def _bank(size, layout, window="hann"):
    t = np.arange(size)
    w = np.hanning(size + 1)[:-1] if window == "hann" else np.hamming(size)
    bins = size // 2 + 1
    k = np.arange(bins)[:, None]
    cos = w * np.cos(2 * np.pi * k * t / size)
    sin = -w * np.sin(2 * np.pi * k * t / size)
    if layout == "blocked":  # [re of every bin; im of every bin] (Whisper, NeMo)
        rows = np.concatenate([cos, sin])
    elif layout == "interleaved":
        rows = np.stack([cos, sin], 1).reshape(2 * bins, size)
    elif layout == "cos":
        rows = cos
    elif layout == "plus_sin":  # +w sin rows: coefficients -1
        rows = -sin
    else:
        raise AssertionError(layout)
    return rows.astype(np.float32)


def _model(weights, length, stride, pads=(0, 0), bias=None, rank=3):
    nodes, inits, outputs = [], [], []
    for i, w in enumerate(weights):
        shape = [w.shape[0], 1, w.shape[1]] if rank == 3 else [w.shape[0], 1, 1, w.shape[1]]
        inits.append(numpy_helper.from_array(w.reshape(shape), f"w{i}"))
        inputs = ["x", f"w{i}"]
        if bias is not None:
            inits.append(numpy_helper.from_array(bias[: w.shape[0]], f"b{i}"))
            inputs.append(f"b{i}")
        attrs = {"strides": [stride] if rank == 3 else [1, stride]}
        attrs["pads"] = list(pads) if rank == 3 else [0, pads[0], 0, pads[1]]
        nodes.append(helper.make_node("Conv", inputs, [f"y{i}"], **attrs))
        outputs.append(helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, None))
    xshape = [2, 1, length] if rank == 3 else [2, 1, 1, length]
    graph = helper.make_graph(
        nodes, "bank", [helper.make_tensor_value_info("x", TensorProto.FLOAT, xshape)], outputs,
        inits,
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model, xshape


def _exact(x, w, stride, pads, bias):
    """The convolution in double: the independent expectation."""
    sig = np.pad(x.reshape(x.shape[0], -1).astype(np.float64), ((0, 0), pads))
    frames = (sig.shape[1] - w.shape[1]) // stride + 1
    idx = np.arange(frames)[:, None] * stride + np.arange(w.shape[1])[None, :]
    y = np.einsum("bft,ct->bcf", sig[:, idx], w.astype(np.float64))
    if bias is not None:
        y += bias[: w.shape[0], None]
    return y


@pytest.mark.parametrize(
    "layouts,size,stride,pads,with_bias,rank",
    [
        (["blocked"], 400, 160, (0, 0), False, 3),  # Whisper's 201 + 201 rows
        (["interleaved"], 64, 16, (8, 8), True, 3),
        (["cos", "plus_sin"], 128, 32, (0, 0), False, 3),  # two convolutions, one spectrum
        (["blocked"], 50, 10, (0, 5), False, 4),  # a Conv2d of height 1, N / 2 odd
    ],
)
def test_fourier_bank_conv_matches_onnxruntime_and_numpy(
    layouts, size, stride, pads, with_bias, rank
):
    weights = [_bank(size, layout) for layout in layouts]
    bias = np.linspace(-1, 1, 2 * size + 2).astype(np.float32) if with_bias else None
    length = 1203
    model, xshape = _model(weights, length, stride, pads, bias, rank)
    x = np.random.default_rng(size).standard_normal(xshape).astype(np.float32)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    want = session.run(None, {"x": x})
    for backend in ("cpu", "reference"):
        context = webnn.ML().create_context(accelerated=False, backend=backend)
        got = context.compute(wo.load(context, model), {"x": x})
        for i, w in enumerate(weights):
            exact = _exact(x, w, stride, pads, bias)
            y = got[f"y{i}"]
            assert y.shape == want[i].shape
            scale = float(np.max(np.abs(exact)))
            assert float(np.max(np.abs(y.reshape(exact.shape) - exact))) <= 2e-6 * scale
            assert float(np.max(np.abs(y - want[i]))) <= 2e-6 * scale


def test_the_bank_is_recognized_and_what_is_not_stays_a_plain_convolution():
    bank = _bank(64, "blocked")
    window, indices, coefficients = fourier_bank(bank)
    assert set(coefficients) == {1.0}
    np.testing.assert_allclose(window, np.hanning(65)[:-1], atol=1e-7)
    assert list(indices[:33]) == list(range(0, 66, 2))
    assert list(indices[34:65]) == list(range(3, 65, 2))
    _, _, signs = fourier_bank(_bank(64, "plus_sin"), [window])
    assert set(signs[1:32]) == {-1.0}
    assert fourier_bank(_bank(64, "plus_sin")) is None  # no window without the cosine rows
    perturbed = bank.copy()
    perturbed[5, 10] += 1e-3
    assert fourier_bank(perturbed) is None
    assert fourier_bank(np.random.default_rng(0).standard_normal((66, 64))) is None
    assert fourier_bank(_bank(64, "blocked", window="hamming")) is not None


def test_a_perturbed_bank_still_imports_as_its_own_convolution():
    bank = _bank(64, "interleaved")
    bank[7, 3] += 0.01  # no longer a Fourier bank: must be computed as written
    model, xshape = _model([bank], 500, 16)
    x = np.random.default_rng(1).standard_normal(xshape).astype(np.float32)
    context = webnn.ML().create_context(accelerated=False)
    got = context.compute(wo.load(context, model), {"x": x})["y0"]
    exact = _exact(x, bank, 16, (0, 0), None)
    assert float(np.max(np.abs(got - exact))) <= 2e-6 * float(np.max(np.abs(exact)))


@pytest.mark.parametrize("taps,size", [(64, 64), (50, 64)])  # frames zero-padded to N = 64
def test_fourier_bank_matmul_of_cut_frames(taps, size):
    t = np.arange(taps)
    bins = size // 2 + 1
    k = np.arange(bins)[None, :]
    basis = np.concatenate(
        [np.cos(2 * np.pi * t[:, None] * k / size), -np.sin(2 * np.pi * t[:, None] * k / size)], 1
    ).astype(np.float32)  # [K, 2 bins], blocked
    node = helper.make_node("MatMul", ["frames", "basis"], ["y"])
    graph = helper.make_graph(
        [node], "dft_matmul",
        [helper.make_tensor_value_info("frames", TensorProto.FLOAT, [2, 30, taps])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(basis, "basis")],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    frames = np.random.default_rng(taps).standard_normal((2, 30, taps)).astype(np.float32)
    exact = frames.astype(np.float64) @ basis.astype(np.float64)
    scale = float(np.max(np.abs(exact)))
    for backend in ("cpu", "reference"):
        context = webnn.ML().create_context(accelerated=False, backend=backend)
        graph_ = wo.load(context, model)
        got = context.compute(graph_, {"frames": frames})["y"]
        assert got.shape == exact.shape
        assert float(np.max(np.abs(got - exact))) <= 2e-6 * scale
        assert graph_.operation_count > 1  # the radix-2 form, not the one matmul


@pytest.mark.parametrize("axis,length", [(1, None), (1, 40), (1, 24), (2, None)])
def test_real_one_sided_dft_matches_numpy(axis, length):
    shape = [2, 32, 16, 1] if axis == 1 else [2, 6, 32, 1]
    inputs = ["x", "n" if length else "", "axis"]
    inits = [numpy_helper.from_array(np.array(axis, np.int64), "axis")]
    if length:
        inits.append(numpy_helper.from_array(np.array(length, np.int64), "n"))
    node = helper.make_node("DFT", inputs, ["y"], onesided=1)
    graph = helper.make_graph(
        [node], "dft", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits,
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    model.ir_version = 9
    x = np.random.default_rng(axis).standard_normal(shape).astype(np.float32)
    spectrum = np.fft.rfft(x[..., 0].astype(np.float64), n=length, axis=axis)
    exact = np.stack([spectrum.real, spectrum.imag], -1)
    scale = float(np.max(np.abs(exact)))
    for backend in ("cpu", "reference"):
        context = webnn.ML().create_context(accelerated=False, backend=backend)
        got = context.compute(wo.load(context, model), {"x": x})["y"]
        assert got.shape == exact.shape
        assert float(np.max(np.abs(got - exact))) <= 2e-6 * scale


def test_a_wide_classifier_weight_is_not_tried_as_a_long_transform():
    """A CTC classifier's [120, 18710] weight: its column count would make 120-sample frames in
    a 37,418-point transform, a 5.6 GB basis to compare (16 GB of import for PP-OCRv5's
    recognizer). Transforms longer than MAX_PADDING x the frame are not tried: the import stays
    small and the product is a plain matmul, equal to ORT."""
    import tracemalloc

    from webnn.onnx.ops import fourier_conv

    rng = np.random.default_rng(4)
    w = rng.standard_normal((120, 18710)).astype(np.float32) * 0.05
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 40, 120])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 40, 18710])],
        [numpy_helper.from_array(w, "w")],
    )
    data = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
    assert 2 * (18710 - 1) > fourier_conv.MAX_PADDING * 120
    x = rng.standard_normal((1, 40, 120)).astype(np.float32)
    ctx = webnn.ML().create_context(accelerated=False, backend="cpu")
    tracemalloc.start()
    try:
        graph = wo.load(ctx, data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 200 * 2**20, f"import peaked at {peak / 2**20:.0f} MB of Python memory"
    got = ctx.compute(graph, {"x": x})["y"]
    want = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_a_classifier_product_skips_the_bank_search(monkeypatch):
    # A MatMul whose constant has no all-positive column (no window) and no bank before it is
    # not searched: the search's zero-padded float64 copies of a [480, 6906] classifier took
    # 1.9 of PP-OCRv6 rec's 2.2 s import. Here a bank search would be an error.
    from webnn.onnx.ops import fourier_conv

    def searched(*args):
        raise AssertionError("the Fourier bank search ran for a weight without a window")

    monkeypatch.setattr(fourier_conv, "_usable_bank", searched)
    rng = np.random.default_rng(3)
    weight = rng.standard_normal((48, 200)).astype(np.float32)  # 2 * (200 - 1) > 48 too
    node = helper.make_node("MatMul", ["x", "w"], ["y"])
    graph = helper.make_graph(
        [node], "classifier",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5, 48])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(weight, "w")],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    x = rng.standard_normal((2, 5, 48)).astype(np.float32)
    exact = x.astype(np.float64) @ weight.astype(np.float64)
    context = webnn.ML().create_context(accelerated=False)
    got = context.compute(wo.load(context, model), {"x": x})["y"]
    assert float(np.max(np.abs(got - exact))) <= 2e-6 * float(np.max(np.abs(exact)))
    # and a weight with a window column is still searched (and found: the DFT basis above)
    assert fourier_conv._has_window_column(np.abs(weight))
    assert not fourier_conv._has_window_column(weight)
