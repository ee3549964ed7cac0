"""OCR demo: the complete rapidocr_onnxruntime pipeline running on webnn instead of ONNX Runtime.

The image is made here: a few lines of text rendered with Pillow's built-in scalable font,
one of them upside down. rapidocr's own detection (PP-OCRv4 det), direction classification
(the mobile v2 classifier, which turns the upside-down line back), recognition (PP-OCRv4
rec with the character list stored in the model's metadata) and all its pre/post-processing
run unchanged; only the session class is swapped: rapidocr builds its sessions with the
name ``InferenceSession`` imported into ``rapidocr_onnxruntime.utils.infer_engine``, and
that name is pointed at ``webnn.onnx.InferenceSession``.

    python examples/ocr_demo.py [--engine webnn|ort] [--save image.png]
"""

from __future__ import annotations

import argparse
import contextlib
import time

import numpy as np
from PIL import Image, ImageDraw, ImageFont

LINES = [
    "WebNN runs ONNX models",
    "Invoice 2026-12-01",
    "this line is upside down",
    "Total 418.75 EUR",
    "quick brown fox 0123456789",
]
UPSIDE_DOWN = 2  # index of the line drawn rotated by 180 degrees


def _draw_line(text: str, font) -> Image.Image:
    """One line of dark text on its own white strip, with a 4 px margin."""
    left, top, right, bottom = font.getbbox(text)
    strip = Image.new("RGB", (right - left + 8, bottom - top + 8), "white")
    ImageDraw.Draw(strip).text((4 - left, 4 - top), text, font=font, fill=(20, 20, 20))
    return strip


def render_image(lines=LINES, upside_down=UPSIDE_DOWN, font_size=30) -> np.ndarray:
    """An RGB uint8 image with one text line per row; line `upside_down` rotated 180°."""
    try:
        font = ImageFont.load_default(size=font_size)  # scalable (FreeType) since Pillow 10.1
    except TypeError as e:
        raise SystemExit(f"ocr_demo.py needs Pillow >= 10.1 for its built-in font ({e})") from e
    strips = [_draw_line(t, font) for t in lines]
    strips[upside_down] = strips[upside_down].rotate(180)
    pad, gap = 20, 18
    width = max(s.width for s in strips) + 2 * pad
    height = sum(s.height for s in strips) + gap * (len(strips) - 1) + 2 * pad
    image = Image.new("RGB", (width, height), "white")
    y = pad
    for strip in strips:
        image.paste(strip, (pad, y))
        y += strip.height + gap
    return np.asarray(image)


@contextlib.contextmanager
def webnn_sessions():
    """rapidocr creates its sessions with this webnn class while the block runs."""
    import webnn.onnx
    from rapidocr_onnxruntime.utils import infer_engine

    saved = infer_engine.InferenceSession
    infer_engine.InferenceSession = webnn.onnx.InferenceSession
    try:
        yield
    finally:
        infer_engine.InferenceSession = saved


def make_engine(engine: str):
    from rapidocr_onnxruntime import RapidOCR

    if engine == "ort":
        return RapidOCR()
    with webnn_sessions():
        return RapidOCR()


def run_ocr(ocr, image: np.ndarray):
    """rapidocr's result: ([[box, text, score], ...], [det_s, cls_s, rec_s])."""
    # rapidocr treats an ndarray as OpenCV's BGR; our image is RGB (black on white: same text).
    return ocr(image[:, :, ::-1].copy())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", choices=["webnn", "ort"], default="webnn")
    parser.add_argument("--save", help="also write the rendered image to this PNG file")
    args = parser.parse_args()

    image = render_image()
    if args.save:
        Image.fromarray(image).save(args.save)
    print(
        f"image: {image.shape[1]}x{image.shape[0]} px, {len(LINES)} lines "
        f"(line {UPSIDE_DOWN + 1} upside down); engine: {args.engine}"
    )
    t0 = time.perf_counter()
    ocr = make_engine(args.engine)
    t1 = time.perf_counter()
    sessions = [
        ocr.text_det.infer.session,
        ocr.text_cls.infer.session,
        ocr.text_rec.session.session,
    ]
    kinds = {f"{type(x).__module__}.{type(x).__name__}" for x in sessions}
    print(f"sessions created in {t1 - t0:.2f} s: {', '.join(sorted(kinds))}")
    for attempt in ("first run (imports and compiles a graph per input shape)", "second run"):
        t = time.perf_counter()
        result, elapse = run_ocr(ocr, image)
        total = time.perf_counter() - t
        det, cls, rec = elapse
        print(
            f"{attempt}: total {total * 1e3:.0f} ms; rapidocr stages: det {det * 1e3:.0f} ms, "
            f"cls {cls * 1e3:.0f} ms, rec {rec * 1e3:.0f} ms"
        )
    print("recognized lines (text, confidence, box corners x,y):")
    for box, text, score in result:
        corners = " ".join(f"({x:.0f},{y:.0f})" for x, y in box)
        print(f"  {text!r:42} {float(score):.3f}  {corners}")
    # PP-OCRv4 rec often leaves out the narrow spaces of this font: compare without them.
    expected = {squeeze(t) for t in LINES}
    found = {squeeze(text) for _, text, _ in result}
    print(f"{len(expected & found)} of {len(LINES)} lines read correctly (ignoring spaces)")


def squeeze(text: str) -> str:
    return "".join(text.split())


if __name__ == "__main__":
    main()
