"""Layout assignment through reshapes that insert or remove size-1 axes and through reductions.

An NCHW conv2d runs on NHWC; its output's transpose back to NCHW is now sunk through a
following squeeze / unsqueeze (a reshape of size-1 axes), the element-wise chain after it (which
then runs in the conv's own NHWC shape, so epilogue fusion takes it) and a reduction (its axes
remapped, keepDimensions either way). Random conv -> reshape -> chain -> reduction -> reshape
graphs (1-D convs as magika's, one-channel outputs, plain ones):

- cpu vs the reference backend (which runs the graph as built): equal within the float32
  tolerance of tests/python/test_passes_random.py (the convolutions sum in another order);
- cpu with every pass vs cpu with only folding and layouts (no fusion, no unit-axis reshapes,
  no memory plan): bit-identical (the same kernels on the same layouts);
- the transposes are gone where the walk can take them (compile_stats' optimized histogram).
"""

import numpy as np
import pytest
from test_passes_random import UNFUSED, _context, pass_settings


def _run(build, input_shape, backend, x, passes="all", memory_plan="all"):
    with pass_settings(passes, memory_plan):
        ctx = _context(backend)
        b = ctx.create_graph_builder()
        graph = b.build(build(b, b.input("x", input_shape, "float32")))
    return ctx.compute(graph, {"x": x}), graph.compile_stats


def _close(got, want):
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * (1 + np.abs(want).max()))


