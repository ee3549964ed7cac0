"""The attention core of the transformer benchmarks, piece by piece, against ONNX Runtime.

    python bench/bench_attention.py [--threads 1] [--rounds 21] [--cpu-time]

Each case is a small ONNX graph (onnx.helper) that both engines run from the same file, so our
side goes through webnn.onnx.load and its passes exactly as MiniLM's and the encoder's layers
do: softmax over [1, h, s, s]; the scores QK^T / sqrt(d) + mask (K transposed by a Transpose
node, as the exports do); the whole core (scores, softmax, PV). Shapes: MiniLM's (12 heads of
32, 128 tokens) and the encoder's (4 heads of 64). Samples of both engines are interleaved in
one process with the same thread count; the lower quartile of each is reported with the ratio
ours / ORT. --cpu-time (one thread only) times the calling thread's CPU time instead of wall
time, which a loaded machine disturbs far less.
"""

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))


def _model(nodes, inputs, outputs, inits=()):
    from onnx import TensorProto, helper

    f = TensorProto.FLOAT
    graph = helper.make_graph(
        nodes,
        "attention",
        [helper.make_tensor_value_info(n, f, s) for n, s in inputs],
        [helper.make_tensor_value_info(n, f, s) for n, s in outputs],
        list(inits),
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def cases(heads, seq, dh, rng):
    from onnx import helper, numpy_helper

    out = {}
    x = (rng.standard_normal((1, heads, seq, seq)) * 3).astype(np.float32)
    out["softmax"] = (
        _model(
            [helper.make_node("Softmax", ["x"], ["y"], axis=-1)],
            [("x", list(x.shape))],
            [("y", list(x.shape))],
        ),
        {"x": x},
    )
    qkv = {n: rng.standard_normal((1, heads, seq, dh)).astype(np.float32) for n in "qkv"}
    qkv["mask"] = np.zeros((1, 1, 1, seq), np.float32)
    qkv["mask"][..., seq - seq // 8 :] = -10000.0  # padded tokens
    scale = numpy_helper.from_array(np.array(np.sqrt(dh), np.float32), "scale")
    nodes = [
        helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
        helper.make_node("MatMul", ["q", "kt"], ["s0"]),
        helper.make_node("Div", ["s0", "scale"], ["s1"]),
        helper.make_node("Add", ["s1", "mask"], ["s2"]),
        helper.make_node("Softmax", ["s2"], ["p"], axis=-1),
        helper.make_node("MatMul", ["p", "v"], ["o"]),
    ]
    qshape, mshape = [1, heads, seq, dh], [1, 1, 1, seq]
    out["scores"] = (
        _model(
            nodes[:4],
            [("q", qshape), ("k", qshape), ("mask", mshape)],
            [("s2", [1, heads, seq, seq])],
            [scale],
        ),
        {k: qkv[k] for k in ("q", "k", "mask")},
    )
    out["attention core"] = (
        _model(
            nodes,
            [("q", qshape), ("k", qshape), ("v", qshape), ("mask", mshape)],
            [("o", qshape)],
            [scale],
        ),
        qkv,
    )
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--cpu-time", action="store_true")
    args = parser.parse_args()
    if args.cpu_time and args.threads != 1:
        raise SystemExit("bench_attention.py: --cpu-time measures one thread only")
    os.environ["WEBNN_NUM_THREADS"] = str(args.threads)
    import models as m  # bench/models.py: the same engine wrappers as the whole models

    clock = time.thread_time if args.cpu_time else time.perf_counter

    def timed(fn, calls):
        start = clock()
        for _ in range(calls):
            fn()
        return (clock() - start) / calls

    rng = np.random.default_rng(0)
    print(
        f"threads {args.threads}, {'thread CPU' if args.cpu_time else 'wall'} time, lower quartiles"
    )
    for heads, seq, dh in ((12, 128, 32), (4, 128, 64)):
        for name, (model, feed) in cases(heads, seq, dh, rng).items():
            ort = m.Ort(model, feed, args.threads)
            ours = m.Ours(model, feed, {})
            err = m._max_rel_error(ours.result(), ort.result())
            if err > 1e-4:
                raise SystemExit(f"{name}: outputs differ from ORT's (max rel error {err:.1e})")
            for engine in (ours, ort):
                engine.run()
            calls = max(1, int(0.01 / max(timed(ours.run, 3), 1e-7)))
            a, b = [], []
            for _ in range(args.rounds):
                a.append(timed(ours.run, calls))
                b.append(timed(ort.run, calls))
            qa, qb = sorted(a)[len(a) // 4], sorted(b)[len(b) // 4]
            print(
                f"{name:15s} h{heads} s{seq} d{dh}: ours {qa * 1e6:8.1f} us  ORT {qb * 1e6:8.1f} us"
                f"  ours/ORT {qa / qb:.2f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
