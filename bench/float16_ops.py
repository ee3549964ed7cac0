"""float16 element-wise and data-movement ops: webnn cpu float16 vs cpu float32 vs the reference
backend's float16 (what float16 nodes ran on before float16_elementwise.cc), interleaved.

    WEBNN_NUM_THREADS=1 python bench/float16_ops.py [--size 1048576] [--rounds 9]

Prints ns per element (median of the rounds) and the ratios cpu f16 / cpu f32 and
reference f16 / cpu f16.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import webnn

OPS = {
    "add": lambda b, x, c, n: b.add(x, c),
    "mul (bias row)": lambda b, x, c, n: b.mul(
        b.reshape(x, [n // 1024, 1024]), b.slice(c, [0], [1024])
    ),
    "relu": lambda b, x, c, n: b.relu(x),
    "clamp": lambda b, x, c, n: b.clamp(x, min_value=0.0, max_value=6.0),
    "hard_swish": lambda b, x, c, n: b.hard_swish(x),
    "linear": lambda b, x, c, n: b.linear(x, 0.5, 0.25),
    "sigmoid": lambda b, x, c, n: b.sigmoid(x),
    "tanh": lambda b, x, c, n: b.tanh(x),
    "gelu": lambda b, x, c, n: b.gelu(x),
    "sqrt": lambda b, x, c, n: b.sqrt(x),
    "cast to float32": lambda b, x, c, n: b.cast(x, "float32"),
    "transpose": lambda b, x, c, n: b.transpose(
        b.reshape(x, [1024, n // 1024]), permutation=[1, 0]
    ),
}


class Case:
    def __init__(self, backend, dtype, make, n):
        self.ctx = webnn.ML().create_context(accelerated=False, backend=backend)
        b = self.ctx.create_graph_builder()
        x, c = b.input("x", [n], dtype), b.input("c", [n], dtype)
        graph_out = make(b, x, c, n)
        graph = b.build({"y": graph_out})
        rng = np.random.default_rng(0)
        self.inputs = {}
        for name in graph.input_descriptors:
            t = self.ctx.create_tensor([n], dtype, writable=True)
            self.ctx.write_tensor(t, rng.uniform(-4, 4, n).astype(dtype))
            self.inputs[name] = t
        d = graph.output_descriptors["y"]
        self.out = {"y": self.ctx.create_tensor(d["shape"], d["data_type"], readable=True)}
        self.graph, self.n = graph, n

    def time(self, calls=8):
        start = time.perf_counter()
        for _ in range(calls):
            self.ctx.dispatch(self.graph, self.inputs, self.out)
        return (time.perf_counter() - start) * 1e9 / (self.n * calls)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=1 << 20, help="a multiple of 1024")
    ap.add_argument("--rounds", type=int, default=9)
    args = ap.parse_args()
    print("| op | cpu f16 (ns/elem) | cpu f32 | reference f16 | f16/f32 | reference/cpu f16 |")
    print("|---|---|---|---|---|---|")
    for name, make in OPS.items():
        cases = [
            Case("cpu", "float16", make, args.size),
            Case("cpu", "float32", make, args.size),
            Case("reference", "float16", make, args.size),
        ]
        for c in cases:
            c.time()  # warm up
        samples = [[] for _ in cases]
        for _ in range(args.rounds):
            for c, s in zip(cases, samples):
                s.append(c.time())
        f16, f32, ref = (statistics.median(s) for s in samples)
        print(f"| {name} | {f16:.2f} | {f32:.2f} | {ref:.1f} | {f16 / f32:.2f} | {ref / f16:.0f} |")


if __name__ == "__main__":
    main()
