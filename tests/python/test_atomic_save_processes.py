"""Saves and loads of one graph path from several processes at once (issue 8, item 5).

builder.save writes the graph file and its weights sidecar and renames each into place; the
graph records its sidecar's size and digest, so a graph never runs with another save's
weights. Without more, a load that reads the graph of one save and then opens the sidecar of
the next (or a save whose two renames interleave with another process's) is refused although
a complete pair is on disk all the time. A lock on the directory of the pair (flock,
exclusive around a save's two renames, shared around a load's reads of the pair:
src/format/pair_lock.h) makes every load see one pair.

Here writers save different graphs (same names, types and shapes; only the weights differ)
to one path in a loop while readers load it in a loop: every load must succeed and compute
one of the saved functions, checked numerically. Time-bounded: the children stop after a
few seconds and are killed by a watchdog if they do not.
"""

import json
import select
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
import webnn

N = 1 << 15  # 128 KB of weights per save
WRITERS = 3
READERS = 3
SECONDS = 3.0

CHILD = textwrap.dedent(
    f"""
    import json, sys, time
    import numpy as np
    import webnn

    path, role, index, seconds = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
    ctx = webnn.ML().create_context(accelerated=False, backend="cpu")
    # Start together: the run begins when the parent says so, after every child is ready.
    print("ready", flush=True)
    sys.stdin.readline()
    deadline = time.time() + seconds

    def builder(k):
        b = ctx.create_graph_builder()
        x = b.input("x", [{N}], "float32")
        w = b.constant(np.full({N}, float(k + 1), np.float32))
        return b, {{"y": b.add(x, w)}}

    counts = {{"saves": 0, "loads": 0, "refused": 0, "wrong": 0, "errors": []}}
    if role == "init":
        b, outs = builder(index)
        b.save(outs, path)
    elif role == "save":
        b, outs = builder(index)
        while time.time() < deadline:
            b.save(outs, path)
            counts["saves"] += 1
    else:
        x = np.arange({N}, dtype=np.float32)
        while time.time() < deadline:
            try:
                g = ctx.load_graph(path)
            except OSError as exc:
                if "is not the weights file saved with" in str(exc):
                    counts["refused"] += 1
                else:
                    counts["errors"].append(str(exc)[:300])
                continue
            y = ctx.compute(g, {{"x": x}})["y"]
            k = y[0]
            if not (k in range(1, {WRITERS} + 1) and np.array_equal(y, x + k)):
                counts["wrong"] += 1
            counts["loads"] += 1
    print(json.dumps(counts), flush=True)
    """
)


def _run_children(path, roles, seconds):
    children = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, str(path), role, str(i), str(seconds)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for role, i in roles
    ]
    results = []
    try:
        # Watchdog: every wait is bounded (start-up, then the run plus a margin); a child
        # that hangs (a deadlock on the lock) fails the test instead of hanging it.
        limit = time.monotonic() + 120
        for child in children:
            ready = _readline_before(child, limit)
            assert ready == "ready", ready + child.stderr.read()
        for child in children:
            child.stdin.write("go\n")
            child.stdin.flush()
        limit = time.monotonic() + seconds + 60
        for child in children:
            out, err = child.communicate(timeout=max(1.0, limit - time.monotonic()))
            assert child.returncode == 0, err
            results.append(json.loads(out.strip().splitlines()[-1]))
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
                child.wait()
    return results


def _readline_before(child, limit):
    """The child's next stdout line, or a failure once `limit` (time.monotonic) passes."""
    ready, _, _ = select.select([child.stdout], [], [], max(0.0, limit - time.monotonic()))
    assert ready, "a child did not start in time"
    return child.stdout.readline().strip()


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX rename and flock semantics")
def test_concurrent_saves_and_loads_of_one_path_always_load_a_complete_pair(tmp_path):
    path = tmp_path / "g.webnn"
    _run_children(path, [("init", 0)], 0)
    roles = [("save", i) for i in range(WRITERS)] + [("load", i) for i in range(READERS)]
    results = _run_children(path, roles, SECONDS)
    saves = sum(r["saves"] for r in results)
    loads = sum(r["loads"] for r in results)
    refused = sum(r["refused"] for r in results)
    wrong = sum(r["wrong"] for r in results)
    errors = [e for r in results for e in r["errors"]]
    print(f"saves {saves}, loads {loads}, refused {refused}, wrong {wrong}, errors {len(errors)}")
    assert saves >= WRITERS and loads >= READERS, (saves, loads)
    assert errors == [], errors[:3]
    assert wrong == 0, "a load computed none of the saved functions"
    assert refused == 0, f"{refused} of {loads + refused} loads refused a complete pair"
    # What is left: the pair, nothing else (temporaries are all renamed, no lock file).
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["g.safetensors", "g.webnn"], names
    ctx = webnn.ML().create_context(accelerated=False, backend="cpu")
    x = np.arange(N, dtype=np.float32)
    y = ctx.compute(ctx.load_graph(path), {"x": x})["y"]
    assert y[0] in range(1, WRITERS + 1) and np.array_equal(y, x + y[0])
