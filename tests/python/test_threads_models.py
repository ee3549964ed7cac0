"""Threads on real work (api.md §1, docs/reliability.md "Concurrency"): an ONNX model from a
wheel run by webnn.onnx.InferenceSession from 8 threads, with several input shapes at once
(so the session's per-shape compile cache is filled by racing threads), and graphs saved and
loaded (MLGraphBuilder.save, MLContext.load_graph) while other threads dispatch on the same
context. Every result is bit-identical to the same work done serially, and the serial
results are checked against ONNX Runtime / numpy. Part of tools/sanitize.sh tsan.
"""

import threading

import numpy as np
import pytest
import webnn

THREADS = 8
LIMIT = 600  # seconds a thread may take (TSan runs this ten times slower): a hang fails


def hammer(count, work):
    """Runs work(i) on thread i for i < count; re-raises the first error; never hangs."""
    errors = []
    start = threading.Barrier(count)

    def worker(i):
        try:
            start.wait(timeout=LIMIT)
            work(i)
        except Exception as exc:  # noqa: BLE001 - re-raised in the main thread below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=LIMIT)
        assert not t.is_alive(), "a thread hung"
    if errors:
        raise errors[0]


# ---- InferenceSession.run of a real model ---------------------------------------------------


@pytest.fixture(scope="module")
def cls_model():
    import wheel_models as wm

    case = next(c for c in wm.CASES if c.name == "ppocr_mobile_cls")
    path = case.path()
    if path is None:
        pytest.skip(f"the '{case.package}=={case.version}' wheel is not installed")
    text = wm.nchw(wm.text_image(48, 192, ("WebNN 0123",)))
    flipped = np.ascontiguousarray(text[:, :, ::-1, ::-1])
    narrow = wm.nchw(wm.text_image(48, 128, ("async",)))
    feeds = [  # four shape signatures: batch 1, 2, 3 at 48x192 and batch 1 at 48x128
        text,
        np.concatenate([text, flipped]),
        np.concatenate([flipped, text, flipped]),
        narrow,
    ]
    return path, feeds


def test_session_runs_from_eight_threads_match_serial_runs(cls_model):
    from webnn.onnx import InferenceSession

    ort = pytest.importorskip("onnxruntime")
    path, feeds = cls_model
    serial = InferenceSession(path)
    expected = [serial.run(None, {"x": f})[0] for f in feeds]
    # The serial results are right: ONNX Runtime's, within the bound of the model tests.
    # One ORT thread: its pool threads free what the caller allocated through atomics that a
    # TSan run (tools/sanitize.sh tsan) cannot see in the uninstrumented wheel, and reports.
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    ref = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    for f, e in zip(feeds, expected):
        want = ref.run(None, {"x": f})[0]
        assert e.shape == want.shape
        np.testing.assert_allclose(e, want, rtol=0, atol=1e-3 * float(np.max(np.abs(want))))
    assert len({e.tobytes() for e in expected[:3]}) == 3  # the inputs give different outputs

    session = InferenceSession(path)  # a fresh cache: the threads import each shape themselves
    rounds = 6

    def work(i):
        for r in range(rounds):
            k = (i + r) % len(feeds)  # at every moment the threads run all four shapes
            out = session.run(None, {"x": feeds[k]})[0]
            assert out.tobytes() == expected[k].tobytes(), f"thread {i} round {r}, shape {k}"

    hammer(THREADS, work)
    assert session.import_count == len(feeds)  # one import per signature, however they raced
    assert session.weights_load_count == 1


def test_sessions_sharing_a_context_from_threads_match_serial(cls_model):
    # Two sessions of one model share the per-thread-count context (and its constant store).
    from webnn.onnx import InferenceSession

    path, feeds = cls_model
    serial = InferenceSession(path)
    expected = [serial.run(None, {"x": f})[0] for f in feeds[:2]]
    sessions = [InferenceSession(path), InferenceSession(path)]
    assert sessions[0].context is sessions[1].context

    def work(i):
        for r in range(4):
            k = (i + r) % 2
            out = sessions[i % 2].run(None, {"x": feeds[k]})[0]
            assert out.tobytes() == expected[k].tobytes(), f"thread {i} round {r}"

    hammer(4, work)


# ---- save / load_graph alongside dispatches ---------------------------------------------------


def mlp(ctx, seed):
    """A conv + matmul graph whose weights (in the .weights sidecar when saved) depend on seed."""
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((8, 3, 3, 3)).astype(np.float32) * 0.3
    m = rng.standard_normal((8 * 6 * 6, 10)).astype(np.float32) * 0.1
    b = ctx.create_graph_builder()
    x = b.input("x", [1, 3, 8, 8], "float32")
    h = b.relu(b.conv2d(x, b.constant(w)))
    y = b.matmul(b.reshape(h, [1, 8 * 6 * 6]), b.constant(m))
    return b, {"y": y}, (w, m)


def numpy_mlp(x, weights):
    w, m = weights
    h = np.zeros((8, 6, 6), np.float64)
    for dy in range(3):
        for dx in range(3):
            patch = x[0, :, dy : dy + 6, dx : dx + 6].astype(np.float64)
            h += np.einsum("oc,chw->ohw", w[:, :, dy, dx], patch)
    return np.maximum(h, 0).reshape(1, -1) @ m