class RandomCase:
    """conv2d (NCHW) -> a reshape of size-1 axes -> element-wise chain -> reduction -> maybe a
    reshape; constants drawn once so every build is the same graph."""

    def __init__(self, seed):
        r = np.random.default_rng(seed)
        self.r = r
        n, cin = int(r.integers(1, 3)), int(r.integers(1, 9))
        kind = str(r.choice(["1d_h", "1d_w", "cout1", "plain"]))
        cout = 1 if kind == "cout1" else int(r.integers(2, 24))
        k = int(r.choice([1, 3]))
        if kind == "1d_h":
            h, w, kh, kw = int(r.integers(8, 40)), 1, k, 1
        elif kind == "1d_w":
            h, w, kh, kw = 1, int(r.integers(8, 40)), 1, k
        else:
            h, w, kh, kw = int(r.integers(3, 12)), int(r.integers(3, 12)), k, k
        self.input_shape = [n, cin, h, w]
        self.filter = r.uniform(-0.5, 0.5, [cout, cin, kh, kw]).astype(np.float32)
        self.bias = r.uniform(-1, 1, [cout]).astype(np.float32) if r.random() < 0.5 else None
        shape = [n, cout, h - kh + 1, w - kw + 1]
        # The reshape: drop some size-1 axes, maybe insert one.
        ones = [i for i, d in enumerate(shape) if d == 1]
        drop = {i for i in ones if r.random() < 0.8}
        shape = [d for i, d in enumerate(shape) if i not in drop]
        if r.random() < 0.4 or not drop:
            shape.insert(int(r.integers(0, len(shape) + 1)), 1)
        self.reshaped = shape
        self.steps = []
        for _ in range(int(r.integers(1, 8))):
            op = str(r.choice(["const", "scalar", "tanh", "relu", "square", "pair"]))
            c = None
            if op == "const":  # each axis full or 1: broadcasts into the value
                cshape = [d if r.random() < 0.5 else 1 for d in shape][int(r.integers(0, 2)) :]
                cshape = cshape or [1]
                c = r.uniform(-1, 1, cshape).astype(np.float32)
            elif op == "scalar":
                c = np.float32([r.uniform(0.2, 1.5)])
            self.steps.append((op, c, str(r.choice(["add", "mul", "sub"]))))
        self.reduce = str(r.choice(["reduce_max", "reduce_min", "reduce_sum", "reduce_mean"]))
        rank = len(shape)
        count = int(r.integers(1, min(rank, 2) + 1))
        self.axes = sorted(int(a) for a in r.choice(rank, count, replace=False))
        self.keep = bool(r.random() < 0.5)
        out = [1 if i in self.axes else d for i, d in enumerate(shape)]
        if not self.keep:
            out = [d for i, d in enumerate(out) if i not in self.axes]
        self.squeeze_out = [d for d in out if d != 1] if r.random() < 0.5 else None
        self.chain_output = r.random() < 0.2

    def build(self, b, x):
        opts = {"bias": b.constant(self.bias)} if self.bias is not None else {}
        y = b.conv2d(x, b.constant(self.filter), **opts)
        y = b.reshape(y, self.reshaped)
        values = [y]
        for op, c, binary in self.steps:
            if op in ("const", "scalar"):
                y = getattr(b, binary)(y, b.constant(c))
            elif op == "tanh":
                y = b.tanh(y)
            elif op == "relu":
                y = b.relu(y)
            elif op == "square":  # bounded: y * tanh(y)
                y = b.mul(y, b.tanh(y))
            else:
                y = b.add(y, values[len(values) // 2])
            values.append(y)
        out = getattr(b, self.reduce)(y, axes=self.axes, keep_dimensions=self.keep)
        if self.squeeze_out is not None:
            out = b.reshape(out, self.squeeze_out)
        outputs = {"y": out}
        if self.chain_output:
            outputs["chain"] = y
        return outputs


@pytest.mark.parametrize("seed", range(48))
def test_random_conv_reshape_chain_reduction(seed):
    case = RandomCase(seed)
    x = np.random.default_rng(seed + 500).uniform(-2, 2, case.input_shape).astype(np.float32)
    want, _ = _run(case.build, case.input_shape, "reference", x)
    got, _ = _run(case.build, case.input_shape, "cpu", x)
    for k in want:
        _close(got[k], want[k])
    unfused, _ = _run(case.build, case.input_shape, "cpu", x, UNFUSED, "none")
    for k in want:
        np.testing.assert_array_equal(got[k], unfused[k], err_msg=k)


def _magika_block(b, x):
    """magika's conv block: a 1-D conv stated as an NCHW conv2d over [n, c, length, 1],
    squeezed, a bias, the decomposed tanh-gelu (10 steps), a max over the length."""
    r = np.random.default_rng(11)
    w = b.constant(r.uniform(-0.3, 0.3, [16, 8, 5, 1]).astype(np.float32))
    bias = b.constant(r.uniform(-1, 1, [16, 1]).astype(np.float32))

    def k(v):
        return b.constant(np.float32([v]))

    y = b.add(b.reshape(b.conv2d(x, w), [2, 16, 36]), bias)
    m = b.mul(k(0.044715), y)
    m = b.mul(y, m)
    m = b.mul(y, m)
    m = b.add(y, m)
    m = b.mul(k(0.7978846), m)
    m = b.tanh(m)
    m = b.add(k(1.0), m)
    m = b.mul(k(0.5), m)
    m = b.mul(y, m)
    pooled = b.reduce_max(m, axes=[2], keep_dimensions=True)  # the importer's GlobalMaxPool
    return {"y": b.reshape(pooled, [2, 16])}


def test_magika_block_fuses_into_the_conv_without_transposes():
    shape = [2, 8, 40, 1]
    x = np.random.default_rng(1).uniform(-2, 2, shape).astype(np.float32)
    want, _ = _run(_magika_block, shape, "reference", x)
    got, stats = _run(_magika_block, shape, "cpu", x)
    _close(got["y"], want["y"])
    ops = stats["ops_after"]
    # Left: the input's transpose to NHWC. The chain runs in the conv's epilogue, the max over
    # the length on the NHWC value, and its [2,1,1,16] -> [2,16] is a reshape.
    assert ops.get("transpose", 0) == 1, ops
    assert stats["fused_steps"] >= 9, stats  # the bias add may be folded into the conv
    assert set(ops) == {"transpose", "conv2d", "reduceMax", "reshape"}, ops
    unfused, _ = _run(_magika_block, shape, "cpu", x, UNFUSED, "none")
    np.testing.assert_array_equal(got["y"], unfused["y"])


def _se_block(b, x):
    """A squeeze-and-excitation block on NCHW: conv, mean over the image (keepDimensions),
    1x1 convs on [n, c, 1, 1], the gate multiplied back."""
    r = np.random.default_rng(12)

    def const(*shape):
        return b.constant(r.uniform(-0.5, 0.5, shape).astype(np.float32))

    y = b.relu(b.conv2d(x, const(12, 3, 3, 3), bias=const(12)))
    s = b.reduce_mean(y, axes=[2, 3], keep_dimensions=True)
    s = b.relu(b.conv2d(s, const(4, 12, 1, 1)))
    s = b.sigmoid(b.conv2d(s, const(12, 4, 1, 1)))
    return {"y": b.mul(y, s)}


def test_squeeze_excitation_mean_stays_nhwc():
    shape = [2, 3, 11, 13]
    x = np.random.default_rng(2).uniform(-2, 2, shape).astype(np.float32)
    want, _ = _run(_se_block, shape, "reference", x)
    got, stats = _run(_se_block, shape, "cpu", x)
    _close(got["y"], want["y"])
    # The graph's input and output only: the mean reads the conv's NHWC value, and the 1x1
    # convs' transposes cancel against it.
    assert stats["ops_after"].get("transpose", 0) == 2, stats["ops_after"]
    unfused, _ = _run(_se_block, shape, "cpu", x, UNFUSED, "none")
    np.testing.assert_array_equal(got["y"], unfused["y"])


@pytest.mark.parametrize("keep", [False, True])
def test_reduction_whose_axes_would_reorder_is_left(keep):
    """Over [n, c, length] (c and length from NHWC [n, length, 1, c]) reducing c and length
    together would visit the elements in another order: the reduction stays on the transposed
    value, and the result is still the reference's."""

    def build(b, x):
        w = b.constant(np.random.default_rng(3).uniform(-0.5, 0.5, [6, 4, 3, 1]).astype("f4"))
        y = b.reshape(b.conv2d(x, w), [1, 6, 10])
        return {"y": b.reduce_max(b.tanh(y), axes=[1, 2], keep_dimensions=keep)}

    shape = [1, 4, 12, 1]
    x = np.random.default_rng(4).uniform(-2, 2, shape).astype(np.float32)
    want, _ = _run(build, shape, "reference", x)
    got, stats = _run(build, shape, "cpu", x)
    _close(got["y"], want["y"])
    assert stats["ops_after"].get("reduceMax", 0) == 1
