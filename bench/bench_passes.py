"""Times a MobileNet-style CNN with and without the compiler passes, in the same process.

The graph (built here, random weights) is the PaddleOCR cls / MobileNetV3 pattern: conv +
batch_norm + hard_swish/relu, depthwise 3x3 convs, 1x1 projections and residual adds, in NCHW
like the ONNX models. Two graphs are compiled from the same description: one with every pass
and the memory plan, one with WEBNN_PASSES=none WEBNN_MEMORY_PLAN=none (the engine as it was
before the compiler layer), and one with every pass but layout assignment. Outputs are checked to agree, runs are interleaved, medians
reported with the ratio optimised / unoptimised, plus node counts and the arena size.

    python bench/bench_passes.py --threads 1 2 --rounds 50 [--size 48x192]

Threads: WEBNN_NUM_THREADS is read when a context is created; each thread count runs in a
subprocess-free loop by creating its context after setting the variable.
"""

import argparse
import os
import statistics
import time

import numpy as np


def build(b, x, rng, channels=3):
    """A MobileNetV3-small-like stack: stem, 6 inverted-residual blocks, head conv."""

    def const(*shape, lo=-0.3, hi=0.3):
        return b.constant(rng.uniform(lo, hi, shape).astype(np.float32))

    def conv_bn(y, cin, cout, k=1, stride=1, groups=1, act="hard_swish"):
        y = b.conv2d(
            y,
            const(cout, cin // groups, k, k),
            strides=[stride, stride],
            padding=[k // 2] * 4,
            groups=groups,
        )
        y = b.batch_normalization(
            y,
            const(cout),
            const(cout, lo=0.5, hi=1.5),
            scale=const(cout, lo=0.5, hi=1.5),
            bias=const(cout),
            epsilon=1e-5,
        )
        if act == "hard_swish":
            y = b.hard_swish(y)
        elif act == "relu":
            y = b.relu(y)
        return y

    y = conv_bn(x, channels, 16, k=3, stride=2)
    c = 16
    # (expand, out, stride, act)
    for expand, out, stride, act in [
        (16, 16, 1, "relu"),
        (72, 24, 2, "relu"),
        (88, 24, 1, "relu"),
        (96, 40, 2, "hard_swish"),
        (240, 40, 1, "hard_swish"),
        (120, 48, 1, "hard_swish"),
    ]:
        h = conv_bn(y, c, expand, act=act)
        h = conv_bn(h, expand, expand, k=3, stride=stride, groups=expand, act=act)
        h = conv_bn(h, expand, out, act=None)
        y = b.add(h, y) if stride == 1 and out == c else h
        c = out
    y = conv_bn(y, c, 288)
    return b.global_average_pool(y) if hasattr(b, "global_average_pool") else y


def compile_graph(ctx, shape, passes, memory_plan):
    import webnn  # noqa: F401

    os.environ["WEBNN_PASSES"] = passes
    os.environ["WEBNN_MEMORY_PLAN"] = memory_plan
    try:
        b = ctx.create_graph_builder()
        x = b.input("x", shape, "float32")
        graph = b.build({"y": build(b, x, np.random.default_rng(0))})
    finally:
        os.environ.pop("WEBNN_PASSES")
        os.environ.pop("WEBNN_MEMORY_PLAN")
    return graph


def bench(threads, rounds, shape):
    os.environ["WEBNN_NUM_THREADS"] = str(threads)
    import webnn

    ctx = webnn.ML().create_context(accelerated=False, backend="cpu")
    opt = compile_graph(ctx, shape, "all", "all")
    base = compile_graph(ctx, shape, "none", "none")
    nolayout = compile_graph(
        ctx, shape, "constant_folding,batch_norm_folding,epilogue_fusion", "all"
    )
    x = np.random.default_rng(1).uniform(-1, 1, shape).astype(np.float32)
    out_shape = list(opt.output_descriptors["y"]["shape"])
    xt = ctx.create_tensor(shape, "float32", writable=True)
    ctx.write_tensor(xt, x)
    graphs = {"opt": opt, "base": base, "nolayout": nolayout}
    yt = {g: ctx.create_tensor(out_shape, "float32", readable=True) for g in graphs}
    for name, g in graphs.items():
        ctx.dispatch(g, {"x": xt}, {"y": yt[name]})
    a, r = ctx.read_tensor(yt["opt"]), ctx.read_tensor(yt["base"])
    np.testing.assert_allclose(a, r, rtol=1e-3, atol=1e-3 * (1 + np.abs(r).max()))
    times = {name: [] for name in graphs}
    for _ in range(rounds):
        for name, g in graphs.items():
            t0 = time.perf_counter()
            ctx.dispatch(g, {"x": xt}, {"y": yt[name]})
            times[name].append(time.perf_counter() - t0)
    med = {k: statistics.median(v) * 1e3 for k, v in times.items()}
    s, sb = opt.compile_stats, base.compile_stats
    print(
        f"threads={threads} input={shape}: optimised {med['opt']:.3f} ms, "
        f"unoptimised {med['base']:.3f} ms, ratio {med['opt'] / med['base']:.2f} "
        f"(without layout assignment {med['nolayout']:.3f} ms); "
        f"nodes {s['nodes_before']} -> {s['nodes_after']} {s['passes']}; "
        f"arena {s['arena_bytes'] / 1e6:.2f} MB vs {sb['unshared_bytes'] / 1e6:.2f} MB "
        f"of separate buffers"
    )


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--threads", type=int, nargs="+", default=[1])
    p.add_argument("--rounds", type=int, default=30)
    p.add_argument("--size", default="48x192", help="input HxW")
    args = p.parse_args()
    h, w = (int(v) for v in args.size.split("x"))
    for t in args.threads:
        bench(t, args.rounds, [1, 3, h, w])


if __name__ == "__main__":
    main()
