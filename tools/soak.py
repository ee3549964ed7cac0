#!/usr/bin/env python3
"""Dispatches a model in a loop and checks that results stay the same and RSS stays flat.

    python tools/soak.py --dispatches 100000 --threads 2     # minutes
    python tools/soak.py --dispatches 100000 --threads 4 --model ocr-cls

--model cnn (default): a MobileNet-style CNN built here; ocr-cls: the real text-direction
classifier of the rapidocr-onnxruntime wheel (ch_ppocr_mobile_v2.0_cls, 1x3x48x192),
imported with webnn.onnx.

Exits 0 with a last line "ok ..." when every checked result equals the first one and the
resident set grew by at most --max-growth-mb after the warm-up; 1 otherwise; a watchdog
(--timeout seconds) dumps every thread's stack and exits 2 instead of hanging.
tests/python/test_dispatch_loop.py runs it with 5,000 dispatches.
"""

import argparse
import faulthandler
import os
import sys


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def build_model(ctx, np):
    rng = np.random.default_rng(7)
    b = ctx.create_graph_builder()

    def w(*shape):
        return b.constant((rng.standard_normal(shape) * 0.2).astype(np.float32))

    # Many short kernels, each a parallel region of the pool.
    x = b.input("x", [1, 3, 24, 48], "float32")
    h = b.relu(b.conv2d(x, w(16, 3, 3, 3), padding=[1, 1, 1, 1], strides=[2, 2], bias=w(16)))
    for block in range(8):
        c = 16
        dw = b.conv2d(h, w(c, 1, 3, 3), padding=[1, 1, 1, 1], groups=c, bias=w(c))
        dw = b.clamp(dw, min_value=0.0, max_value=6.0)
        pw = b.conv2d(dw, w(c, c, 1, 1), bias=w(c))
        pw = b.hard_swish(pw) if block % 2 else b.relu(pw)
        h = b.add(h, b.mul(pw, w(1, c, 1, 1)))
    pooled = b.reshape(b.average_pool2d(h), [1, 16])
    logits = b.gemm(pooled, w(16, 10), c=w(10))
    graph = b.build({"y": b.softmax(logits, 1)})
    return graph, rng.standard_normal((1, 3, 24, 48)).astype(np.float32), "x", "y", [1, 10]


def ocr_cls_model(ctx, np):
    import importlib.util
    from pathlib import Path

    import webnn.onnx

    spec = importlib.util.find_spec("rapidocr_onnxruntime")
    if spec is None:
        raise SystemExit(
            "--model ocr-cls needs the rapidocr-onnxruntime wheel (pip install .[test])"
        )
    path = Path(spec.origin).parent / "models" / "ch_ppocr_mobile_v2.0_cls_infer.onnx"
    graph = webnn.onnx.load(ctx, path, input_shapes={"x": [1, 3, 48, 192]})
    data = np.random.default_rng(7).standard_normal((1, 3, 48, 192)).astype(np.float32)
    return graph, data, "x", "save_infer_model/scale_0.tmp_1", [1, 2]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dispatches", type=int, default=100_000)
    ap.add_argument("--threads", type=int, default=2, help="WEBNN_NUM_THREADS of the context")
    ap.add_argument("--check-every", type=int, default=500)
    ap.add_argument("--warmup", type=int, default=500, help="dispatches before the RSS baseline")
    ap.add_argument("--max-growth-mb", type=float, default=8.0)
    ap.add_argument("--timeout", type=float, default=3600.0)
    ap.add_argument("--model", choices=["cnn", "ocr-cls"], default="cnn")
    args = ap.parse_args()

    faulthandler.dump_traceback_later(args.timeout, exit=True)  # exit code 1 from faulthandler
    os.environ["WEBNN_NUM_THREADS"] = str(args.threads)
    import numpy as np
    import webnn

    ctx = webnn.ML().create_context(accelerated=False, backend="cpu")
    make = ocr_cls_model if args.model == "ocr-cls" else build_model
    graph, data, x_name, y_name, y_shape = make(ctx, np)
    xt = ctx.create_tensor(list(data.shape), "float32", writable=True)
    yt = ctx.create_tensor(y_shape, "float32", readable=True)
    ctx.write_tensor(xt, data)
    ctx.dispatch(graph, {x_name: xt}, {y_name: yt})
    first = ctx.read_tensor(yt)
    baseline = None
    peak = 0.0
    for i in range(args.dispatches):
        ctx.dispatch(graph, {x_name: xt}, {y_name: yt})
        if i + 1 == min(args.warmup, args.dispatches):
            baseline = rss_mb()
        if i % args.check_every == 0:
            if not np.array_equal(ctx.read_tensor(yt), first):
                print(f"result changed at dispatch {i}")
                return 1
            peak = max(peak, rss_mb())
    if not np.array_equal(ctx.read_tensor(yt), first):
        print("result changed at the last dispatch")
        return 1
    end = rss_mb()
    peak = max(peak, end)
    growth = peak - (baseline if baseline is not None else end)
    line = (
        f"{args.dispatches} dispatches of {args.model} at {args.threads} threads: RSS {baseline:.1f} MB after "
        f"warm-up, peak {peak:.1f} MB, end {end:.1f} MB (growth {growth:.2f} MB)"
    )
    if growth > args.max_growth_mb:
        print(f"RSS grew: {line}")
        return 1
    print(f"ok {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
