"""Hub downloads of one model from several threads at once (one cache directory): every call
succeeds, the cached set is one download's files (the graph loads with its weights), and no
staging directory or journal is left behind."""

import threading
from pathlib import Path

import numpy as np
import pytest
import webnn
from test_hub import FILES, MODEL, clean_env, server  # noqa: F401 - fixtures (clean_env autouse)

THREADS = 8
WATCHDOG_SECONDS = 120


def _all_at_once(call):
    """Runs call(i) in THREADS threads released together; returns the errors raised."""
    start = threading.Barrier(THREADS)
    errors = []

    def body(i):
        start.wait()
        try:
            call(i)
        except BaseException as e:  # noqa: BLE001 - the test reports them
            errors.append(e)

    threads = [threading.Thread(target=body, args=(i,), daemon=True) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WATCHDOG_SECONDS)
    assert not any(t.is_alive() for t in threads), "a download hung"
    return errors


def _cached_files(cache):
    return sorted(str(p.relative_to(cache)) for p in Path(cache).rglob("*") if p.is_file())


def _result(graph_path):
    ctx = webnn.ML().create_context(accelerated=False)
    graph = ctx.load_graph(graph_path)
    x = ctx.create_tensor([2, 3], "float32", writable=True)
    y = ctx.create_tensor([2, 2], "float32", readable=True)
    ctx.write_tensor(x, np.ones((2, 3), np.float32))
    ctx.dispatch(graph, {"x": x}, {"y": y})
    return ctx.read_tensor(y)


def _expected(files):
    w = np.frombuffer(files["model.weights"][8:], np.float32).reshape(3, 2)
    return np.ones((2, 3), np.float32) @ w


@pytest.mark.parametrize("force", [False, True])
def test_threads_download_one_model_at_once(server, tmp_path, force):  # noqa: F811 - the fixture
    server.serve_model()
    cache = tmp_path / "cache"
    errors = _all_at_once(
        lambda i: webnn.Hub(cache_dir=cache, quiet=True).download_model(MODEL, force=force)
    )
    assert not errors, errors
    model_dir = f"{MODEL.replace('/', '--')}"
    assert _cached_files(cache) == [
        f"{model_dir}/{name}" for name in ("manifest.json", "model.webnn", "model.weights")
    ]
    np.testing.assert_array_equal(_result(str(cache / model_dir / "model.webnn")), _expected(FILES))
