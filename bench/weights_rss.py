"""Peak RSS of loading and dispatching a graph with large weights.

Saves `y = matmul(x, w)` with a float32 `w` of --size-mib MiB (default 1 GiB), then, in a
fresh process, loads it with MLContext.load_graph, dispatches it once and prints the peak
resident set size (resource.getrusage). The weights are memory-mapped from the SafeTensors
sidecar and used in place, so the peak stays near baseline + one copy of the weights; a
reader that copied them (into the graph, or again into the compiled plan) would show two or
three copies.

Usage: python bench/weights_rss.py [--size-mib 1024] [--dir DIR]   (Linux)
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np


def rss_mib():
    """Current resident set size in MiB (Linux /proc)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def peak_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def save(path, size_mib):
    import webnn

    k = 4096
    n = size_mib * 2**20 // (4 * k)
    ctx = webnn.ML().create_context(accelerated=False)
    b = ctx.create_graph_builder()
    x = b.input("x", [1, k], "float32")
    w = b.constant(np.full((k, n), 1 / k, np.float32))
    b.save({"y": b.matmul(x, w)}, path)
    return k, n


def load_and_dispatch(path, k, n):
    import webnn

    ctx = webnn.ML().create_context(accelerated=False, backend="cpu")
    base = rss_mib()
    start = time.perf_counter()
    g = ctx.load_graph(path)
    loaded = rss_mib()
    xt = ctx.create_tensor([1, k], "float32", writable=True)
    yt = ctx.create_tensor([1, n], "float32", readable=True)
    ctx.write_tensor(xt, np.ones((1, k), np.float32))
    ctx.dispatch(g, {"x": xt}, {"y": yt})
    y = ctx.read_tensor(yt)
    seconds = time.perf_counter() - start
    assert np.allclose(y, 1.0, rtol=1e-4), y[0, :4]
    return {
        "baseline_rss_mib": round(base, 1),
        "rss_after_load_mib": round(loaded, 1),
        "rss_after_dispatch_mib": round(rss_mib(), 1),
        "peak_rss_mib": round(peak_mib(), 1),
        "seconds": round(seconds, 2),
    }


def child(*args):
    out = subprocess.run(
        [sys.executable, __file__, *map(str, args)], check=True, capture_output=True, text=True
    ).stdout
    return json.loads(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mib", type=int, default=1024)
    parser.add_argument("--dir", default=None)
    parser.add_argument("--save", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--load", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.save:
        print(json.dumps(save(args.save[0], int(args.save[1]))))
        return
    if args.load:
        path, k, n = args.load
        print(json.dumps(load_and_dispatch(path, int(k), int(n))))
        return
    # Saving and loading run in fresh processes spawned by this small one: Linux carries the
    # peak RSS of the spawning address space across exec, which would hide the measurement.
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        path = os.path.join(tmp, "big.webnn")
        k, n = child("--save", path, args.size_mib)
        weights = os.path.getsize(os.path.join(tmp, "big.safetensors")) / 2**20
        result = child("--load", path, k, n)
    extra = result["peak_rss_mib"] - result["baseline_rss_mib"]
    print(f"weights file:           {weights:9.1f} MiB (float32 [{k}, {n}])")
    print(f"baseline RSS:           {result['baseline_rss_mib']:9.1f} MiB (python + webnn)")
    print(f"RSS after load_graph:   {result['rss_after_load_mib']:9.1f} MiB (mapped, untouched)")
    print(f"RSS after dispatch:     {result['rss_after_dispatch_mib']:9.1f} MiB")
    print(f"peak RSS:               {result['peak_rss_mib']:9.1f} MiB")
    print(f"peak - baseline:        {extra:9.1f} MiB = {extra / weights:.2f} x the weights")
    print(f"load + dispatch time:   {result['seconds']:9.2f} s")


if __name__ == "__main__":
    main()
