"""Random sequences of API calls (issue 8, item 4): contexts, builders, graphs and tensors are
made, used across contexts and dropped in any order, serially and from 8 threads sharing the
same objects. Every result is checked; every refusal must be one of the documented errors."""

import gc
import random
import re
import threading

import numpy as np
import pytest
import webnn

X = np.array([[-1.5, 0.0, 2.0], [3.0, -4.0, 0.5]], np.float32)
EXPECTED = np.maximum(X + 1, 0)  # the graph: relu(x + 1)

# What a call on a mismatched or used-up object may say (api.md: ValueError / RuntimeError).
ALLOWED = re.compile(
    r"build\(\) has already been called|duplicate input name|belongs to another context"
)


class Session:
    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.ml = webnn.ML()
        self.objs = {"ctx": [], "builder": [], "op": [], "graph": [], "tensor": []}
        self.lock = threading.Lock()  # the lists, not the engine: calls run outside it
        self.failures = []

    def pick(self, kind):
        with self.lock:
            items = self.objs[kind]
            return self.rng.choice(items) if items else None

    def add(self, kind, obj):
        with self.lock:
            self.objs[kind].append(obj)

    def step(self):
        with self.lock:
            k = self.rng.randrange(12)
        ctx = self.pick("ctx")
        try:
            if k == 0 or ctx is None:
                backend = "cpu" if k % 2 == 0 else "reference"
                self.add("ctx", self.ml.create_context(accelerated=False, backend=backend))
            elif k == 1:
                self.add("builder", ctx.create_graph_builder())
            elif k == 2 and (b := self.pick("builder")) is not None:
                x = b.input("x", [2, 3], "float32")
                self.add("op", (b, b.relu(b.add(x, b.constant(np.ones((2, 3), np.float32))))))
            elif k == 3 and (op := self.pick("op")) is not None:
                self.add("graph", op[0].build({"y": op[1]}))
            elif k == 4:
                self.add(
                    "tensor", ctx.create_tensor([2, 3], "float32", readable=True, writable=True)
                )
            elif k == 5 and self.objs["graph"] and self.objs["tensor"]:
                graph, t_in, t_out = self.pick("graph"), self.pick("tensor"), self.pick("tensor")
                if t_in is not t_out:
                    ctx.write_tensor(t_in, X)
                    ctx.dispatch(graph, {"x": t_in}, {"y": t_out})
                    got = ctx.read_tensor(t_out)
                    # Another thread may write t_in or t_out in between: only a value no
                    # dispatch or write could have left is a failure.
                    if not np.all((got == EXPECTED) | (got == X)):
                        self.failures.append(f"dispatch gave {got.tolist()}")
            elif k == 6 and (graph := self.pick("graph")) is not None:
                got = ctx.compute(graph, {"x": X})["y"]
                if not np.array_equal(got, EXPECTED):
                    self.failures.append(f"compute gave {got.tolist()}")
            elif k >= 7:
                with self.lock:
                    kind = self.rng.choice(list(self.objs))
                    if self.objs[kind]:
                        self.objs[kind].pop(self.rng.randrange(len(self.objs[kind])))
                if k == 11 and self.rng.random() < 0.25:  # a collection costs ~30 ms
                    gc.collect()
        except (ValueError, RuntimeError) as exc:
            if not ALLOWED.search(str(exc)):
                self.failures.append(f"{type(exc).__name__}: {exc}")


@pytest.mark.parametrize("seed", [1, 2])
def test_random_call_sequences_serial_then_from_8_threads(seed):
    s = Session(seed)
    for _ in range(500):
        s.step()
    threads = [threading.Thread(target=lambda: [s.step() for _ in range(60)]) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
        assert not t.is_alive(), "a thread did not finish: a hang"
    for kind in s.objs:  # whatever is left goes in one order, then a collection
        s.objs[kind].clear()
    gc.collect()
    assert not s.failures, s.failures[:5]
