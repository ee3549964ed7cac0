"""AsyncMLContext runs dispatch, read_tensor_async and write_tensor_async in call order (WebNN's
context timeline), whether or not each call is awaited before the next; closing fails or
drains what is queued. Every wait is bounded (asyncio.wait_for, thread joins with a timeout):
a lost call fails the test instead of hanging it.
"""

import asyncio
import threading

import numpy as np
import pytest
import webnn

N = 4096  # elements: big enough that the calls take long enough to overlap in a thread pool
LIMIT = 120  # seconds for any one test's event loop


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, LIMIT))


@pytest.fixture(params=webnn.backends())
def ctx(request):
    return webnn.ML().create_context(accelerated=False, backend=request.param)


def affine_graph(ctx):
    """y = 3 x + 1: each result names the value that was written before its dispatch."""
    b = ctx.create_graph_builder()
    x = b.input("x", [N], "float32")
    y = b.add(b.mul(x, b.constant(np.float32(3.0))), b.constant(np.float32(1.0)))
    return b.build({"y": y})


class Gate:
    """Data for write_tensor_async whose conversion waits until opened: it holds the queue's
    worker inside a call, so that the calls behind it are certainly still queued."""

    def __init__(self, value):
        self.value = value
        self.opened = threading.Event()

    def __array__(self, dtype=None, copy=None):
        assert self.opened.wait(LIMIT), "the gate was never opened"
        return np.asarray(self.value, dtype)


def tensors(actx, count=1):
    return [actx.create_tensor([N], "float32") for _ in range(count)]


def test_write_dispatch_read_issued_without_awaiting_run_in_call_order(ctx):
    actx = webnn.AsyncMLContext(ctx)
    g = affine_graph(ctx)
    x, y = tensors(actx, 2)
    rounds = 120

    async def main():
        reads = []
        for i in range(rounds):
            actx.write_tensor_async(x, np.full(N, i, np.float32))  # not awaited
            actx.dispatch(g, {"x": x}, {"y": y})  # not awaited
            reads.append(actx.read_tensor_async(y))
        return await asyncio.gather(*reads)

    results = run(main())
    for i, r in enumerate(results):
        np.testing.assert_array_equal(r, np.full(N, 3.0 * i + 1.0, np.float32), err_msg=f"read {i}")


def test_calls_started_as_tasks_run_in_call_order(ctx):
    # Each call is a task at once: all of them are under way together, as with an executor.
    actx = webnn.AsyncMLContext(ctx)
    g = affine_graph(ctx)
    x, y = tensors(actx, 2)
    rounds = 120

    async def main():
        tasks, reads = [], []
        for i in range(rounds):
            tasks.append(
                asyncio.ensure_future(actx.write_tensor_async(x, np.full(N, i, np.float32)))
            )
            tasks.append(asyncio.ensure_future(actx.dispatch(g, {"x": x}, {"y": y})))
            reads.append(asyncio.ensure_future(actx.read_tensor_async(y)))
        await asyncio.gather(*tasks)
        return await asyncio.gather(*reads)

    for i, r in enumerate(run(main())):
        np.testing.assert_array_equal(r, np.full(N, 3.0 * i + 1.0, np.float32), err_msg=f"read {i}")


def test_a_chain_of_dispatches_sees_each_previous_output(ctx):
    # Ping-pong between two tensors: dispatch k reads what dispatch k-1 wrote.
    actx = webnn.AsyncMLContext(ctx)
    b = ctx.create_graph_builder()
    x = b.input("x", [N], "float32")
    g = b.build({"y": b.add(x, b.constant(np.float32(1.0)))})
    a, c = tensors(actx, 2)
    steps = 200

    async def main():
        calls = [actx.write_tensor_async(a, np.zeros(N, np.float32))]
        snapshots = {}
        for k in range(steps):
            src, dst = (a, c) if k % 2 == 0 else (c, a)
            calls.append(actx.dispatch(g, {"x": src}, {"y": dst}))
            if k % 25 == 24:
                snapshots[k + 1] = actx.read_tensor_async(dst)
        # Awaited in reverse order: the order of the awaits does not matter, the calls' does.
        values = {}
        for k in sorted(snapshots, reverse=True):
            values[k] = await snapshots[k]
        await asyncio.gather(*calls)
        return values

    values = run(main())
    assert sorted(values) == list(range(25, steps + 1, 25))
    for k, v in values.items():
        np.testing.assert_array_equal(v, np.full(N, float(k), np.float32), err_msg=f"after {k}")


