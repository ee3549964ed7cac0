"""The matmul_transposes pass (src/graph/passes/matmul_transposes.cc): transposes feeding a
float32 matmul, or reading its result, fold into the cpu matmul kernel's operand strides.

Random attention-like graphs (head split / merge transposes of rank 3-5, K^T, a runtime W^T,
two transposes in a row, broadcast batch axes, constant and computed operands, fused
epilogues), merged heads read by another matmul, and cases the
pass must leave alone (a transpose that is also a graph output, one moving A's last axis, an
output transpose after a fused epilogue, a result also read elsewhere):

- cpu vs the reference backend within a float32 tolerance;
- with the pass vs without it (every other pass on), 1 vs 2 vs 3 threads, memory plan vs none:
  bit-identical (the same products summed in the same order, stored at the same places);
- the folded transposes are gone from the compiled graph.
"""

import os

import numpy as np
import pytest
import webnn

PASSES = [
    "canonicalization",
    "qdq_fusion",
    "constant_folding",
    "integer_matmul",
    "qdq_tables",
    "batch_norm_folding",
    "layout_assignment",
    "fake_quantize",
    "epilogue_fusion",
]
WITHOUT = ",".join(PASSES)
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
        outs = build(b, ins)
        graph = b.build(outs if isinstance(outs, dict) else {"y": outs})
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return ctx.compute(graph, feeds), graph.compile_stats


def _transposes(stats):
    return stats["ops_after"].get("transpose", 0)


def _check(build, feeds, k, folded):
    """cpu == cpu without the pass == other thread counts == no memory plan, near the
    reference; `folded` transposes fewer than without the pass."""
    want, _ = _run(build, feeds, backend="reference")
    got, stats = _run(build, feeds)
    base, base_stats = _run(build, feeds, passes=WITHOUT)
    assert stats["passes"].get("matmul_transposes", 0) == folded
    assert _transposes(base_stats) - _transposes(stats) == folded
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-4, atol=k * k * 2.0**-23 + 1e-6)
        np.testing.assert_array_equal(got[name], base[name])
    for threads in (2, 3):
        other, _ = _run(build, feeds, threads=threads)
        for name in want:
            np.testing.assert_array_equal(got[name], other[name], err_msg=f"{threads} threads")
    no_plan, _ = _run(build, feeds, threads=2, memory_plan="none")
    for name in want:
        np.testing.assert_array_equal(got[name], no_plan[name])


def _perm_keeping_last(r, rank):
    while True:
        perm = [int(i) for i in r.permutation(rank - 1)] + [rank - 1]
        if perm != list(range(rank)):
            return perm


def _perm(r, rank):
    while True:
        perm = [int(i) for i in r.permutation(rank)]
        if perm != list(range(rank)):
            return perm


class RandomAttention:
    """x -> (transpose) -> matmul(., (transpose) y) [-> epilogue] [-> transpose]."""

    def __init__(self, seed):
        r = np.random.default_rng(seed)
        rank = int(r.choice([2, 3, 4, 4, 5]))
        batch = [int(v) for v in r.choice([1, 2, 3, 4, 5], rank - 2)]
        m, k, n = (int(v) for v in r.choice([1, 3, 7, 16, 33, 64, 130], 3))
        self.k = k
        a_logical = batch + [m, k]
        b_batch = [d if r.random() < 0.7 else 1 for d in batch]
        b_logical = b_batch + [k, n]
        # (Rank 2: only B can be transposed, a runtime W^T.)
        self.pa = _perm_keeping_last(r, rank) if rank > 2 and r.random() < 0.8 else None
        self.pb = _perm(r, rank) if r.random() < 0.8 else None
        self.po = _perm_keeping_last(r, rank) if rank > 2 and r.random() < 0.6 else None
        self.epilogue = r.random() < 0.3 and self.po is None
        self.b_constant = r.random() < 0.2
        # Stored operands: the logical ones under the inverse permutations.
        self.a = r.uniform(-1, 1, self._stored(a_logical, self.pa)).astype(np.float32)
        self.b = r.uniform(-1, 1, self._stored(b_logical, self.pb)).astype(np.float32)
        self.scale = np.float32(1 / np.sqrt(k))
        # Constant folding transposes a constant B before the pass runs.
        self.expected_folds = (
            (self.pa is not None)
            + (self.pb is not None and not self.b_constant)
            + (self.po is not None)
        )

    @staticmethod
    def _stored(logical, perm):
        if perm is None:
            return logical
        stored = [0] * len(perm)
        for i, p in enumerate(perm):
            stored[p] = logical[i]
        return stored

    def feeds(self):
        f = {"a": self.a}
        if not self.b_constant:
            f["b"] = self.b
        return f

    def build(self, g, ins):
        a = ins["a"] if self.pa is None else g.transpose(ins["a"], permutation=self.pa)
        b = g.constant(self.b) if self.b_constant else ins["b"]
        if self.pb is not None:
            b = g.transpose(b, permutation=self.pb)
        y = g.matmul(a, b)
        if self.epilogue:
            y = g.relu(g.mul(y, g.constant(np.array(self.scale))))
        if self.po is not None:
            y = g.transpose(y, permutation=self.po)
        return y


@pytest.mark.parametrize("seed", range(60))
def test_random_transposes_around_matmuls(seed):
    case = RandomAttention(seed)
    _check(case.build, case.feeds(), case.k, case.expected_folds)


def _heads(seq=13, heads=3, dh=8, batch=2, seed=0):
    r = np.random.default_rng(seed)
    x = r.uniform(-1, 1, [batch, seq, heads * dh]).astype(np.float32)
    w = [r.uniform(-0.5, 0.5, [heads * dh, heads * dh]).astype(np.float32) for _ in range(3)]
    mask = np.where(r.random([batch, 1, 1, seq]) < 0.2, -10000.0, 0.0).astype(np.float32)
    return x, w, mask


