"""The compiler passes on random CNN-ish graphs (conv + batch_norm + activation + residual add,
depthwise convs, element-wise chains with broadcast constants, NCHW and NHWC).

- cpu with every pass and the memory plan vs the reference backend (which the compiler leaves
  as built): equal within a float32 tolerance (batch-norm folding re-associates arithmetic);
- fused vs unfused cpu (WEBNN_PASSES without epilogue_fusion), with and without the memory plan
  (WEBNN_MEMORY_PLAN=none): bit-identical, since fusion and buffer reuse never change results.
"""

import contextlib
import os

import numpy as np
import pytest
import webnn

_CONTEXTS = {}
UNFUSED = "constant_folding,batch_norm_folding,layout_assignment"


def _context(backend):
    if backend not in _CONTEXTS:
        _CONTEXTS[backend] = webnn.ML().create_context(accelerated=False, backend=backend)
    return _CONTEXTS[backend]


class RandomCnn:
    """A random graph description, built the same way for every backend and pass setting."""

    def __init__(self, seed, nhwc):
        self.rng = np.random.default_rng(seed)
        self.nhwc = nhwc
        # Every third graph is wide enough for several GEMM blocks and threads per conv.
        wide = seed % 3 == 0
        c = int(self.rng.integers(24, 80)) if wide else int(self.rng.integers(2, 12))
        hw = (12, 30) if wide else (4, 11)
        h, w = int(self.rng.integers(*hw)), int(self.rng.integers(*hw))
        self.max_channels = 80 if wide else 12
        self.input_shape = [1, h, w, c] if nhwc else [1, c, h, w]
        self.steps = [self._step() for _ in range(int(self.rng.integers(4, 12)))]
        self.constants = {}

    def _step(self):
        kinds = ["conv", "dwconv", "bn", "act", "act", "residual", "chmul", "scalar", "sub_x"]
        return (str(self.rng.choice(kinds)), int(self.rng.integers(1 << 30)))

    def _const(self, key, shape, lo=-1.0, hi=1.0):
        if key not in self.constants:
            rng = np.random.default_rng(hash(key) & 0xFFFFFFFF)
            self.constants[key] = rng.uniform(lo, hi, shape).astype(np.float32)
        return self.constants[key]

    def build(self, b, x):
        caxis = 3 if self.nhwc else 1
        layout = {"input_layout": "nhwc", "filter_layout": "ohwi"} if self.nhwc else {}
        values = [(x, list(self.input_shape))]
        y, shape = values[0]
        for i, (kind, seed) in enumerate(self.steps):
            c = shape[caxis]
            r = np.random.default_rng(seed)
            if kind in ("conv", "dwconv"):
                k = int(r.choice([1, 3]))
                groups = c if kind == "dwconv" else 1
                oc = c if kind == "dwconv" else int(r.integers(2, self.max_channels))
                ic = 1 if kind == "dwconv" else c
                fshape = [oc, k, k, ic] if self.nhwc else [oc, ic, k, k]
                filt = b.constant(self._const((i, "w"), fshape, -0.5, 0.5))
                opts = dict(padding=[k // 2] * 4, groups=groups, **layout)
                if r.random() < 0.5:
                    opts["bias"] = b.constant(self._const((i, "b"), [oc]))
                y = b.conv2d(y, filt, **opts)
                shape = list(shape)
                shape[caxis] = oc
            elif kind == "bn":
                y = b.batch_normalization(
                    y,
                    b.constant(self._const((i, "m"), [c])),
                    b.constant(self._const((i, "v"), [c], 0.5, 2.0)),
                    scale=b.constant(self._const((i, "s"), [c])),
                    bias=b.constant(self._const((i, "o"), [c])),
                    axis=caxis,
                    epsilon=1e-3,
                )
            elif kind == "act":
                act = str(
                    r.choice(["relu", "hard_swish", "sigmoid", "clamp", "leaky_relu", "tanh"])
                )
                if act == "clamp":
                    y = b.clamp(y, min_value=0.0, max_value=0.5)
                elif act == "leaky_relu":
                    y = b.leaky_relu(y, alpha=0.1)
                else:
                    y = getattr(b, act)(y)
            elif kind == "residual":
                same = [v for v, s in values if s == shape]
                y = b.add(y, same[int(r.integers(len(same)))])
            elif kind == "chmul":
                cshape = [c] if self.nhwc else [c, 1, 1]
                y = b.mul(y, b.constant(self._const((i, "c"), cshape)))
            elif kind == "scalar":
                y = b.add(b.constant(self._const((i, "k"), [1])), y)
            elif kind == "sub_x" and shape == self.input_shape:
                y = b.sub(x, y)
            values.append((y, list(shape)))
        self.output_shape = shape
        return y


@contextlib.contextmanager
def pass_settings(passes, memory_plan):
    """WEBNN_PASSES / WEBNN_MEMORY_PLAN (read when a graph is built) for the enclosed builds."""
    old = {k: os.environ.get(k) for k in ("WEBNN_PASSES", "WEBNN_MEMORY_PLAN")}
    os.environ["WEBNN_PASSES"] = passes
    os.environ["WEBNN_MEMORY_PLAN"] = memory_plan
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _run(spec, backend, passes, memory_plan, x):
    with pass_settings(passes, memory_plan):
        ctx = _context(backend)
        b = ctx.create_graph_builder()
        graph = b.build({"y": spec.build(b, b.input("x", spec.input_shape, "float32"))})
    return ctx.compute(graph, {"x": x})["y"], graph.compile_stats


@pytest.mark.parametrize("nhwc", [False, True], ids=["nchw", "nhwc"])
@pytest.mark.parametrize("seed", range(12))
def test_random_cnn(seed, nhwc):
    spec = RandomCnn(seed, nhwc)
    x = np.random.default_rng(seed + 100).uniform(-2, 2, spec.input_shape).astype(np.float32)
    want, ref_stats = _run(spec, "reference", "all", "all", x)
    got, stats = _run(spec, "cpu", "all", "all", x)
    assert ref_stats["nodes_after"] == ref_stats["nodes_before"]
    assert sum(stats["passes"].values()) > 0
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * (1 + np.abs(want).max()))
    unfused, _ = _run(spec, "cpu", UNFUSED, "none", x)
    np.testing.assert_array_equal(got, unfused)
    no_plan, _ = _run(spec, "cpu", "all", "none", x)
    np.testing.assert_array_equal(got, no_plan)


class RandomDag:
    """A head (conv2d NCHW/NHWC, convTranspose2d, matmul, gemm, or an element-wise op on the
    input) followed by a random DAG of element-wise ops whose operands are earlier values of the
    group (read several times, like x * clamp(x + 3, 0, 6) / 6), the input, or broadcast
    constants; sometimes a value is also read by a node that cannot join (reduceMean)."""

    HEADS = ("conv_nchw", "conv_nhwc", "conv_transpose", "matmul", "gemm", "elementwise")

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.head = self.HEADS[seed % len(self.HEADS)]
        big = seed % 4 == 0  # several GEMM blocks, chunks and threads
        c = int(self.rng.integers(17, 70)) if big else int(self.rng.integers(2, 9))
        hw = int(self.rng.integers(9, 24)) if big else int(self.rng.integers(3, 8))
        if self.head in ("matmul", "gemm"):
            self.input_shape = [hw * 3, c]
        elif self.head == "conv_nhwc":
            self.input_shape = [1, hw, hw, c]
        else:
            self.input_shape = [1, c, hw, hw]
        self.n_steps = int(self.rng.integers(2, 14))
        self.seed = seed

    def build(self, b, x):
        r = np.random.default_rng(self.seed + 1)

        def const(*shape, lo=-1.0, hi=1.0):
            return b.constant(r.uniform(lo, hi, shape).astype(np.float32))

        s = self.input_shape
        if self.head == "conv_nchw":
            v = b.conv2d(x, const(s[1] + 3, s[1], 3, 3, lo=-0.4, hi=0.4), padding=[1, 1, 1, 1])
            shape, caxis = [1, s[1] + 3, s[2], s[3]], 1
        elif self.head == "conv_nhwc":
            w = const(s[3] + 2, 3, 3, s[3], lo=-0.4, hi=0.4)
            v = b.conv2d(x, w, padding=[1, 1, 1, 1], input_layout="nhwc", filter_layout="ohwi")
            shape, caxis = [1, s[1], s[2], s[3] + 2], 3
        elif self.head == "conv_transpose":
            v = b.conv_transpose2d(x, const(s[1], 3, 2, 2, lo=-0.4, hi=0.4), strides=[2, 2])
            shape, caxis = [1, 3, 2 * s[2], 2 * s[3]], 1
        elif self.head == "matmul":
            v = b.matmul(x, const(s[1], 11, lo=-0.4, hi=0.4))
            shape, caxis = [s[0], 11], 1
        elif self.head == "gemm":
            v = b.gemm(x, const(s[1], 13, lo=-0.4, hi=0.4), c=const(13), alpha=0.5)
            shape, caxis = [s[0], 13], 1
        else:
            v = b.mul(x, const(1))
            shape, caxis = list(s), 1
        values = [v]
        same_as_x = shape == s
        for _ in range(self.n_steps):
            kind = str(r.choice(["unary", "unary", "binary", "binary", "binary", "broadcast"]))
            a = values[int(r.integers(len(values)))]
            if kind == "unary":
                act = str(r.choice(["relu", "clamp", "hard_swish", "sigmoid", "neg", "abs"]))
                if act == "clamp":
                    v = b.clamp(a, min_value=0.0, max_value=6.0)
                else:
                    v = getattr(b, act)(a)
            elif kind == "binary":
                other = values[int(r.integers(len(values)))]
                if same_as_x and r.random() < 0.2:
                    other = x
                op = str(r.choice(["add", "sub", "mul", "max", "min"]))
                v = getattr(b, op)(*((a, other) if r.random() < 0.5 else (other, a)))
            else:
                cshape = [1] * len(shape)
                cshape[caxis] = shape[caxis]
                if r.random() < 0.3:
                    cshape = [1]
                k = const(*cshape, lo=0.5, hi=1.5)
                op = str(r.choice(["add", "mul", "div", "sub"]))
                v = getattr(b, op)(*((a, k) if r.random() < 0.5 else (k, a)))
            values.append(v)
        if r.random() < 0.3:
            # A value also read outside the group: the group must end before it.
            side = values[int(r.integers(len(values)))]
            m = b.reduce_mean(side, axes=[caxis], keep_dimensions=True)
            values.append(b.add(values[-1], m))
        return b.add(values[-1], values[int(r.integers(len(values)))])


@pytest.mark.parametrize("seed", range(36))
def test_random_elementwise_dag_after_head(seed):
    spec = RandomDag(seed)
    x = np.random.default_rng(seed + 200).uniform(-3, 3, spec.input_shape).astype(np.float32)
    want, _ = _run(spec, "reference", "all", "all", x)
    got, stats = _run(spec, "cpu", "all", "all", x)
    assert stats["passes"]["epilogue_fusion"] > 0
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * (1 + np.abs(want).max()))
    unfused, _ = _run(spec, "cpu", UNFUSED, "none", x)
    np.testing.assert_array_equal(got, unfused)
    no_plan, _ = _run(spec, "cpu", "all", "none", x)
    np.testing.assert_array_equal(got, no_plan)


