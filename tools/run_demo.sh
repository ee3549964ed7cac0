#!/usr/bin/env bash
# README command 1: sets everything up on a fresh machine and runs the OCR demo, rapidocr's
# complete pipeline (PP-OCRv4 det + direction classifier + PP-OCRv4 rec, from the
# rapidocr-onnxruntime wheel) with webnn.onnx.InferenceSession in place of ONNX Runtime's.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
. .venv/bin/activate
python -m pip install -q --upgrade pip
# [demo]: onnx and rapidocr-onnxruntime 1.4.x (which brings onnxruntime, opencv-python,
# pyclipper, shapely and Pillow; the demo draws its image with Pillow's built-in font).
python -m pip install -q ".[demo]"
python examples/ocr_demo.py
