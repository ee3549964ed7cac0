"""Times QDQ-quantized OCR models: webnn's int8 kernels vs its float path vs ONNX Runtime.

Each float model of bench/models.py named with --models (cls, det, rec) is quantized here with
onnxruntime.quantization.quantize_static (QDQ format, uint8 activations, int8 per-channel
weights, reduce_range as ORT advises on CPUs without VNNI), calibrated on its benchmark input
and two perturbed copies. Three engines then run interleaved on that one QDQ model in one
process per thread count (WEBNN_NUM_THREADS = ORT intra_op_num_threads = N):
  - ours: webnn with every pass, the QDQ convolutions on the int8 kernels (qdq_fusion);
  - ours-float: webnn without the qdq_fusion pass (the same graph on float32 kernels);
  - ORT: ONNX Runtime's session of the QDQ model (its QDQ fusion to integer kernels);
  - with --baseline-passes SPEC also ours-baseline: webnn with WEBNN_PASSES=SPEC (e.g. every
    pass but a new one, to measure what it gains in the same interleaved run).
Before timing, our output is checked against ORT's: the share of outputs more than one
quantization step (the output dequantize's scale, or 1/255 behind a softmax) apart must not
exceed twice (+ 1e-4) the share by which ORT's own session with graph optimizations off differs
from its optimized one. In deep quantized networks a value near a rounding boundary of one layer
flips a step there and the flip grows downstream: ORT disagrees with itself that way (PP-OCRv4
det QDQ: 0.8% of its sigmoid outputs, by up to 0.99), so "every output within one step" holds
only for shallow models.

    python bench/qdq_models.py --threads 1 2 --models cls det [--rounds 21]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(
    0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "python")
)
import models as fp
from qdq_quantize import output_step, perturbed, quantize_qdq

NO_QDQ = "constant_folding,batch_norm_folding,layout_assignment,epilogue_fusion"


def quantize(src, dst, feed):
    quantize_qdq(src, dst, [feed] + perturbed(feed, 2, 0.05, seed=1), per_channel=True)


def ort_unoptimized(path, feed):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.intra_op_num_threads = 1
    session = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    return dict(zip(names, session.run(None, feed)))


def beyond_step_share(reference, got, step):
    """Share of the outputs (all of them together) more than one step from the reference."""
    beyond = sum(int(np.sum(np.abs(got[k] - v) > step * 1.001)) for k, v in reference.items())
    return beyond / max(1, sum(v.size for v in reference.values()))


def ours(path, feed, passes):
    os.environ["WEBNN_PASSES"] = passes  # read when the graph compiles
    try:
        return fp.Ours(path, feed, {})
    finally:
        del os.environ["WEBNN_PASSES"]


def child(threads, names, rounds, workdir, baseline):
    os.environ["WEBNN_NUM_THREADS"] = str(threads)
    for title, (model, feed, _) in fp.model_cases(names).items():
        row = {"model": title + " QDQ", "threads": threads}
        try:
            path = os.path.join(workdir, f"{abs(hash(title))}_qdq.onnx")
            if not os.path.exists(path):
                quantize(model, path, feed)
            ort_engine = fp.Ort(path, feed, threads)
            reference = ort_engine.result()
            ort_self = beyond_step_share(reference, ort_unoptimized(path, feed), output_step(path))
            int8, flt = ours(path, feed, "all"), ours(path, feed, NO_QDQ)
            fused = int8.graph.compile_stats["passes"].get("qdq_fusion", 0)
            step = output_step(path)
            errs, shares = [], []
            for e in (int8, flt):
                got = e.result()
                errs.append(max(float(np.max(np.abs(got[k] - v))) for k, v in reference.items()))
                shares.append(beyond_step_share(reference, got, step))
            row.update(fused=fused, step=step, err_int8=errs[0], err_float=errs[1])
            row.update(share_int8=shares[0], share_ort_self=ort_self)
            if shares[0] > 2 * ort_self + 1e-4:
                row["error"] = (
                    f"{shares[0]:.2%} of int8 outputs more than one step ({step:.3g}) from ORT's"
                    f" (ORT unoptimized vs optimized: {ort_self:.2%})"
                )
            else:
                engines = [int8, flt, ort_engine] + (
                    [ours(path, feed, baseline)] if baseline else []
                )
                t = fp.measure(engines, rounds)
                row.update(int8_ms=t[0] * 1e3, float_ms=t[1] * 1e3, ort_ms=t[2] * 1e3)
                if baseline:
                    row["baseline_ms"] = t[3] * 1e3
        except Exception as e:  # noqa: BLE001 - one failing model must not hide the others
            row["error"] = f"{type(e).__name__}: {e}"[:500]
        print(json.dumps(row), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--models", nargs="+", default=["cls"], choices=fp.ALL_MODELS)
    parser.add_argument(
        "--baseline-passes", help="also time webnn with WEBNN_PASSES set to this (a baseline)"
    )
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--workdir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        child(args.child, args.models, args.rounds, args.workdir, args.baseline_passes)
        return
    import onnxruntime as ort

    rows = []
    with tempfile.TemporaryDirectory() as workdir:
        for threads in args.threads:
            cmd = [sys.executable, __file__, "--child", str(threads), "--workdir", workdir]
            cmd += ["--rounds", str(args.rounds), "--models", *args.models]
            if args.baseline_passes:
                cmd += ["--baseline-passes", args.baseline_passes]
            proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
            rows += [json.loads(s) for s in proc.stdout.splitlines() if s.startswith("{")]
            if proc.returncode != 0:
                sys.stderr.write(proc.stderr[-3000:])
                raise SystemExit(f"the {threads}-thread run failed (exit {proc.returncode})")
    print(
        f"QDQ models: webnn int8 vs webnn float path vs ONNX Runtime {ort.__version__}; "
        f"medians of {args.rounds} interleaved samples, {os.cpu_count()} CPUs\n"
    )
    print("| model | threads | int8 nodes | webnn int8 (ms) | webnn float (ms) | ORT (ms) | "
          "int8/ORT | int8/float | max err int8 (steps) | beyond a step: int8 / ORT-self |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        if "error" in r:
            print(f"| {r['model']} | {r['threads']} | {r['error']} | | | | | | | |")
            continue
        print(
            f"| {r['model']} | {r['threads']} | {r['fused']} | {r['int8_ms']:.3g} | "
            f"{r['float_ms']:.3g} | {r['ort_ms']:.3g} | {r['int8_ms'] / r['ort_ms']:.2f} | "
            f"{r['int8_ms'] / r['float_ms']:.2f} | {r['err_int8'] / r['step']:.2f} | "
            f"{r['share_int8']:.3%} / {r['share_ort_self']:.3%} |"
        )
    if args.baseline_passes:
        print(f"\nbaseline: WEBNN_PASSES={args.baseline_passes}\n")
        print("| model | threads | webnn int8 (ms) | baseline (ms) | int8/ORT | baseline/ORT |")
        print("|---|---|---|---|---|---|")
        for r in rows:
            if "baseline_ms" in r:
                print(
                    f"| {r['model']} | {r['threads']} | {r['int8_ms']:.3g} | "
                    f"{r['baseline_ms']:.3g} | {r['int8_ms'] / r['ort_ms']:.2f} | "
                    f"{r['baseline_ms'] / r['ort_ms']:.2f} |"
                )


if __name__ == "__main__":
    main()
