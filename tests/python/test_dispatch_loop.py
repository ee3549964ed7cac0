"""A whole model dispatched in a tight loop at 2 pool threads must neither hang nor change results.

Before the thread-pool claim protocol was fixed, a MobileNet-style CNN dispatched 20,000 times at
WEBNN_NUM_THREADS=2 hung in most runs and crashed in some. The loop runs in a child process with
a time limit, so a hang fails the test instead of stalling the suite.
"""

import os
import subprocess
import sys
import textwrap

import pytest

CHILD = textwrap.dedent(
    """
    import sys
    import numpy as np
    import webnn

    rng = np.random.default_rng(7)
    ctx = webnn.ML().create_context(accelerated=False, backend="cpu")
    b = ctx.create_graph_builder()

    def w(*shape):
        return b.constant((rng.standard_normal(shape) * 0.2).astype(np.float32))

    # A small MobileNet-style network (NCHW): many short kernels, each a parallel region.
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

    xt = ctx.create_tensor([1, 3, 24, 48], "float32", writable=True)
    yt = ctx.create_tensor([1, 10], "float32", readable=True)
    ctx.write_tensor(xt, rng.standard_normal((1, 3, 24, 48)).astype(np.float32))
    ctx.dispatch(graph, {"x": xt}, {"y": yt})
    first = ctx.read_tensor(yt)
    for i in range(int(sys.argv[1])):
        ctx.dispatch(graph, {"x": xt}, {"y": yt})
        if i % 500 == 0 and not np.array_equal(ctx.read_tensor(yt), first):
            print("result changed at dispatch", i)
            sys.exit(1)
    assert np.array_equal(ctx.read_tensor(yt), first)
    print("ok")
    """
)


@pytest.mark.parametrize("threads", ["2", "4"])
def test_model_dispatch_loop_neither_hangs_nor_drifts(threads):
    env = dict(os.environ, WEBNN_NUM_THREADS=threads)
    try:
        proc = subprocess.run(
            [sys.executable, "-c", CHILD, "5000"],
            env=env,
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"5000 dispatches at {threads} threads did not finish in 240 s (hang)")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert proc.stdout.strip().endswith("ok")