def test_decomposed_hard_swish_fuses_into_the_conv():
    """ONNX's hardSwish, x * clip(x + 3, 0, 6) / 6, then a per-channel mul and add: x is read
    twice, and the whole group runs in the conv's epilogue."""
    rng = np.random.default_rng(5)
    w = rng.uniform(-0.3, 0.3, [16, 8, 3, 3]).astype(np.float32)
    s = rng.uniform(0.5, 1.5, [1, 16, 1, 1]).astype(np.float32)
    o = rng.uniform(-1, 1, [1, 16, 1, 1]).astype(np.float32)

    def fn(b, x):
        y = b.conv2d(x, b.constant(w), padding=[1, 1, 1, 1])
        three, six = b.constant(np.float32(3)), b.constant(np.float32(6))
        t = b.div(b.mul(y, b.clamp(b.add(y, three), min_value=0.0, max_value=6.0)), six)
        return b.add(b.mul(t, b.constant(s)), b.constant(o))

    spec = _spec_from([1, 8, 20, 20], fn)
    x = rng.uniform(-3, 3, spec.input_shape).astype(np.float32)
    want, _ = _run(spec, "reference", "all", "all", x)
    got, stats = _run(spec, "cpu", "all", "all", x)
    assert stats["ops_after"].get("add", 0) == 0 and stats["ops_after"].get("mul", 0) == 0
    assert stats["fused_steps"] == 6
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    unfused, _ = _run(spec, "cpu", UNFUSED, "none", x)
    np.testing.assert_array_equal(got, unfused)


