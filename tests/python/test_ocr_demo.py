"""README command 1: rapidocr's complete OCR pipeline on webnn gives ONNX Runtime's answer.

The demo's image (examples/ocr_demo.py: Pillow text, one line upside down) goes through
rapidocr_onnxruntime twice: once as shipped (ONNX Runtime), once with webnn.onnx's
InferenceSession swapped in. The recognized text must be identical and every box within 2 px;
during our run ONNX Runtime must not create a session or run anything.
"""

import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("rapidocr_onnxruntime")
ort = pytest.importorskip("onnxruntime")

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
import ocr_demo


def _squeeze(text):
    return "".join(text.split())


def test_ocr_pipeline_on_webnn_matches_onnxruntime(monkeypatch):
    image = ocr_demo.render_image()
    reference, _ = ocr_demo.run_ocr(ocr_demo.make_engine("ort"), image)
    # The reference itself reads every line (ignoring the spaces PP-OCRv4 rec drops), so the
    # comparison below is about real text.
    assert sorted(_squeeze(t) for _, t, _ in reference) == sorted(
        _squeeze(t) for t in ocr_demo.LINES
    )

    calls = []
    for name in ("__init__", "run", "run_with_iobinding"):
        original = getattr(ort.InferenceSession, name)

        def spy(self, *args, _name=name, _original=original, **kwargs):
            calls.append(_name)
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(ort.InferenceSession, name, spy)
    engine = ocr_demo.make_engine("webnn")
    ours, elapse = ocr_demo.run_ocr(engine, image)
    assert calls == [], f"ONNX Runtime was used during the webnn run: {calls}"
    sessions = [
        engine.text_det.infer.session,
        engine.text_cls.infer.session,
        engine.text_rec.session.session,
    ]
    assert all(type(x).__module__ == "webnn.onnx.session" for x in sessions)

    assert [t for _, t, _ in ours] == [t for _, t, _ in reference]
    for (box, text, score), (ref_box, _, ref_score) in zip(ours, reference):
        np.testing.assert_allclose(np.array(box), np.array(ref_box), atol=2, err_msg=text)
        assert abs(float(score) - float(ref_score)) < 0.01, text
    assert len(elapse) == 3 and all(t > 0 for t in elapse)
