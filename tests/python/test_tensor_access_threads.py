"""A tensor bound to a dispatch is not touched by anything else until that dispatch ends
(issue 8, item 4; found by review for the ThreadSanitizer run of tools/sanitize.sh).

MLContext.dispatch runs without the GIL and its kernels read and write the bound tensors'
storage in place. Before Tensor::access (include/webnn/context.h), another Python thread could
read a half-written result, write an input under the kernels, or free the storage they were
writing (destroy, resize_tensor): a use-after-free. And the dispatch held raw pointers to the
tensors of its mappings only, so a tensor the mappings stopped referencing while it ran (or that
a Mapping's items() made) was freed under it.

The crashes run in a child process: on the code before the fix they are segmentation faults
(a freed tensor of 64 MiB is unmapped at once by glibc, so the kernels' writes fault), which must
fail this test, not end the suite.
"""

import subprocess
import sys
import textwrap
import threading

import numpy as np
import webnn

N = 1 << 20  # 4 MiB of float32: a dispatch takes a millisecond or more, long enough to overlap


def _context():
    return webnn.ML().create_context(accelerated=False, backend="cpu")


def _relu_graph(ctx, n):
    b = ctx.create_graph_builder()
    return b.build({"y": b.relu(b.input("x", [n], "float32"))})


def test_reads_during_dispatches_see_whole_results():
    ctx = _context()
    graph = _relu_graph(ctx, N)
    inputs = []
    for value in (1.0, 2.0):
        t = ctx.create_tensor([N], "float32", writable=True)
        ctx.write_tensor(t, np.full(N, value, np.float32))
        inputs.append(t)
    out = ctx.create_tensor([N], "float32", readable=True)
    done = threading.Event()
    torn = []

    def dispatcher():
        try:
            for i in range(40):
                ctx.dispatch(graph, {"x": inputs[i % 2]}, {"y": out})
        finally:
            done.set()

    thread = threading.Thread(target=dispatcher)
    thread.start()
    reads = 0
    while not done.is_set() or reads == 0:
        got = ctx.read_tensor(out)
        reads += 1
        # Zeros before the first dispatch, then all ones or all twos: never a mix of two
        # dispatches' results or of a result and what was there before.
        values = np.unique(got)
        if len(values) != 1 or values[0] not in (0.0, 1.0, 2.0):
            torn.append(values[:4].tolist())
    thread.join(timeout=120)
    assert not thread.is_alive(), "the dispatches did not finish: a hang"
    assert torn == [], f"{len(torn)} of {reads} reads saw a half-written result: {torn[:3]}"


def test_writes_during_dispatches_never_reach_a_running_kernel():
    ctx = _context()
    graph = _relu_graph(ctx, N)
    x = ctx.create_tensor([N], "float32", writable=True)
    ctx.write_tensor(x, np.full(N, 1.0, np.float32))
    outs = [ctx.create_tensor([N], "float32", readable=True) for _ in range(30)]
    done = threading.Event()

    def writer():
        k = 0
        while not done.is_set():
            k += 1
            ctx.write_tensor(x, np.full(N, float(1 + k % 2), np.float32))

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        for out in outs:
            ctx.dispatch(graph, {"x": x}, {"y": out})
    finally:
        done.set()
        thread.join(timeout=120)
    assert not thread.is_alive()
    for i, out in enumerate(outs):
        values = np.unique(ctx.read_tensor(out))
        # Each dispatch saw one whole write of the input (ones or twos), not part of another.
        assert len(values) == 1 and values[0] in (1.0, 2.0), (i, values[:4])


_CHILD = textwrap.dedent(
    """
    import collections.abc, threading, time
    import numpy as np
    import webnn

    N = 1 << 24  # 64 MiB: above glibc's largest mmap threshold, unmapped as soon as freed
    ctx = webnn.ML().create_context(accelerated=False, backend="cpu")
    b = ctx.create_graph_builder()
    graph = b.build({"y": b.relu(b.input("x", [N], "float32"))})
    x = ctx.create_tensor([N], "float32", writable=True)
    ctx.write_tensor(x, np.ones(N, np.float32))

    class Fresh(collections.abc.Mapping):
        # items() makes the only reference to the output tensor it yields.
        def __getitem__(self, key):
            raise KeyError(key)
        def __iter__(self):
            return iter(())
        def __len__(self):
            return 1
        def items(self):
            return [("y", ctx.create_tensor([N], "float32", readable=True))]

    for _ in range(3):
        ctx.dispatch(graph, {"x": x}, Fresh())

    def churn(action):
        out = ctx.create_tensor([N], "float32", readable=True)
        started = threading.Event()
        errors = []

        def dispatcher():
            for _ in range(6):
                started.set()
                try:
                    ctx.dispatch(graph, {"x": x}, {"y": out})
                except (RuntimeError, ValueError) as e:  # after the destroy: refused
                    errors.append(str(e))
                    return

        t = threading.Thread(target=dispatcher)
        t.start()
        started.wait()
        time.sleep(0.002)
        action(out)
        t.join()
        return out, errors

    out, errors = churn(lambda t: t.destroy())
    assert all("destroyed" in e for e in errors), errors
    out, errors = churn(lambda t: ctx.resize_tensor(t, [N + 4096]))
    assert all("shape" in e for e in errors), errors
    assert out.shape == [N + 4096]
    print("ok")
    """
)


def test_freed_or_resized_tensors_never_reach_a_running_kernel():
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD], capture_output=True, text=True, timeout=300, check=False
    )
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", (
        f"exit {proc.returncode}: {proc.stdout[-1000:]} {proc.stderr[-2000:]}"
    )
