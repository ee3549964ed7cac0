"""An in-graph log-mel front end (STFT with a Hann window, magnitude, MelWeightMatrix, Log) as
audio models export it: the window and the mel table fold at import; compared with ONNX
Runtime on both backends."""

import numpy as np
import pytest

ort = pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")
import webnn
import webnn.onnx as wo
from onnx import TensorProto, helper, numpy_helper


@pytest.mark.parametrize("bins,n_fft,rate", [(40, 256, 16000), (64, 512, 22050)])
def test_log_mel_front_end_matches_onnxruntime(bins, n_fft, rate):
    hop = n_fft // 4
    consts = {
        "frame_step": np.array(hop, np.int64),
        "win_len": np.array(n_fft, np.int64),
        "bins": np.array(bins, np.int64),
        "dft": np.array(n_fft, np.int64),
        "rate": np.array(rate, np.int64),
        "lo": np.array(20.0, np.float32),
        "hi": np.array(rate / 2, np.float32),
        "axes": np.array([-1], np.int64),
        "eps": np.array(1e-6, np.float32),
    }
    nodes = [
        helper.make_node("HannWindow", ["win_len"], ["window"], periodic=1),
        helper.make_node("Unsqueeze", ["audio", "axes"], ["signal"]),
        helper.make_node("STFT", ["signal", "frame_step", "window"], ["spec"], onesided=1),
        helper.make_node("Mul", ["spec", "spec"], ["sq"]),
        helper.make_node("ReduceSum", ["sq", "axes"], ["power"], keepdims=0),
        helper.make_node(
            "MelWeightMatrix",
            ["bins", "dft", "rate", "lo", "hi"],
            ["mel"],
            output_datatype=TensorProto.FLOAT,
        ),
        helper.make_node("MatMul", ["power", "mel"], ["melspec"]),
        helper.make_node("Add", ["melspec", "eps"], ["floored"]),
        helper.make_node("Log", ["floored"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "logmel",
        [helper.make_tensor_value_info("audio", TensorProto.FLOAT, [1, 4000])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(v, k) for k, v in consts.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    t = np.arange(4000) / rate
    audio = 0.3 * np.sin(2 * np.pi * 220 * t) + 0.05 * np.sin(2 * np.pi * 3100 * t)
    audio = audio.astype(np.float32)[None]
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (want,) = session.run(None, {"audio": audio})
    for backend in ("cpu", "reference"):
        context = webnn.ML().create_context(accelerated=False, backend=backend)
        got = context.compute(wo.load(context, model), {"audio": audio})["y"]
        assert got.shape == want.shape
        assert float(np.max(np.abs(got - want))) <= 1e-3 * float(np.max(np.abs(want)))


@pytest.mark.parametrize(
    "signal_shape,onesided,with_window",
    [
        ([2, 600], 1, True),  # [batch, length]: real, as ONNX Runtime accepts it
        ([2, 600, 1], 0, False),
        ([1, 600, 2], 0, True),  # complex (re, im)
        ([1, 601, 2], 0, False),
    ],
)
def test_stft_signal_forms_match_onnxruntime(signal_shape, onesided, with_window):
    frame, step = 64, 24
    inits = [
        numpy_helper.from_array(np.array(step, np.int64), "step"),
        numpy_helper.from_array(np.array(frame, np.int64), "frame"),
    ]
    inputs = ["signal", "step", "", "frame"]
    if with_window:
        window = np.hanning(frame).astype(np.float32) + 0.1
        inits.append(numpy_helper.from_array(window, "window"))
        inputs = ["signal", "step", "window"]
    node = helper.make_node("STFT", inputs, ["y"], onesided=onesided)
    graph = helper.make_graph(
        [node],
        "stft",
        [helper.make_tensor_value_info("signal", TensorProto.FLOAT, signal_shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    signal = np.random.default_rng(5).standard_normal(signal_shape).astype(np.float32)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (want,) = session.run(None, {"signal": signal})
    for backend in ("cpu", "reference"):
        context = webnn.ML().create_context(accelerated=False, backend=backend)
        got = context.compute(wo.load(context, model), {"signal": signal})["y"]
        assert got.shape == want.shape
        assert float(np.max(np.abs(got - want))) <= 1e-4 * float(np.max(np.abs(want)))


def test_stft_rejects_a_frame_longer_than_the_signal():
    inits = [
        numpy_helper.from_array(np.array(4, np.int64), "step"),
        numpy_helper.from_array(np.array(64, np.int64), "frame"),
    ]
    node = helper.make_node("STFT", ["signal", "step", "", "frame"], ["y"])
    graph = helper.make_graph(
        [node],
        "stft",
        [helper.make_tensor_value_info("signal", TensorProto.FLOAT, [1, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    context = webnn.ML().create_context(accelerated=False)
    with pytest.raises(wo.OnnxImportError, match="STFT.*frame_length 64"):
        wo.load(context, model)


@pytest.mark.parametrize(
    "length,frame,step,with_window",
    [
        (4000, 512, 160, True),  # even frame and step: the radix-2 form (E + W^k O)
        (4001, 400, 160, True),  # odd signal length, N / 2 = 200
        (1203, 50, 10, False),  # N / 2 = 25 is odd: the upper half has one bin less
        (999, 8, 2, True),  # the smallest frame the split form takes
        (1000, 64, 25, True),  # odd step: the direct form
        (1000, 63, 16, False),  # odd frame: the direct form
    ],
)
def test_stft_real_onesided_forms_match_onnxruntime(length, frame, step, with_window):
    inits = [
        numpy_helper.from_array(np.array(step, np.int64), "step"),
        numpy_helper.from_array(np.array(frame, np.int64), "frame"),
    ]
    inputs = ["signal", "step", "", "frame"]
    if with_window:
        window = (np.hanning(frame) + 0.05).astype(np.float32)
        inits.append(numpy_helper.from_array(window, "window"))
        inputs = ["signal", "step", "window"]
    node = helper.make_node("STFT", inputs, ["y"], onesided=1)
    graph = helper.make_graph(
        [node],
        "stft",
        [helper.make_tensor_value_info("signal", TensorProto.FLOAT, [2, length, 1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    signal = np.random.default_rng(length).standard_normal((2, length, 1)).astype(np.float32)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (want,) = session.run(None, {"signal": signal})
    # Independent of both engines: numpy's FFT of each windowed frame, in double.
    w = window.astype(np.float64) if with_window else np.ones(frame)
    frames = (length - frame) // step + 1
    starts = np.arange(frames) * step
    framed = signal[:, starts[:, None] + np.arange(frame)[None, :], 0] * w
    spectrum = np.fft.rfft(framed, axis=-1)
    exact = np.stack([spectrum.real, spectrum.imag], -1)
    assert want.shape == exact.shape
    scale = float(np.max(np.abs(exact)))
    for backend in ("cpu", "reference"):
        context = webnn.ML().create_context(accelerated=False, backend=backend)
        got = context.compute(wo.load(context, model), {"signal": signal})["y"]
        assert got.shape == exact.shape
        assert float(np.max(np.abs(got - exact))) <= 2e-6 * scale
        # ORT's own STFT is further from the exact values (3e-5 for N = 400).
        assert float(np.max(np.abs(got - want))) <= 1e-4 * scale