def test_tasks_gather_and_plain_awaits_all_work(ctx):
    actx = webnn.AsyncMLContext(ctx)
    g = affine_graph(ctx)
    x, y = tensors(actx, 2)
    data = np.arange(N, dtype=np.float32)

    async def main():
        write = asyncio.create_task(actx.write_tensor_async(x, data))
        dispatch = asyncio.ensure_future(actx.dispatch(g, {"x": x}, {"y": y}))
        first = await actx.read_tensor_async(y)
        assert await write is None and await dispatch is None
        (second,) = await asyncio.gather(actx.read_tensor_async(y))
        return first, second

    first, second = run(main())
    np.testing.assert_array_equal(first, data * 3 + 1)
    np.testing.assert_array_equal(second, data * 3 + 1)


def test_calls_issued_outside_a_loop_are_kept_in_order(ctx):
    # A call is queued when it is made: no loop is needed until its result is awaited.
    actx = webnn.AsyncMLContext(ctx)
    g = affine_graph(ctx)
    x, y = tensors(actx, 2)
    actx.write_tensor_async(x, np.full(N, 2.0, np.float32))
    actx.dispatch(g, {"x": x}, {"y": y})
    read = actx.read_tensor_async(y)
    actx.write_tensor_async(x, np.full(N, 5.0, np.float32))
    actx.dispatch(g, {"x": x}, {"y": y})
    np.testing.assert_array_equal(run(read), np.full(N, 7.0, np.float32))
    np.testing.assert_array_equal(run(actx.read_tensor_async(y)), np.full(N, 16.0, np.float32))


def test_wrappers_of_one_context_share_its_timeline(ctx):
    first, second = webnn.AsyncMLContext(ctx), webnn.AsyncMLContext(ctx)
    g = affine_graph(ctx)
    x, y = tensors(first, 2)

    async def main():
        reads = []
        for i in range(60):
            (first if i % 2 else second).write_tensor_async(x, np.full(N, i, np.float32))
            (second if i % 3 else first).dispatch(g, {"x": x}, {"y": y})
            reads.append((first if i % 5 else second).read_tensor_async(y))
        return await asyncio.gather(*reads)

    for i, r in enumerate(run(main())):
        np.testing.assert_array_equal(r, np.full(N, 3.0 * i + 1.0, np.float32), err_msg=f"read {i}")


def test_threads_with_their_own_loops_each_keep_their_order(ctx):
    actx = webnn.AsyncMLContext(ctx)
    g = affine_graph(ctx)
    threads, rounds = 4, 30
    results, errors = {}, []

    def worker(t):
        x, y = tensors(actx, 2)

        async def main():
            reads = []
            for i in range(rounds):
                actx.write_tensor_async(x, np.full(N, 100 * t + i, np.float32))
                actx.dispatch(g, {"x": x}, {"y": y})
                reads.append(actx.read_tensor_async(y))
            return await asyncio.gather(*reads)

        try:
            results[t] = run(main())
        except BaseException as e:  # noqa: BLE001 - re-raised by the main thread
            errors.append(e)

    pool = [threading.Thread(target=worker, args=(t,)) for t in range(threads)]
    for th in pool:
        th.start()
    for th in pool:
        th.join(timeout=LIMIT)
        assert not th.is_alive(), "a thread's calls never completed"
    assert not errors, errors
    for t in range(threads):
        for i, r in enumerate(results[t]):
            np.testing.assert_array_equal(r, np.full(N, 3.0 * (100 * t + i) + 1.0, np.float32))


def test_a_failing_call_reaches_its_awaiter_and_the_queue_goes_on(ctx):
    actx = webnn.AsyncMLContext(ctx)
    g = affine_graph(ctx)
    x, y = tensors(actx, 2)
    wrong = actx.create_tensor([N + 1], "float32")

    async def main():
        actx.write_tensor_async(x, np.full(N, 4.0, np.float32))
        bad = actx.dispatch(g, {"x": wrong}, {"y": y})
        bad_write = actx.write_tensor_async(x, np.zeros(3, np.float32))
        good = actx.dispatch(g, {"x": x}, {"y": y})
        with pytest.raises((ValueError, RuntimeError)):
            await bad
        with pytest.raises(ValueError, match="Shape mismatch"):
            await bad_write
        await good
        return await actx.read_tensor_async(y)

    np.testing.assert_array_equal(run(main()), np.full(N, 13.0, np.float32))