def test_attention_block_as_exported():
    """A BERT-style self-attention block as ONNX exports it: Q, K, V projections, reshape to
    heads, transposes [0,2,1,3] / [0,2,3,1], scores / sqrt(d) + mask, softmax, P V, the merge
    transpose and reshape: all four transposes fold."""
    batch, seq, heads, dh = 2, 13, 3, 8
    x, w, mask = _heads(seq, heads, dh, batch)

    def build(g, ins):
        def proj(i, perm):
            h = g.reshape(g.matmul(ins["x"], g.constant(w[i])), [batch, seq, heads, dh])
            return g.transpose(h, permutation=perm)

        q, kt, v = proj(0, [0, 2, 1, 3]), proj(1, [0, 2, 3, 1]), proj(2, [0, 2, 1, 3])
        s = g.div(g.matmul(q, kt), g.constant(np.array(np.sqrt(dh), np.float32)))
        p = g.softmax(g.add(s, g.constant(mask)), 3)
        ctx = g.transpose(g.matmul(p, v), permutation=[0, 2, 1, 3])
        return g.reshape(ctx, [batch, seq, heads * dh])

    _check(build, {"x": x}, heads * dh, 4)


def test_two_transposes_in_a_row():
    """V split into heads by [0,2,1,3] then its batch axes swapped by [1,0,2,3]: the two
    compose into one permutation of the stored operand."""
    r = np.random.default_rng(3)
    p = r.uniform(-1, 1, [4, 2, 9, 9]).astype(np.float32)
    v = r.uniform(-1, 1, [2, 9, 4, 16]).astype(np.float32)

    def build(g, ins):
        vt = g.transpose(g.transpose(ins["v"], permutation=[0, 2, 1, 3]), permutation=[1, 0, 2, 3])
        return g.matmul(ins["p"], vt)

    _check(build, {"p": p, "v": v}, 9, 2)


def test_k_transposed_by_two_transposes():
    """K^T as transpose [0,2,1,3] then [0,1,3,2]: both fold, B packed down its columns."""
    r = np.random.default_rng(5)
    q = r.uniform(-1, 1, [2, 4, 9, 16]).astype(np.float32)
    k = r.uniform(-1, 1, [2, 9, 4, 16]).astype(np.float32)

    def build(g, ins):
        kt = g.transpose(g.transpose(ins["k"], permutation=[0, 2, 1, 3]), permutation=[0, 1, 3, 2])
        return g.matmul(ins["q"], kt)

    _check(build, {"q": q, "k": k}, 16, 2)


def test_merged_heads_read_by_another_matmul():
    """P V -> transpose [0,2,1,3] -> matmul by a [d, n] matrix: the transpose folds into the
    first matmul's output only (the second reads the stored [b, s, h, d] value as it is)."""
    r = np.random.default_rng(6)
    p = r.uniform(-1, 1, [2, 3, 7, 7]).astype(np.float32)
    v = r.uniform(-1, 1, [2, 3, 7, 8]).astype(np.float32)
    w = r.uniform(-1, 1, [8, 5]).astype(np.float32)

    def build(g, ins):
        ctx = g.transpose(g.matmul(ins["p"], ins["v"]), permutation=[0, 2, 1, 3])
        return g.matmul(ctx, g.constant(w))

    _check(build, {"p": p, "v": v}, 8, 1)


def test_transposes_the_pass_leaves():
    """Not folded: a transpose also read by another node, one that moves A's last axis, an
    output transpose after a fused epilogue, and a matmul result that is also a graph output.
    (A transpose read by an element-wise op as well would be sunk past it by layout assignment
    first, and then fold.)"""
    r = np.random.default_rng(4)
    a = r.uniform(-1, 1, [3, 8, 5]).astype(np.float32)
    b = r.uniform(-1, 1, [3, 8, 6]).astype(np.float32)
    b2 = r.uniform(-1, 1, [3, 6, 8]).astype(np.float32)
    c = r.uniform(-1, 1, [3, 5, 8]).astype(np.float32)

    def build(g, ins):
        at = g.transpose(ins["a"], permutation=[0, 2, 1])  # [3, 5, 8]: A's last axis moves
        bt = g.transpose(ins["b2"], permutation=[0, 2, 1])  # [3, 8, 6], also an output
        y4 = g.matmul(ins["c"], ins["b"])
        return {
            "y1": g.matmul(at, ins["b"]),
            "y2": g.matmul(ins["c"], bt),
            "y2b": bt,
            "y3": g.transpose(g.relu(g.matmul(ins["c"], ins["b"])), permutation=[1, 0, 2]),
            "y4": y4,
            "y5": g.transpose(y4, permutation=[1, 0, 2]),
        }

    feeds = {"a": a, "b": b, "b2": b2, "c": c}
    want, _ = _run(build, feeds, backend="reference")
    got, stats = _run(build, feeds)
    assert stats["passes"].get("matmul_transposes", 0) == 0
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("m", [1, 4])
def test_rows_of_a_transposed_a_stay_one_product(m):
    """[s, m, d] read as transpose([m, s, d], [1, 0, 2]) times one constant matrix (khmersm's
    QKV projection, m = 1): the rows are evenly spaced, so they run as one product of s * m
    rows, not s products of m rows (same sums either way)."""
    r = np.random.default_rng(m)
    x = r.uniform(-1, 1, [m, 20, 48]).astype(np.float32)
    w = r.uniform(-1, 1, [48, 72]).astype(np.float32)

    def build(g, ins):
        return g.matmul(g.transpose(ins["x"], permutation=[1, 0, 2]), g.constant(w))

    _check(build, {"x": x}, 48, 1)