def test_conv_bn_act_block_is_fused_and_planned():
    b = _context("cpu").create_graph_builder()
    rng = np.random.default_rng(0)
    x = b.input("x", [1, 8, 10, 10], "float32")

    def const(*shape):
        return b.constant(rng.uniform(0.5, 1.5, shape).astype(np.float32))

    y = x
    for _ in range(3):
        y = b.conv2d(y, const(8, 8, 3, 3), padding=[1, 1, 1, 1])
        y = b.batch_normalization(y, const(8), const(8), scale=const(8), bias=const(8))
        y = b.hard_swish(y)
    y = b.add(y, x)
    graph = b.build({"y": y})
    stats = graph.compile_stats
    assert stats["nodes_before"] == 10
    # x to NHWC (read by the first conv and the residual add), three convs with hard_swish
    # (and the add) fused, back to NCHW.
    assert stats["nodes_after"] == 5
    assert stats["passes"]["batch_norm_folding"] == 3
    assert stats["passes"]["epilogue_fusion"] == 4
    # Four intermediates of 8*10*10 floats; the first and third conv outputs share bytes.
    assert stats["unshared_bytes"] == 4 * 3200
    assert stats["arena_bytes"] == 3 * 3200


@pytest.mark.parametrize("k,pads", [(2, [0, 0, 0, 0]), (4, [1, 1, 1, 1]), (3, [1, 0, 0, 1])])
def test_conv_transpose_head_stays_nhwc(k, pads):
    """A DBNet-style head on NCHW data: conv, batch-norm, relu, two stride-2 convTranspose2d
    (the last to one channel), sigmoid. Layout assignment runs the transposed convolutions on
    NHWC too, so only the graph's input and output are transposed (the output's, of one
    channel, moves no byte: a reshape)."""
    rng = np.random.default_rng(k)
    c = 19

    def fn(b, x):
        r = np.random.default_rng(k + 1)  # the same constants in every build

        def const(*shape, lo=-0.4, hi=0.4):
            return b.constant(r.uniform(lo, hi, shape).astype(np.float32))

        def bn(y, ch):
            return b.batch_normalization(
                y, const(ch), const(ch, lo=0.5, hi=2), scale=const(ch), bias=const(ch)
            )

        opts = {"strides": [2, 2], "padding": pads}
        y = b.relu(bn(b.conv2d(x, const(c, 5, 3, 3), padding=[1, 1, 1, 1]), c))
        y = b.relu(bn(b.conv_transpose2d(y, const(c, c, k, k), bias=const(c), **opts), c))
        return b.sigmoid(b.conv_transpose2d(y, const(c, 1, k, k), **opts))

    spec = _spec_from([1, 5, 9, 11], fn)
    x = rng.uniform(-2, 2, spec.input_shape).astype(np.float32)
    want, _ = _run(spec, "reference", "all", "all", x)
    got, stats = _run(spec, "cpu", "all", "all", x)
    assert stats["ops_after"].get("transpose", 0) == 1
    assert stats["ops_after"].get("reshape", 0) == 1
    # Both convTranspose2d nodes write NHWC ([1, h, w, channels]).
    b = _context("cpu").create_graph_builder()
    graph = b.build({"y": spec.build(b, b.input("x", spec.input_shape, "float32"))})
    graph.set_profiling(True)
    _context("cpu").compute(graph, {"x": x})
    shapes = [n["shape"] for n in graph.profile["nodes"] if n["op"].startswith("convTranspose")]
    assert [s[3] for s in shapes] == [c, 1] and len(shapes) == 2
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    unfused, _ = _run(spec, "cpu", UNFUSED, "none", x)
    np.testing.assert_array_equal(got, unfused)
    nchw, _ = _run(spec, "cpu", "constant_folding,batch_norm_folding", "none", x)
    np.testing.assert_allclose(got, nchw, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("act", ["relu", "hard_swish"])
@pytest.mark.parametrize(
    "out_c,k,tail", [(16, 1, None), (24, 3, "add"), (40, 3, None), (13, 5, "relu")]
)
def test_conv_activation_in_gemm_stores_keeps_bits(act, out_c, k, tail):
    """relu / hardSwish right after an implicit-GEMM conv run in the micro-kernel's stores
    (full and partial tiles, with and without bias, steps after them): the same bits as the
    unfused graph, NaN, signed zeros and the breakpoints included."""
    rng = np.random.default_rng(out_c + k)

    def fn(b, x):
        r = np.random.default_rng(5)

        def const(*shape):
            return b.constant(r.uniform(-0.6, 0.6, shape).astype(np.float32))

        y = b.conv2d(x, const(out_c, 6, k, k), bias=const(out_c), padding=[k // 2] * 4)
        y = getattr(b, act)(y)
        if tail == "add":
            y = b.add(y, const(out_c, 1, 1))
        elif tail == "relu":
            y = b.relu(b.neg(y))
        return y

    spec = _spec_from([2, 6, 9, 7], fn)
    x = rng.uniform(-3, 3, spec.input_shape).astype(np.float32)
    x[0, 0, 0, :4] = [np.nan, -0.0, 0.0, np.inf]
    got, _ = _run(spec, "cpu", "all", "all", x)
    unfused, _ = _run(spec, "cpu", UNFUSED, "none", x)
    np.testing.assert_array_equal(got, unfused)  # NaN in the same places, same bits elsewhere
    assert np.array_equal(
        got.view(np.uint32)[~np.isnan(got)], unfused.view(np.uint32)[~np.isnan(got)]
    )
    want, _ = _run(spec, "reference", "all", "all", x)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("slope_shape", [(11, 1, 1), (1, 11, 1, 1), (1,)])
def test_prelu_and_pools_stay_nhwc(slope_shape):
    """An MTCNN-style stack on NCHW data: conv, prelu with a per-channel (or scalar) slope,
    max pool, conv, prelu. Layout assignment sinks the transposes through prelu (its slope
    permuted once) and the pool, so only the graph's input and output are transposed; values
    are the reference's (prelu and pooling are exact, the convolutions sum in another order)."""
    rng = np.random.default_rng(len(slope_shape))

    def fn(b, x):
        r = np.random.default_rng(3)  # the same constants in every build

        def const(*shape, lo=-0.5, hi=0.5):
            return b.constant(r.uniform(lo, hi, shape).astype(np.float32))

        y = b.conv2d(x, const(11, 3, 3, 3), bias=const(11))
        y = b.prelu(y, const(*slope_shape, lo=-0.5, hi=0.8))
        y = b.max_pool2d(y, window_dimensions=[3, 3], strides=[2, 2], output_shape_rounding="ceil")
        y = b.conv2d(y, const(11, 11, 3, 3), padding=[1, 1, 1, 1])
        return b.prelu(y, const(*slope_shape, lo=-0.5, hi=0.8))

    spec = _spec_from([2, 3, 13, 15], fn)
    x = rng.uniform(-2, 2, spec.input_shape).astype(np.float32)
    want, _ = _run(spec, "reference", "all", "all", x)
    got, stats = _run(spec, "cpu", "all", "all", x)
    assert stats["ops_after"].get("transpose", 0) == 2
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    unfused, _ = _run(spec, "cpu", UNFUSED, "none", x)
    np.testing.assert_allclose(got, unfused, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("cut", ["split", "split_list", "slice", "strided_slice"])
def test_c2f_split_and_slice_stay_nhwc(cut):
    """A YOLOv8 C2f block on NCHW data: conv, the channels cut in two (split into halves or
    sizes, or a slice), a conv on one part, concat of the parts, conv. Layout assignment sinks
    the transposes through the split / slice (axis, starts, sizes and strides permuted), so
    only the graph's input and output are transposed."""
    rng = np.random.default_rng(len(cut))

    def fn(b, x):
        r = np.random.default_rng(5)

        def const(*shape, lo=-0.5, hi=0.5):
            return b.constant(r.uniform(lo, hi, shape).astype(np.float32))

        y = b.conv2d(x, const(12, 3, 3, 3), bias=const(12), padding=[1, 1, 1, 1])
        if cut == "split":
            first, second = b.split(y, 2, axis=1)
        elif cut == "split_list":
            first, second = b.split(y, [5, 7], axis=1)
        elif cut == "slice":
            first = b.slice(y, [0, 0, 0, 0], [2, 5, 13, 15])
            second = b.slice(y, [0, 5, 0, 0], [2, 7, 13, 15])
        else:  # every other channel and row
            first = b.slice(y, [0, 0, 0, 0], [2, 12, 13, 15], strides=[1, 2, 2, 1])
            second = b.slice(y, [0, 1, 0, 0], [2, 11, 13, 15], strides=[1, 2, 2, 1])
        n1 = 5 if cut in ("split_list", "slice") else 6
        n2 = 12 - n1
        z = b.relu(b.conv2d(second, const(n2, n2, 3, 3), padding=[1, 1, 1, 1]))
        y = b.concat([first, second, z], 1)
        return b.conv2d(y, const(8, n1 + 2 * n2, 1, 1))

    spec = _spec_from([2, 3, 13, 15], fn)
    x = rng.uniform(-2, 2, spec.input_shape).astype(np.float32)
    want, _ = _run(spec, "reference", "all", "all", x)
    got, stats = _run(spec, "cpu", "all", "all", x)
    assert stats["ops_after"].get("transpose", 0) == 2
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    unfused, _ = _run(spec, "cpu", UNFUSED, "none", x)
    np.testing.assert_allclose(got, unfused, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("k,stride,keeps_nchw", [(2, 2, True), (3, 3, True), (4, 2, False)])
def test_conv_transpose_to_few_channels_layout(k, stride, keeps_nchw):
    """An NCHW convTranspose2d to 3 channels stays NCHW when its taps never overlap (the cpu
    planar kernel runs it with the pixels as N); overlapping taps take the NHWC kernel."""
    rng = np.random.default_rng(k)
    w = rng.uniform(-0.4, 0.4, [20, 3, k, k]).astype(np.float32)
    bias = rng.uniform(-1, 1, [3]).astype(np.float32)

    def fn(b, x):
        y = b.conv_transpose2d(x, b.constant(w), bias=b.constant(bias), strides=[stride] * 2)
        return b.relu(y)

    spec = _spec_from([1, 20, 7, 9], fn)
    x = rng.uniform(-2, 2, spec.input_shape).astype(np.float32)
    want, _ = _run(spec, "reference", "all", "all", x)
    got, stats = _run(spec, "cpu", "all", "all", x)
    assert stats["ops_after"].get("transpose", 0) == (0 if keeps_nchw else 2)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    unfused, _ = _run(spec, "cpu", UNFUSED, "none", x)
    np.testing.assert_array_equal(got, unfused)


def test_unknown_pass_name_is_a_clear_error():
    os.environ["WEBNN_PASSES"] = "dead_code,no_such_pass"
    try:
        b = _context("cpu").create_graph_builder()
        x = b.input("x", [2], "float32")
        with pytest.raises(Exception, match="no_such_pass"):
            b.build({"y": b.relu(x)})
    finally:
        os.environ.pop("WEBNN_PASSES")


@pytest.mark.parametrize("perm", [[0, 2, 3, 1], [0, 3, 1, 2]])
@pytest.mark.parametrize(
    "shape",
    [
        [1, 3, 48, 19],
        [2, 17, 5, 33],
        [1, 1, 1, 7],
        [3, 64, 9, 1],
        [2, 5, 40, 417],
        [2, 1, 161, 203],  # one channel: NCHW -> NHWC is a copy (and NHWC [2, 161, 203, 1] back)
        [1, 161, 203, 1],
    ],
)
def test_layout_transposes_match_numpy(perm, shape):
    """The cpu kernel of the NCHW <-> NHWC transposes that layout assignment leaves."""
    x = np.random.default_rng(len(shape) + shape[1]).standard_normal(shape).astype(np.float32)
    ctx = _context("cpu")
    b = ctx.create_graph_builder()
    graph = b.build({"y": b.transpose(b.input("x", shape, "float32"), permutation=perm)})
    np.testing.assert_array_equal(ctx.compute(graph, {"x": x})["y"], x.transpose(perm))


def _spec_from(shape, fn):
    class Spec:
        input_shape = shape

        def build(self, b, x):
            return fn(b, x)

    return Spec()


@pytest.mark.parametrize(
    "name",
    ["softmax_axis_1", "softmax_axis_0", "mask_broadcast", "both_broadcast"],
)
def test_elementwise_head_whose_operand_is_not_a_block(name):
    """A fused element-wise head (sub, mul, add) whose other operand does not broadcast into
    its output as one block of axes, e.g. x - reduceMax(x, axes=[1]) with keepDimensions
    ([2,1,4,5] in [2,3,4,5]) fused with the exp after it: the head must run on its own
    element-wise kernel with the chain after it (it used to fail to compile: "fused epilogue has
    a step without a vector kernel")."""
    rng = np.random.default_rng(7)
    mask = rng.uniform(-1, 1, [3, 1, 5]).astype(np.float32)
    col = rng.uniform(-1, 1, [2, 3, 1, 1]).astype(np.float32)

    def softmax(axis):
        def fn(b, x):
            e = b.exp(b.sub(x, b.reduce_max(x, axes=[axis], keep_dimensions=True)))
            return b.div(e, b.reduce_sum(e, axes=[axis], keep_dimensions=True))

        return fn

    builds = {
        "softmax_axis_1": softmax(1),
        "softmax_axis_0": softmax(0),
        # A [3,1,5] mask in a [2,3,4,5] value, then a chain.
        "mask_broadcast": lambda b, x: b.tanh(b.add(b.mul(x, b.constant(mask)), b.constant(1.5))),
        # Neither operand has the output's shape.
        "both_broadcast": lambda b, x: b.relu(
            b.sub(b.reduce_mean(x, axes=[3], keep_dimensions=True), b.constant(col))
        ),
    }
    spec = _spec_from([2, 3, 4, 5], builds[name])
    x = rng.uniform(-2, 2, spec.input_shape).astype(np.float32)
    want, _ = _run(spec, "reference", "all", "all", x)
    got, stats = _run(spec, "cpu", "all", "all", x)
    assert stats["passes"]["epilogue_fusion"] > 0
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    unfused, _ = _run(spec, "cpu", UNFUSED, "none", x)
    np.testing.assert_array_equal(got, unfused)


def test_integer_filter_conv_is_not_folded():
    """A conv with a whole-number filter (webnn.onnx's QLinearConv: exact accumulation of
    shifted integers, then a per-channel multiplier and a rounding quantizeLinear) keeps its
    multiplier: folded into the filter it made the accumulation inexact, and the rounding
    turned that into whole quantization steps. A float filter is still folded."""
    rng = np.random.default_rng(3)
    x = rng.integers(-128, 128, [1, 8, 9, 9]).astype(np.float32)
    m = rng.uniform(1e-4, 3e-4, [1, 16, 1, 1]).astype(np.float32)

    def spec(w):
        def fn(b, x):
            acc = b.conv2d(x, b.constant(w), padding=[1, 1, 1, 1])
            return b.round_even(b.mul(acc, b.constant(m)))

        return _spec_from([1, 8, 9, 9], fn)

    w_int = rng.integers(-127, 128, [16, 8, 3, 3]).astype(np.float32)
    want, _ = _run(spec(w_int), "reference", "all", "all", x)
    got, stats = _run(spec(w_int), "cpu", "all", "all", x)
    assert stats["passes"].get("batch_norm_folding", 0) == 0
    np.testing.assert_array_equal(got, want)
    _, stats = _run(spec(w_int + 0.5), "cpu", "all", "all", x)
    assert stats["passes"]["batch_norm_folding"] == 1
