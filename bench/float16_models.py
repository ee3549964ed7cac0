"""float16 models: webnn float16 vs webnn float32 vs ONNX Runtime float16, in one process.

Each model of bench/models.py named here is converted to float16 with onnxconverter-common
(every tensor, inputs and outputs included: keep_io_types=False), then timed interleaved as
bench/models.py does: webnn on the float16 model (as the cpu backend compiles it, and with
WEBNN_FLOAT16=per_op: every float16 node on its float16 kernel, without the float32 form of
graph/passes/float16_promotion.cc), webnn on the float32 model and ORT (cpu) on the float16
model, with the same thread count. Before timing, each float16 result is checked
against ORT's float16 result (max |ours - ORT| <= 2e-2 * max |ORT|: float16 keeps 11 bits and
ORT holds some chains in float32 between its inserted casts).

    pip install ".[bench]"   # onnxconverter-common among them
    python bench/float16_models.py --threads 1 2 --models encoder minilm cls rec [--rounds 15]
        [--onnx-float16 float16]

--onnx-float16 float16 imports the float16 models with webnn.onnx.load(float16="float16")
(ONNX's per-operator rounding: a graph of float16 operators, as a builder-API float16 graph
is); the default "float32" importer mode computes them in float32 already (docs/onnx.md).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # bench/models.py: model cases, engines, interleaved timing


def to_float16(model):
    try:
        from onnxconverter_common import float16
    except ImportError:
        raise SystemExit("bench/float16_models.py: pip install onnxconverter-common") from None
    import onnx

    proto = onnx.load(model) if isinstance(model, str) else model
    # Cast nodes stay as they are (casts to float16 are inserted after them): the converter
    # retargets a Cast to float16 while leaving its declared float output type, which ORT
    # then rejects (MiniLM's attention-mask cast).
    blocked = [*float16.DEFAULT_OP_BLOCK_LIST, "Cast"]
    return float16.convert_float_to_float16(proto, keep_io_types=False, op_block_list=blocked)


def ours_float16(model, feed, folded, onnx_float16):
    """models.Ours on a float16 model imported with webnn.onnx.load(float16=onnx_float16)."""
    import webnn.onnx

    load = webnn.onnx.load
    webnn.onnx.load = functools.partial(load, float16=onnx_float16)
    try:
        return models.Ours(model, feed, folded)
    finally:
        webnn.onnx.load = load


def child(threads, names, rounds, onnx_float16):
    os.environ["WEBNN_NUM_THREADS"] = str(threads)
    for title, (model, feed, folded) in models.model_cases(names).items():
        row = {"model": title, "threads": threads}
        try:
            half = to_float16(model)
            feed16 = {
                k: v.astype(np.float16) if v.dtype == np.float32 else v for k, v in feed.items()
            }
            ort16 = models.Ort(half, feed16, threads)
            reference = ort16.result()
            ours16 = ours_float16(half, feed16, folded, onnx_float16)
            row["err_ours16"] = models._max_rel_error(ours16.result(), reference)
            os.environ["WEBNN_FLOAT16"] = "per_op"  # read when the graph is built
            try:
                per_op = ours_float16(half, feed16, folded, onnx_float16)
            finally:
                del os.environ["WEBNN_FLOAT16"]
            row["err_per_op"] = models._max_rel_error(per_op.result(), reference)
            ours32 = models.Ours(model, feed, folded)
            worst = max(row["err_ours16"], row["err_per_op"])
            if worst > 2e-2:
                row["error"] = f"float16 outputs differ from ORT's: {worst:.2e}"
            else:
                times = models.measure([ours16, per_op, ours32, ort16], rounds)
                row["ours16_ms"], row["per_op_ms"], row["ours32_ms"], row["ort16_ms"] = (
                    t * 1e3 for t in times
                )
        except Exception as e:  # noqa: BLE001 - one failing model must not hide the others
            row["error"] = f"{type(e).__name__}: {e}"[:500]
        print(json.dumps(row), flush=True)


def table(rows):
    lines = [
        (
            "| model | threads | webnn f16 (ms) | f16 per-op (ms) | webnn f32 (ms) | ORT f16 (ms) "
            "| f16/f32 | f16/ORT f16 | per-op/f16 |"
        ),
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['model']} | {r['threads']} | {r['error']} | | | | | | |")
            continue
        f = models._fmt
        lines.append(
            f"| {r['model']} | {r['threads']} | {f(r['ours16_ms'])} | {f(r['per_op_ms'])} | "
            f"{f(r['ours32_ms'])} | {f(r['ort16_ms'])} | {r['ours16_ms'] / r['ours32_ms']:.2f} | "
            f"{r['ours16_ms'] / r['ort16_ms']:.2f} | {r['per_op_ms'] / r['ours16_ms']:.2f} |"
        )
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, nargs="+", default=[1])
    ap.add_argument("--models", nargs="+", default=["encoder", "minilm", "cls", "rec"])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--onnx-float16", choices=["float32", "float16"], default="float32")
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child is not None:
        child(args.child, args.models, args.rounds, args.onnx_float16)
        return
    rows = []
    for threads in args.threads:
        cmd = [sys.executable, __file__, "--child", str(threads), "--rounds", str(args.rounds)]
        cmd += ["--onnx-float16", args.onnx_float16]
        out = subprocess.run(
            cmd + ["--models", *args.models], capture_output=True, text=True, check=False
        )
        if out.returncode != 0:
            raise SystemExit(out.stderr[-3000:])
        rows += [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    print(table(rows))


if __name__ == "__main__":
    main()