def dispatch_once(ctx, graph, x):
    xt = ctx.create_tensor([1, 3, 8, 8], "float32", writable=True)
    yt = ctx.create_tensor([1, 10], "float32", readable=True)
    ctx.write_tensor(xt, x)
    ctx.dispatch(graph, {"x": xt}, {"y": yt})
    return ctx.read_tensor(yt)


@pytest.mark.parametrize("backend", webnn.backends())
def test_save_and_load_graph_while_other_threads_dispatch(backend, tmp_path):
    ctx = webnn.ML().create_context(accelerated=False, backend=backend)
    x = np.random.default_rng(0).standard_normal((1, 3, 8, 8)).astype(np.float32)
    seeds = list(range(1, 13))
    # Serial expectations, on another context: each graph built, dispatched and checked.
    serial = webnn.ML().create_context(accelerated=False, backend=backend)
    expected = {}
    for s in seeds + [0]:
        b, outs, weights = mlp(serial, s)
        expected[s] = dispatch_once(serial, b.build(outs), x)
        np.testing.assert_allclose(expected[s], numpy_mlp(x, weights), rtol=1e-4, atol=1e-4)
    b, outs, _ = mlp(ctx, 0)
    running = b.build(outs)
    shared = tmp_path / "shared.webnn"
    b, outs, _ = mlp(ctx, 0)
    b.save(outs, shared)

    def dispatcher(i):
        xt = ctx.create_tensor([1, 3, 8, 8], "float32", writable=True)
        yt = ctx.create_tensor([1, 10], "float32", readable=True)
        for r in range(40):
            ctx.write_tensor(xt, x)
            ctx.dispatch(running, {"x": xt}, {"y": yt})
            assert ctx.read_tensor(yt).tobytes() == expected[0].tobytes(), f"dispatch {i}/{r}"

    def saver(i):
        for s in seeds[i::2]:  # build, save, load and run a new graph on the busy context
            b, outs, _ = mlp(ctx, s)
            path = tmp_path / f"g{s}.webnn"
            b.save(outs, path)
            got = dispatch_once(ctx, ctx.load_graph(path), x)
            assert got.tobytes() == expected[s].tobytes(), f"saved graph {s}"

    def loader(i):
        for r in range(6):  # the same file loaded again and again: its constants are shared
            got = dispatch_once(ctx, ctx.load_graph(shared), x)
            assert got.tobytes() == expected[0].tobytes(), f"loaded graph {i}/{r}"

    jobs = [dispatcher] * 4 + [saver] * 2 + [loader] * 2
    hammer(len(jobs), lambda i: jobs[i](i if jobs[i] is not saver else i - 4))


def test_saves_to_one_path_race_into_a_whole_pair_or_a_pairing_error(tmp_path):
    # Two threads save different graphs to one path at the same moment, round after round,
    # while a third loads it: a load during the saves gets one of the two saved functions
    # whole, never the pairing error (graph of one save, weights of the other: the renames
    # of a save and the reads of a load hold the pair lock, src/format/pair_lock.h); once a
    # round's saves are done the pair on disk is whole. Before, the renames of the two saves
    # could interleave (a save renames its sidecar, fsyncs, then renames its graph) and leave
    # the graph of one with the sidecar of the other, refused by every later load.
    # tests/python/test_atomic_save_processes.py races processes.
    ctx = webnn.ML().create_context(accelerated=False, backend="cpu")
    x = np.random.default_rng(0).standard_normal((1, 3, 8, 8)).astype(np.float32)
    expected = {}
    for s in (1, 2):
        b, outs, _ = mlp(ctx, s)
        expected[dispatch_once(ctx, b.build(outs), x).tobytes()] = s
    path = tmp_path / "g.webnn"
    b, outs, _ = mlp(ctx, 1)
    b.save(outs, path)
    rounds = 12
    start, done = threading.Barrier(3, timeout=LIMIT), threading.Barrier(3, timeout=LIMIT)
    stop = threading.Event()
    seen, refused, after = set(), [], []

    def saver(i):
        b, outs, _ = mlp(ctx, 1 + i)
        for _ in range(rounds):
            try:
                start.wait()
            except threading.BrokenBarrierError:
                return  # the main thread failed (its error is the one reported) or ended
            b.save(outs, path)
            try:
                done.wait()
            except threading.BrokenBarrierError:
                return

    def load():
        graph = ctx.load_graph(path)
        got = dispatch_once(ctx, graph, x).tobytes()
        assert got in expected, "a loaded graph computed neither saved function"
        return expected[got]

    def loader(i):
        while not stop.is_set():
            try:
                seen.add(load())
            except (OSError, ValueError) as exc:
                assert "weights" in str(exc), exc
                refused.append(exc)

    def main(i):
        try:
            for _ in range(rounds):
                start.wait()
                done.wait()
                after.append(load())  # between rounds: no save runs, the pair must be whole
        finally:  # a failure here must not leave the others waiting
            stop.set()
            start.abort()
            done.abort()

    jobs = [saver, saver, main, loader]
    hammer(4, lambda i: jobs[i](i))
    assert len(after) == rounds and set(after) <= {1, 2}
    assert refused == [], refused[:3]
