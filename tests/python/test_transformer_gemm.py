"""Transformer-shaped work on the cpu backend: batched matmuls with broadcast batch dimensions,
odd sizes, K deeper than one GEMM pass (768), B constant or computed, fused epilogues (bias,
residual, ONNX's decomposed gelu, scale + mask) and reshapes that alias their input in the
memory plan.

- cpu vs the reference backend within a float32 tolerance;
- 1, 2 and 3 threads: bit-identical (however the GEMM splits its tasks, every element sums its
  products in the same order);
- fused vs unfused, memory plan vs none: bit-identical.
"""

import os

import numpy as np
import pytest
import webnn

UNFUSED = "constant_folding,batch_norm_folding,layout_assignment"
_CONTEXTS = {}


def _context(backend, threads):
    key = (backend, threads)
    if key not in _CONTEXTS:
        old = os.environ.get("WEBNN_NUM_THREADS")
        os.environ["WEBNN_NUM_THREADS"] = str(threads)
        try:
            _CONTEXTS[key] = webnn.ML().create_context(accelerated=False, backend=backend)
        finally:
            if old is None:
                os.environ.pop("WEBNN_NUM_THREADS")
            else:
                os.environ["WEBNN_NUM_THREADS"] = old
    return _CONTEXTS[key]


def _run(build, feeds, backend="cpu", threads=1, passes="all", memory_plan="all"):
    old = {k: os.environ.get(k) for k in ("WEBNN_PASSES", "WEBNN_MEMORY_PLAN")}
    os.environ["WEBNN_PASSES"] = passes
    os.environ["WEBNN_MEMORY_PLAN"] = memory_plan
    try:
        ctx = _context(backend, threads)
        b = ctx.create_graph_builder()
        ins = {k: b.input(k, list(v.shape), "float32") for k, v in feeds.items()}
        graph = b.build({"y": build(b, ins)})
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return ctx.compute(graph, feeds)["y"], graph.compile_stats


class RandomMatmul:
    """matmul(a, b) with random broadcast batch dimensions and sizes, then one of the epilogues
    of a transformer layer."""

    EPILOGUES = ("none", "bias", "bias_residual", "gelu", "scale_mask", "reshape_relu")

    def __init__(self, seed):
        r = np.random.default_rng(seed)
        self.epilogue = self.EPILOGUES[seed % len(self.EPILOGUES)]
        batch = [[], [2], [3], [2, 3], [1, 4], [12]][int(r.integers(6))]
        m = int(r.choice([1, 5, 7, 13, 37, 64, 128, 130]))
        k = int(r.choice([1, 3, 17, 32, 64, 200, 384, 800, 1000]))
        n = int(r.choice([1, 7, 16, 33, 100, 128, 200, 384]))
        # Keep each case to a few million multiply-adds.
        while m * k * n * max(1, int(np.prod(batch))) > 6_000_000 and m > 8:
            m //= 2
        a_batch = [d if r.random() < 0.7 else 1 for d in batch]
        choice = r.random()
        b_batch = [] if choice < 0.4 else [d if r.random() < 0.5 else 1 for d in batch]
        self.a_shape = a_batch + [m, k]
        self.b_shape = b_batch + [k, n]
        self.out_shape = list(np.broadcast_shapes(tuple(a_batch), tuple(b_batch))) + [m, n]
        self.b_constant = r.random() < 0.5
        self.rng = np.random.default_rng(seed + 1000)
        self.a = self.rng.uniform(-1, 1, self.a_shape).astype(np.float32)
        self.b = self.rng.uniform(-1, 1, self.b_shape).astype(np.float32)
        self.bias = self.rng.uniform(-1, 1, [n]).astype(np.float32)
        self.residual = self.rng.uniform(-1, 1, self.out_shape).astype(np.float32)
        self.mask = self.rng.uniform(-3, 0, [1] * (len(self.out_shape) - 1) + [n])
        self.mask = self.mask.astype(np.float32)

    def feeds(self):
        f = {"a": self.a}
        if not self.b_constant:
            f["b"] = self.b
        if self.epilogue == "bias_residual":
            f["r"] = self.residual
        return f

    def build(self, g, ins):
        b = g.constant(self.b) if self.b_constant else ins["b"]
        y = g.matmul(ins["a"], b)

        def scalar(v):
            return g.constant(np.array(v, np.float32))

        if self.epilogue == "bias":
            y = g.add(y, g.constant(self.bias))
        elif self.epilogue == "bias_residual":
            y = g.add(g.add(y, g.constant(self.bias)), ins["r"])
        elif self.epilogue == "gelu":  # as ONNX exports it: x * 0.5 * (1 + erf(x / sqrt 2))
            h = g.add(y, g.constant(self.bias))
            e = g.erf(g.div(h, scalar(1.4142135)))
            y = g.mul(g.mul(h, g.add(e, scalar(1.0))), scalar(0.5))
        elif self.epilogue == "scale_mask":
            y = g.add(g.div(y, scalar(5.656854)), g.constant(self.mask))
        elif self.epilogue == "reshape_relu":
            flat = [int(np.prod(self.out_shape))]
            y = g.reshape(g.relu(g.reshape(y, flat)), self.out_shape)
        return y


