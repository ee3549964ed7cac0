"""InferenceSession under concurrent use: logic races of the Python layer that ThreadSanitizer
does not see (docs/reliability.md "Left for later sessions"): set_providers while other threads
import and run, evictions of a small graph cache racing imports of other shapes. Every result
is compared with numpy; a watchdog fails the test instead of letting it hang."""

import threading
import time

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
import webnn.onnx
from onnx import TensorProto, helper, numpy_helper
from webnn.onnx import InferenceSession

RNG = np.random.default_rng(11)
W = RNG.standard_normal((5, 4)).astype(np.float32)
B = RNG.standard_normal((4,)).astype(np.float32)
WATCHDOG_SECONDS = 120


def _dense_model():
    """y = tanh(x @ W + b) over a free batch dimension: one compiled graph per batch size."""
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["xw"]),
        helper.make_node("Add", ["xw", "b"], ["pre"]),
        helper.make_node("Tanh", ["pre"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "dense",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])],
        [numpy_helper.from_array(W, "w"), numpy_helper.from_array(B, "b")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model.SerializeToString()


def _expected(x):
    return np.tanh(x.astype(np.float64) @ W + B)


def _check(got, x):
    np.testing.assert_allclose(got, _expected(x), rtol=1e-5, atol=1e-6)


def test_set_providers_during_an_import_keeps_graph_and_context_together(monkeypatch):
    """A set_providers that lands while a run imports its shape: the run's graph must be
    dispatched on the context it was built on (it was dispatched on the new one: 'graph
    belongs to another context')."""
    sess = InferenceSession(_dense_model(), providers=["CPUExecutionProvider"])
    real_import = webnn.onnx.import_model
    switched = []

    def import_then_switch(builder, *args, **kwargs):
        imported = real_import(builder, *args, **kwargs)
        if not switched:  # what another thread's set_providers does at this moment
            switched.append(True)
            sess.set_providers(["reference"])
        return imported

    monkeypatch.setattr(webnn.onnx, "import_model", import_then_switch)
    x = RNG.standard_normal((3, 5)).astype(np.float32)
    _check(sess.run(None, {"x": x})[0], x)
    assert sess.get_providers() == ["reference"]
    _check(sess.run(None, {"x": x})[0], x)  # imported again, on the reference context
    assert sess.compiled_graphs(), "the second run's graph is cached"


def _run_threads(workers, seconds):
    """Runs each worker(stop_event) in a thread for `seconds`; re-raises the first error; fails
    if a thread is still running WATCHDOG_SECONDS later."""
    stop = threading.Event()
    errors = []

    def wrap(fn):
        def body():
            try:
                fn(stop)
            except BaseException as e:  # noqa: BLE001 - reported by the main thread
                errors.append(e)
                stop.set()

        return body

    threads = [threading.Thread(target=wrap(w), daemon=True) for w in workers]
    for t in threads:
        t.start()
    stop.wait(seconds)
    stop.set()
    deadline = time.monotonic() + WATCHDOG_SECONDS
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))
    assert not any(t.is_alive() for t in threads), "a session thread hung"
    if errors:
        raise errors[0]


def _runner(sess, seed, counts):
    def work(stop):
        rng = np.random.default_rng(seed)
        while not stop.is_set():
            x = rng.standard_normal((int(rng.integers(1, 7)), 5)).astype(np.float32)
            _check(sess.run(["y"], {"x": x})[0], x)
            counts[seed] = counts.get(seed, 0) + 1

    return work


def test_runs_of_many_shapes_race_evictions_of_a_small_cache():
    """Six threads run six batch sizes through a cache of two graphs: every run evicts or is
    evicted while others import; results stay right and nothing hangs."""
    sess = InferenceSession(_dense_model(), max_cached_graphs=2)
    counts = {}
    _run_threads([_runner(sess, seed, counts) for seed in range(6)], seconds=3)
    assert len(counts) == 6 and min(counts.values()) > 0, counts
    assert len(sess.compiled_graphs()) <= 2


def test_set_providers_back_and_forth_while_threads_run():
    """Four threads run while a fifth switches the session between the cpu and reference
    providers: every run gives the model's result on one backend or the other."""
    sess = InferenceSession(_dense_model(), max_cached_graphs=3)
    counts = {}
    switches = []

    def switcher(stop):
        providers = (["reference"], ["CPUExecutionProvider"])
        while not stop.is_set():
            sess.set_providers(providers[len(switches) % 2])
            switches.append(1)
            time.sleep(0.01)

    workers = [_runner(sess, seed, counts) for seed in range(4)] + [switcher]
    _run_threads(workers, seconds=3)
    assert len(switches) > 10 and min(counts.values()) > 0, (len(switches), counts)
    x = RNG.standard_normal((2, 5)).astype(np.float32)
    _check(sess.run(None, {"x": x})[0], x)
