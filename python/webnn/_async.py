"""AsyncMLContext: an asyncio facade over a synchronous MLContext (pywebnn compat)."""

import asyncio


class AsyncMLContext:
    """Runs the blocking context methods in the default executor."""

    def __init__(self, context):
        self._context = context

    def __getattr__(self, name):
        return getattr(self._context, name)

    def create_tensor(
        self, shape, data_type, readable=True, writable=True, exportable_to_gpu=False
    ):
        """Like MLContext.create_tensor, but readable and writable by default (pywebnn's wrapper,
        api.md §2)."""
        return self._context.create_tensor(shape, data_type, readable, writable, exportable_to_gpu)

    async def _run(self, fn, *args):
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, fn, *args)

    async def dispatch(self, graph, inputs, outputs):
        return await self._run(self._context.dispatch, graph, inputs, outputs)

    async def read_tensor_async(self, tensor):
        return await self._run(self._context.read_tensor, tensor)

    async def write_tensor_async(self, tensor, data):
        return await self._run(self._context.write_tensor, tensor, data)