@pytest.mark.parametrize("seed", range(30))
def test_random_matmul_epilogues(seed):
    case = RandomMatmul(seed)
    feeds = case.feeds()
    want, _ = _run(case.build, feeds, backend="reference")
    got, stats = _run(case.build, feeds, threads=1)
    assert list(got.shape) == case.out_shape
    if case.epilogue in ("bias", "bias_residual", "gelu", "scale_mask"):
        assert stats["fused_steps"] > 0
    # A sum of K float32 products: within K eps sum(|a| |b|) <= K * 2^-23 * K here.
    k = case.a_shape[-1]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=k * k * 2.0**-23 + 1e-6)
    for threads in (2, 3):
        other, _ = _run(case.build, feeds, threads=threads)
        np.testing.assert_array_equal(got, other, err_msg=f"{threads} threads")
    unfused, _ = _run(case.build, feeds, threads=2, passes=UNFUSED, memory_plan="none")
    np.testing.assert_array_equal(got, unfused)
    no_plan, _ = _run(case.build, feeds, threads=2, memory_plan="none")
    np.testing.assert_array_equal(got, no_plan)


def _reshape_chain(g, ins):
    w1 = np.linspace(-1, 1, 16 * 16, dtype=np.float32).reshape(16, 16)
    w2 = np.linspace(1, -1, 16 * 16, dtype=np.float32).reshape(16, 16)
    h = g.matmul(ins["x"], g.constant(w1))
    r = g.reshape(g.reshape(h, [2, 64]), [8, 16])
    return g.matmul(r, g.constant(w2))


def test_reshape_of_a_dying_value_aliases_it():
    """matmul -> reshape -> reshape -> matmul: the three intermediates (512 bytes each) share
    one buffer, since each reshape's input dies there."""
    x = np.random.default_rng(0).uniform(-1, 1, [8, 16]).astype(np.float32)
    want, _ = _run(_reshape_chain, {"x": x}, backend="reference")
    got, stats = _run(_reshape_chain, {"x": x})
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert stats["unshared_bytes"] == 3 * 512
    assert stats["arena_bytes"] == 512
    no_plan, _ = _run(_reshape_chain, {"x": x}, memory_plan="none")
    np.testing.assert_array_equal(got, no_plan)


def _reshape_of_live_value(g, ins):
    h = g.matmul(ins["x"], g.constant(np.eye(16, dtype=np.float32) * 2))
    t = g.neg(g.reshape(h, [128]))  # neg may write over the reshape's output in place
    return g.add(g.reshape(t, [8, 16]), g.mul(h, g.constant(np.array(4, np.float32))))


