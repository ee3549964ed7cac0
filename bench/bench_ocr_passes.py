"""PaddleOCR models (cls, rec, det from the rapidocr-onnxruntime wheel) through the ONNX
importer, with and without the compiler passes, and ONNX Runtime, in one process.

Three compilations of each model: every pass with the memory plan; WEBNN_PASSES=none
WEBNN_MEMORY_PLAN=none (no compiler); every pass but layout assignment. Runs are interleaved
with ORT's (same thread count, spinning off), medians reported, outputs checked against ORT.

    pip install onnx onnxruntime; pip install --no-deps rapidocr-onnxruntime
    WEBNN_NUM_THREADS=1 python bench/bench_ocr_passes.py --rounds 20 cls rec det

Needs webnn.onnx (branch onnx-import).
"""

import argparse
import importlib.util
import os
import statistics
import time
from pathlib import Path

import numpy as np
import webnn

try:
    import onnxruntime as ort
    import webnn.onnx as wo
except ImportError as e:  # pragma: no cover - optional dependencies
    raise SystemExit(f"bench_ocr_passes.py needs onnxruntime and webnn.onnx: {e}") from e

MODELS = {
    "cls": ("ch_ppocr_mobile_v2.0_cls_infer.onnx", [1, 3, 48, 192]),
    "rec": ("ch_PP-OCRv4_rec_infer.onnx", [1, 3, 48, 320]),
    "det": ("ch_PP-OCRv4_det_infer.onnx", [1, 3, 640, 640]),
}
CONFIGS = {
    "passes": ("all", "all"),
    "no passes": ("none", "none"),
    "no layout": ("constant_folding,batch_norm_folding,epilogue_fusion", "all"),
}


def model_dir():
    spec = importlib.util.find_spec("rapidocr_onnxruntime")
    if spec is None:
        raise SystemExit("install the rapidocr-onnxruntime wheel (pip install --no-deps ...)")
    return Path(spec.submodule_search_locations[0]) / "models"


def load(ctx, path, shape, passes, memory_plan):
    os.environ["WEBNN_PASSES"], os.environ["WEBNN_MEMORY_PLAN"] = passes, memory_plan
    try:
        return wo.load(ctx, path, input_shapes={"x": shape})
    finally:
        os.environ.pop("WEBNN_PASSES")
        os.environ.pop("WEBNN_MEMORY_PLAN")


def bench(ctx, name, rounds, threads):
    fname, shape = MODELS[name]
    path = str(model_dir() / fname)
    x = np.random.default_rng(0).uniform(-1, 1, shape).astype(np.float32)
    graphs = {cfg: load(ctx, path, shape, *env) for cfg, env in CONFIGS.items()}
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    feed = {session.get_inputs()[0].name: x}
    want = session.run(None, feed)[0]
    xt = ctx.create_tensor(shape, "float32", writable=True)
    ctx.write_tensor(xt, x)
    bound = {}
    for cfg, g in graphs.items():
        out = g.get_output_names()[0]
        yt = ctx.create_tensor(list(g.output_descriptors[out]["shape"]), "float32", readable=True)
        bound[cfg] = ({g.get_input_names()[0]: xt}, {out: yt})
        ctx.dispatch(g, *bound[cfg])
        err = float(np.max(np.abs(ctx.read_tensor(yt) - want)))
        assert err <= 1e-3 * max(1.0, float(np.abs(want).max())), f"{name} {cfg}: error {err}"
    times = {k: [] for k in [*graphs, "ORT"]}
    for _ in range(rounds):
        for cfg, g in graphs.items():
            t0 = time.perf_counter()
            ctx.dispatch(g, *bound[cfg])
            times[cfg].append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        session.run(None, feed)
        times["ORT"].append(time.perf_counter() - t0)
    med = {k: statistics.median(v) * 1e3 for k, v in times.items()}
    s = graphs["passes"].compile_stats
    base = graphs["no passes"].compile_stats
    print(
        f"{name} {shape}, {threads} thread(s): "
        + ", ".join(f"{k} {v:.2f} ms" for k, v in med.items())
        + f"; passes/ORT {med['passes'] / med['ORT']:.2f}; nodes {s['nodes_before']} -> "
        f"{s['nodes_after']}, {s['fused_steps']} fused steps; arena {s['arena_bytes'] / 1e6:.2f} MB"
        f" (no passes: {base['unshared_bytes'] / 1e6:.1f} MB of separate buffers)",
        flush=True,
    )


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("models", nargs="*", default=list(MODELS), choices=list(MODELS))
    p.add_argument("--rounds", type=int, default=20)
    args = p.parse_args()
    ctx = webnn.ML().create_context(accelerated=False, backend="cpu")
    # The context's thread count (WEBNN_NUM_THREADS, default every core); ORT gets the same.
    threads = int(os.environ.get("WEBNN_NUM_THREADS") or os.cpu_count())
    for name in args.models:
        bench(ctx, name, args.rounds, threads)


if __name__ == "__main__":
    main()
