"""Speed survey: every installed ONNX model of tests/python/wheel_models.py (the suite's wheels
and, when installed, the large ones) on our engine and on ONNX Runtime, same thread count,
interleaved in one process; prints median latencies and ours/ORT, slowest ratio first. A
quick way to find the models (and then, with bench/profile_models.py-style profiling, the
ops) where we fall behind.

    WEBNN_NUM_THREADS=1 PYTHONPATH=python python bench/survey_speed.py [--threads 1] [name ...]

Both engines run with bound tensors (our dispatch on written tensors, ORT's
run_with_iobinding), as bench/models.py measures them.
"""

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "python"))

import wheel_models as wm
from models import Ort, Ours, measure


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="models to measure (default: all installed)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    os.environ["WEBNN_NUM_THREADS"] = str(args.threads)
    rows = []
    for case in wm.CASES:
        if args.names and case.name not in args.names:
            continue
        path = case.path()
        if path is None:
            continue
        feeds = case.make_feeds()
        try:
            ours = Ours(path, feeds, {})
            theirs = Ort(path, feeds, args.threads)
            ours_s, ort_s = measure([ours, theirs], args.rounds)
        except Exception as e:  # noqa: BLE001 - a survey: report and go on
            print(f"{case.name}: {type(e).__name__}: {str(e)[:200]}", flush=True)
            continue
        rows.append((ours_s / ort_s, case.name, ours_s, ort_s))
        print(
            f"{case.name}: ours {ours_s * 1e3:.3f} ms, ORT {ort_s * 1e3:.3f} ms, "
            f"ratio {ours_s / ort_s:.2f}",
            flush=True,
        )
    print(f"\n{'model':36} {'ours ms':>9} {'ORT ms':>9} {'ours/ORT':>9}")
    for ratio, name, ours_s, ort_s in sorted(rows, reverse=True):
        print(f"{name:36} {ours_s * 1e3:9.3f} {ort_s * 1e3:9.3f} {ratio:9.2f}")


if __name__ == "__main__":
    main()
