"""AsyncMLContext: an asyncio facade over a synchronous MLContext (pywebnn compat).

WebNN orders a context's dispatch, readTensor and writeTensor by call (the context's timeline):
a read issued after a dispatch sees its result even when the dispatch's promise is never
awaited. Running each call in the default executor (pywebnn's wrapper, and this one before the
tenth session) does not: its threads take the calls in any order. So every context has one
queue, shared by all its AsyncMLContext wrappers, and one worker thread that runs the queued
calls one after another. A call is queued when the method is called, not when it is awaited.
"""

import asyncio
import collections
import concurrent.futures
import threading
import weakref


class _Queue:
    """The calls of one context, run in call order by one worker thread (started on demand)."""

    def __init__(self, context):
        self.context = context
        self._lock = threading.Lock()
        self._jobs = collections.deque()  # (future, owner, fn, args)
        self._working = False

    def submit(self, owner, fn, args, after_close=False):
        job = concurrent.futures.Future()
        with self._lock:
            # Checked under the lock that close() takes: nothing is queued after it fails.
            if owner._closed and not after_close:
                raise RuntimeError(
                    f"AsyncMLContext.{_facade_name(fn.__name__)}: this AsyncMLContext is closed"
                )
            self._jobs.append((job, owner, fn, args))
            start = not self._working
            self._working = True
        if start:
            # Not a daemon: at interpreter exit the queued calls finish instead of the thread
            # being stopped inside the engine. It ends as soon as the queue is empty.
            threading.Thread(target=self._work, name="webnn-async-context").start()
        return job

    def close(self, owner, error):
        """Closes the owner and fails its calls that have not started (a running one finishes)."""
        with self._lock:
            owner._closed = True
            mine = [j for j in self._jobs if j[1] is owner]
            self._jobs = collections.deque(j for j in self._jobs if j[1] is not owner)
        for job, _, fn, _ in mine:
            job.set_exception(error(fn.__name__))

    def _work(self):
        while True:
            with self._lock:
                if not self._jobs:
                    self._working = False
                    return
                job, _, fn, args = self._jobs.popleft()
            if not job.set_running_or_notify_cancel():
                continue
            try:
                result = fn(*args)
            except BaseException as e:  # noqa: BLE001 - delivered to the awaiter, as an executor does
                job.set_exception(e)
            else:
                job.set_result(result)
            del job, fn, args  # drop the tensors of a finished call before waiting for the next


# One queue per context, whichever wrapper queues. Keyed by id(): MLContext has no weak
# references, but each queue holds its context, so the id cannot be reused while the entry lives.
_queues = weakref.WeakValueDictionary()
_queues_lock = threading.Lock()


def _queue_of(context):
    with _queues_lock:
        queue = _queues.get(id(context))
        if queue is None:
            queue = _queues[id(context)] = _Queue(context)
        return queue


async def _result(job):
    # The call is not cancelled with its awaiter: once issued it runs, as on WebNN's timeline,
    # so that the calls after it see what it wrote.
    loop = asyncio.get_running_loop()
    waiter = loop.create_future()

    def done(job):
        def copy():
            if waiter.cancelled():
                return
            if job.exception() is not None:
                waiter.set_exception(job.exception())
            else:
                waiter.set_result(job.result())

        try:
            loop.call_soon_threadsafe(copy)
        except RuntimeError:  # the loop was closed before the call ended: nobody waits
            pass

    job.add_done_callback(done)
    return await waiter


class _Call(collections.abc.Coroutine):
    """What the queued methods return: awaitable, usable with asyncio.create_task / gather, and
    silent when never awaited (a dispatch need not be awaited; a plain coroutine would warn)."""

    __slots__ = ("_coro", "_job")

    def __init__(self, job):
        self._job = job
        self._coro = None

    def _inner(self):
        if self._coro is None:
            self._coro = _result(self._job)
        return self._coro

    def send(self, value):
        return self._inner().send(value)

    def throw(self, *args):
        return self._inner().throw(*args)

    def close(self):
        if self._coro is not None:
            self._coro.close()

    def __await__(self):
        return self._inner().__await__()


class AsyncMLContext:
    """dispatch, read_tensor_async and write_tensor_async are queued on the context's timeline and
    run in call order in a worker thread; they return awaitables. Other members forward to the
    wrapped context and run at once (create_tensor defaults to a readable, writable tensor)."""

    def __init__(self, context):
        self._context = context
        self._queue = _queue_of(context)
        self._closed = False

    def __getattr__(self, name):
        return getattr(self._context, name)

    def create_tensor(
        self, shape, data_type, readable=True, writable=True, exportable_to_gpu=False
    ):
        """Like MLContext.create_tensor, but readable and writable by default (pywebnn's wrapper,
        api.md §2)."""
        return self._context.create_tensor(shape, data_type, readable, writable, exportable_to_gpu)

    def _submit(self, fn, *args):
        return _Call(self._queue.submit(self, fn, args))

    def dispatch(self, graph, inputs, outputs):
        return self._submit(self._context.dispatch, graph, inputs, outputs)

    def read_tensor_async(self, tensor):
        return self._submit(self._context.read_tensor, tensor)

    def write_tensor_async(self, tensor, data):
        return self._submit(self._context.write_tensor, tensor, data)

    @property
    def closed(self):
        return self._closed

    def close(self):
        """Refuses later calls and fails this wrapper's calls that have not started with a
        RuntimeError; a call already running finishes. Other wrappers of the context go on."""
        self._queue.close(self, _closed_before_run)

    async def aclose(self):
        """Refuses later calls, then waits until this wrapper's queued calls have run."""
        if self._closed:
            return
        self._closed = True
        # The queue runs in order: once this no-op has run, every earlier call has.
        await _Call(self._queue.submit(self, _drained, (), after_close=True))

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        await self.aclose()


def _drained():
    return None


def _facade_name(name):
    return {"read_tensor": "read_tensor_async", "write_tensor": "write_tensor_async"}.get(
        name, name
    )


def _closed_before_run(name):
    return RuntimeError(
        f"AsyncMLContext.{_facade_name(name)}: the AsyncMLContext was closed before this call ran"
    )