def test_cancelling_an_awaiter_does_not_drop_its_call(ctx):
    actx = webnn.AsyncMLContext(ctx)
    g = affine_graph(ctx)
    x, y = tensors(actx, 2)

    async def main():
        write = asyncio.create_task(actx.write_tensor_async(x, np.full(N, 6.0, np.float32)))
        write.cancel()
        dispatch = asyncio.create_task(actx.dispatch(g, {"x": x}, {"y": y}))
        await asyncio.sleep(0)
        dispatch.cancel()
        for task in (write, dispatch):
            with pytest.raises(asyncio.CancelledError):
                await task
        return await actx.read_tensor_async(y)

    np.testing.assert_array_equal(run(main()), np.full(N, 19.0, np.float32))


def test_close_fails_the_calls_not_started_and_refuses_later_ones(ctx):
    actx = webnn.AsyncMLContext(ctx)
    g = affine_graph(ctx)
    x, y = tensors(actx, 2)
    gate = Gate(np.full(N, 7.0, np.float32))

    async def main():
        calls = [actx.write_tensor_async(x, gate)]
        for i in range(50):
            calls.append(actx.dispatch(g, {"x": x}, {"y": y}))
            calls.append(actx.read_tensor_async(y))
        actx.close()
        gate.opened.set()
        assert actx.closed
        outcomes = await asyncio.gather(*calls, return_exceptions=True)
        with pytest.raises(RuntimeError, match="read_tensor_async: this AsyncMLContext is closed"):
            actx.read_tensor_async(y)
        return outcomes

    outcomes = run(main())
    # The gated write had started or had not; every call behind it was still queued.
    for e in outcomes[1:]:
        assert isinstance(e, RuntimeError), e
        assert "closed before this call ran" in str(e)
        assert str(e).startswith(("AsyncMLContext.dispatch", "AsyncMLContext.read_tensor_async"))
    np.testing.assert_array_equal(ctx.read_tensor(y), np.zeros(N, np.float32))
    # The context goes on, and a new wrapper of it works.
    expected_x = np.full(N, 7.0 if outcomes[0] is None else 0.0, np.float32)
    other = webnn.AsyncMLContext(ctx)
    np.testing.assert_array_equal(run(other.read_tensor_async(x)), expected_x)
    other.dispatch(g, {"x": x}, {"y": y})
    np.testing.assert_array_equal(run(other.read_tensor_async(y)), expected_x * 3 + 1)


def test_aclose_and_async_with_drain_the_queue(ctx):
    g = affine_graph(ctx)

    async def main():
        async with webnn.AsyncMLContext(ctx) as actx:
            x, y = tensors(actx, 2)
            for i in range(40):
                actx.write_tensor_async(x, np.full(N, i, np.float32))
                actx.dispatch(g, {"x": x}, {"y": y})
        assert actx.closed
        with pytest.raises(RuntimeError, match="dispatch: this AsyncMLContext is closed"):
            actx.dispatch(g, {"x": x}, {"y": y})
        await actx.aclose()  # a second close is a no-op
        return y

    y = run(main())
    np.testing.assert_array_equal(ctx.read_tensor(y), np.full(N, 3.0 * 39 + 1, np.float32))


def test_closing_one_wrapper_leaves_the_others_working(ctx):
    first, second = webnn.AsyncMLContext(ctx), webnn.AsyncMLContext(ctx)
    g = affine_graph(ctx)
    x, y = tensors(first, 2)

    async def main():
        second.write_tensor_async(x, np.full(N, 1.0, np.float32))
        second.dispatch(g, {"x": x}, {"y": y})
        first.close()
        return await second.read_tensor_async(y)

    np.testing.assert_array_equal(run(main()), np.full(N, 4.0, np.float32))


def test_destroying_a_tensor_fails_its_queued_calls_clearly(ctx):
    actx = webnn.AsyncMLContext(ctx)
    g = affine_graph(ctx)
    x, y = tensors(actx, 2)
    gate = Gate(np.full(N, 2.0, np.float32))

    async def main():
        calls = [actx.write_tensor_async(x, gate)]
        for _ in range(30):
            calls.append(actx.dispatch(g, {"x": x}, {"y": y}))
            calls.append(actx.read_tensor_async(y))
        calls.append(actx.read_tensor_async(x))
        y.destroy()  # not queued: it runs now, while the calls that use y wait behind the gate
        gate.opened.set()
        return await asyncio.gather(*calls, return_exceptions=True)

    outcomes = run(main())
    assert outcomes[0] is None
    for e in outcomes[1:-1]:
        assert isinstance(e, RuntimeError) and "destroyed" in str(e), e
    np.testing.assert_array_equal(outcomes[-1], np.full(N, 2.0, np.float32))
