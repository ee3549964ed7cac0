"""builder.save is atomic: a saving process killed (SIGKILL) at a random point leaves, at each
path, the old file or none, never a partial one, and never a graph that runs with the weights of
another save (the graph records its sidecar's size and SHA-256: docs/text_format.md).
"""

import os
import random
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
import webnn

N = 1 << 16  # 256 KB of weights: long enough writes that kills land inside them

# Saves two graphs in turn to the same path: A computes x + 1, B computes x * 2, with weight
# tensors of the same name, type and shape, so only the pairing check can tell them apart.
CHILD = textwrap.dedent(
    f"""
    import sys
    import numpy as np
    import webnn

    ctx = webnn.ML().create_context(accelerated=False, backend="cpu")
    saves = []
    for kind in ("add", "mul"):
        b = ctx.create_graph_builder()
        x = b.input("x", [{N}], "float32")
        w = b.constant(np.full({N}, 1.0 if kind == "add" else 2.0, np.float32))
        saves.append((b, {{"y": getattr(b, kind)(x, w)}}))
    print("ready", flush=True)
    k = 0
    while True:
        b, outs = saves[k % 2]
        b.save(outs, sys.argv[1])
        k += 1
    """
)


def check_model_dir(ctx, d):
    graph, sidecar = d / "g.webnn", d / "g.safetensors"
    stray = sorted(p.name for p in d.iterdir() if p.name not in ("g.webnn", "g.safetensors"))
    # A killed save can leave its hidden temporary files; nothing else appears.
    assert all(name.startswith(".g.") and ".tmp" in name for name in stray), stray
    if not graph.exists():
        return "none"
    assert sidecar.exists(), "a graph file without its sidecar"
    x = np.arange(N, dtype=np.float32)
    try:
        g = ctx.load_graph(graph)
    except OSError as exc:
        # New sidecar next to the old graph (or the reverse): refused, and said why.
        assert "is not the weights file saved with" in str(exc), str(exc)
        return "refused"
    y = ctx.compute(g, {"x": x})["y"]
    if np.array_equal(y, x + 1):
        return "add"
    assert np.array_equal(y, x * 2), "the graph ran with weights of another save"
    return "mul"


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_save_killed_at_random_points_leaves_old_or_new_pair(tmp_path):
    ctx = webnn.ML().create_context(accelerated=False, backend="cpu")
    rng = random.Random(20)
    outcomes = []
    for _ in range(20):
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(tmp_path / "g.webnn")],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert child.stdout.readline().strip() == "ready", child.stderr.read()
            time.sleep(rng.uniform(0.0, 0.15))
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait(timeout=30)
            child.stdout.close()
            child.stderr.close()
        assert child.returncode == -signal.SIGKILL
        outcomes.append(check_model_dir(ctx, tmp_path))
    # The loop saved and was killed in the middle many times; both graphs were seen whole.
    assert {"add", "mul"} <= set(outcomes), outcomes


def test_pairing_survives_renames_and_catches_swapped_sidecars(tmp_path):
    ctx = webnn.ML().create_context(accelerated=False, backend="cpu")
    paths = {}
    for kind, value in (("add", 1.0), ("mul", 2.0)):
        b = ctx.create_graph_builder()
        x = b.input("x", [4], "float32")
        w = b.constant(np.full(4, value, np.float32))
        b.save({"y": getattr(b, kind)(x, w)}, tmp_path / f"{kind}.webnn")
        paths[kind] = tmp_path / f"{kind}.webnn"
    first_line = paths["add"].read_text().splitlines()[0]
    assert first_line.startswith("# webnn-weights: bytes=")
    # Another save's sidecar with identical layout: refused with the reason.
    os.replace(tmp_path / "mul.safetensors", tmp_path / "add.safetensors")
    with pytest.raises(OSError, match="is not the weights file saved with"):
        ctx.load_graph(paths["add"])
    # A pair renamed together keeps working.
    os.replace(paths["mul"], tmp_path / "renamed.webnn")
    os.replace(tmp_path / "add.safetensors", tmp_path / "renamed.safetensors")
    g = ctx.load_graph(tmp_path / "renamed.webnn")
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(ctx.compute(g, {"x": x})["y"], x * 2)


HUB_CHILD = textwrap.dedent(
    """
    import sys
    import webnn

    hub = webnn.Hub(cache_dir=sys.argv[1], quiet=True)
    print("ready", flush=True)
    while True:
        hub.download_model(sys.argv[2], force=True)
    """
)


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_hub_download_killed_at_random_points_leaves_whole_files(tmp_path):
    from test_hub import FILES, MODEL, FakeHub

    # A weights file large enough that kills land inside its download.
    files = dict(FILES)
    files["model.weights"] = FILES["model.weights"] + bytes(range(256)) * (1 << 13)
    srv = FakeHub()
    srv.serve_model(files=files)
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env["HF_ENDPOINT"] = srv.url
    rng = random.Random(21)
    model_dir = tmp_path / "cache" / MODEL.replace("/", "--")
    try:
        for _ in range(10):
            child = subprocess.Popen(
                [sys.executable, "-c", HUB_CHILD, str(tmp_path / "cache"), MODEL],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
            )
            try:
                assert child.stdout.readline().strip() == "ready", child.stderr.read()
                time.sleep(rng.uniform(0.0, 0.2))
            finally:
                child.send_signal(signal.SIGKILL)
                child.wait(timeout=30)
                child.stdout.close()
                child.stderr.close()
            if not model_dir.exists():
                continue
            for p in model_dir.iterdir():
                if p.name.startswith("."):  # a killed download's staging directory or journal
                    assert p.name.startswith((".staging-", ".commit")), p.name
                    continue
                assert p.read_bytes() == files[p.name], f"{p.name} is partial"
    finally:
        srv.close()