def test_reshape_of_a_value_read_later_copies():
    """h is read again after its reshape, so the reshape must not alias it: the in-place neg
    after the reshape would overwrite h (y would be -2h * 4 - 2h instead of 3h)."""
    x = np.random.default_rng(1).uniform(-1, 1, [8, 16]).astype(np.float32)
    got, _ = _run(_reshape_of_live_value, {"x": x})
    h = x * np.float32(2)  # exact, as is the matmul by 2 I (the other products are zeros)
    np.testing.assert_array_equal(got, -h + h * np.float32(4))
    want, _ = _run(_reshape_of_live_value, {"x": x}, backend="reference")
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("c_kind", ["none", "matrix", "bias_row"])
@pytest.mark.parametrize("k", [5, 900])
def test_gemm_then_bias_add(c_kind, k):
    """gemm(a, b, c, alpha, beta) + bias[n]: the add joins the GEMM's store when c is not
    itself the column bias, after alpha * A * B + beta * c, as the add node computes it (K 900:
    two passes over K)."""
    r = np.random.default_rng(k)
    m, n = 29, 45
    a = r.uniform(-1, 1, [m, k]).astype(np.float32)
    w = r.uniform(-1, 1, [k, n]).astype(np.float32)
    c = r.uniform(-1, 1, {"matrix": [m, n], "bias_row": [n]}.get(c_kind, [1])).astype(np.float32)
    bias = r.uniform(-1, 1, [n]).astype(np.float32)

    def build(g, ins):
        opts = {"alpha": 0.5}
        if c_kind != "none":
            opts.update(c=g.constant(c), beta=0.75 if c_kind == "matrix" else 1.0)
        return g.add(g.gemm(ins["a"], g.constant(w), **opts), g.constant(bias))

    want, _ = _run(build, {"a": a}, backend="reference")
    got, stats = _run(build, {"a": a})
    assert stats["fused_steps"] == 1
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=k * 2.0**-20)
    unfused, _ = _run(build, {"a": a}, passes=UNFUSED, memory_plan="none")
    np.testing.assert_array_equal(got, unfused)
    two, _ = _run(build, {"a": a}, threads=2)
    np.testing.assert_array_equal(got, two)


@pytest.mark.parametrize(
    "batch,m,k,n",
    [
        ([2, 12], 37, 32, 37),  # attention scores, odd sequence
        ([1, 4], 128, 64, 128),  # the benchmark encoder's
        ([3], 5, 64, 300),  # few rows
        ([], 6, 768, 160),  # one row tile: 2 and 3 threads split the columns into blocks
    ],
)
def test_attention_scores_epilogue_in_the_gemm(batch, m, k, n):
    """q @ k^T / sqrt(d) + mask, then softmax (the epilogue runs on each finished chunk of C
    inside the GEMM; whole rows, or row pieces when the columns are split into blocks): the
    same bits as the unfused graph and as 1 thread, at 2 and 3 threads."""
    r = np.random.default_rng(m * n + k)
    q = r.uniform(-1, 1, batch + [m, k]).astype(np.float32)
    kt = r.uniform(-1, 1, batch + [k, n]).astype(np.float32)
    mask = np.where(r.random([1] * len(batch) + [1, n]) < 0.2, -10000.0, 0.0).astype(np.float32)

    def build(g, ins):
        s = g.matmul(ins["q"], ins["kt"])
        s = g.add(g.div(s, g.constant(np.array(np.sqrt(k), np.float32))), g.constant(mask))
        return g.softmax(s, len(batch) + 1)

    feeds = {"q": q, "kt": kt}
    want, _ = _run(build, feeds, backend="reference")
    got, stats = _run(build, feeds)
    assert stats["fused_steps"] == 2
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)
    unfused, _ = _run(build, feeds, passes=UNFUSED, memory_plan="none")
    np.testing.assert_array_equal(got, unfused)
    for threads in (2, 3):
        other, _ = _run(build, feeds, threads=threads)
        np.testing.assert_array_equal(got, other, err_msg=f"{threads} threads")
