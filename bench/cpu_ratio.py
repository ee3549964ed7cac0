"""ours / ONNX Runtime per model in thread CPU time: the one-thread ratio a loaded machine
disturbs least.

    WEBNN_NUM_THREADS=1 python bench/cpu_ratio.py minilm encoder minilm_l6_int8 [--rounds 11]
        [--passes LIST]

Models are bench/models.py's (minilm, encoder, ...) or tests/python/wheel_models.py's cases.
Ours and ORT run bound tensors interleaved in one process; each sample is ~30 ms of calls, the
lower quartile of --rounds samples is reported. With --passes, a second graph compiled with
WEBNN_PASSES=LIST joins the interleaving (an A/B of passes in one build); the two graphs are
built in both orders (the one built first measured a few percent slower), so each model prints
two lines. With more than one thread the samples are wall time.
"""

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "python"))

import wheel_models as wm
from models import Ort, Ours, model_cases


def _load(name):
    cases = {c.name: c for c in wm.CASES}
    if name in cases:
        return str(cases[name].path()), cases[name].make_feeds(), {}
    ((model, feed, folded),) = model_cases([name]).values()
    return model, feed, folded


def _ours(model, feed, folded, passes=None):
    old = os.environ.get("WEBNN_PASSES")
    if passes:
        os.environ["WEBNN_PASSES"] = passes
    try:
        return Ours(model, feed, folded)
    finally:
        if passes:
            if old is None:
                os.environ.pop("WEBNN_PASSES")
            else:
                os.environ["WEBNN_PASSES"] = old


def _measure(engines, rounds, clock):
    def timed(fn, calls):
        start = clock()
        for _ in range(calls):
            fn()
        return (clock() - start) / calls

    for e in engines:
        for _ in range(3):
            e.run()
    calls = max(1, int(0.03 / max(timed(engines[0].run, 1), 1e-6)))
    samples = [[] for _ in engines]
    for _ in range(rounds):
        for e, s in zip(engines, samples):
            s.append(timed(e.run, calls))
    return [float(np.percentile(s, 25)) * 1e3 for s in samples]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="+")
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--passes", help="also time a graph compiled with WEBNN_PASSES=PASSES")
    args = parser.parse_args()
    threads = int(os.environ.get("WEBNN_NUM_THREADS", "1"))
    clock = time.thread_time if threads == 1 else time.perf_counter
    for name in args.names:
        model, feed, folded = _load(name)
        ort = Ort(model, feed, threads)
        if not args.passes:
            ours, theirs = _measure([_ours(model, feed, folded), ort], args.rounds, clock)
            print(f"{name:18} {threads} thr  ours {ours:8.3f} ms  ORT {theirs:8.3f} ms  "
                  f"ours/ORT {ours / theirs:.3f}", flush=True)  # fmt: skip
            continue
        for b_first in (False, True):
            if b_first:
                b = _ours(model, feed, folded, args.passes)
                a = _ours(model, feed, folded)
            else:
                a = _ours(model, feed, folded)
                b = _ours(model, feed, folded, args.passes)
            ta, tb, tr = _measure([a, b, ort], args.rounds, clock)
            print(f"{name:18} {threads} thr  all {ta:8.3f}  passes {tb:8.3f}  ORT {tr:8.3f} ms  "
                  f"all/ORT {ta / tr:.3f}  passes/ORT {tb / tr:.3f}  all/passes {ta / tb:.3f}"
                  f"{'  (passes built first)' if b_first else ''}", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
