"""The cpu backend's fast float32 kernels against the reference backend.

Random shapes and options per kernel (edge sizes 1, sizes that are not a multiple of the
vector width, long reductions), compared with tolerances derived from the operation: exact
where the float32 result is exact, a few ULP for element-wise math, and for sums of K
products the classic bound K * eps * sum(|a| * |b|) (any summation order meets it; the
reference sums in double and rounds once).

The last tests rerun this file in subprocesses with the AVX2 and generic kernels
(WEBNN_CPU_ISA) and with 1 and 3 threads (WEBNN_NUM_THREADS).
"""

import os

import numpy as np
import pytest
import rerun
import webnn

EPS = float(np.finfo(np.float32).eps)

_CONTEXTS = {}


def _context(backend):
    if backend not in _CONTEXTS:
        _CONTEXTS[backend] = webnn.ML().create_context(accelerated=False, backend=backend)
    return _CONTEXTS[backend]


def _run(backend, make, inputs, constants=None):
    """Builds make(builder, operands) (inputs as graph inputs, constants as constants)."""
    builder = _context(backend).create_graph_builder()
    operands = {k: builder.input(k, list(v.shape), "float32") for k, v in inputs.items()}
    for k, v in (constants or {}).items():
        operands[k] = builder.constant(np.ascontiguousarray(v, dtype=np.float32))
    graph = builder.build({"y": make(builder, operands)})
    return _context(backend).compute(graph, inputs)["y"]


def _both(make, inputs, constants=None):
    return _run("cpu", make, inputs, constants), _run("reference", make, inputs, constants)


def _ordered(a):
    bits = a.view(np.int32).astype(np.int64)
    return np.where(bits < 0, -(bits & 0x7FFFFFFF), bits)


def assert_ulp(actual, expected, max_ulp):
    assert actual.shape == expected.shape and actual.dtype == np.float32
    same = (actual == expected) | (np.isnan(actual) & np.isnan(expected))
    ulps = np.where(same, 0, np.abs(_ordered(actual) - _ordered(expected)))
    worst = int(ulps.max(initial=0))
    i = int(np.argmax(ulps)) if ulps.size else 0
    assert worst <= max_ulp, (
        f"{worst} ULP > {max_ulp} at flat index {i}: got {actual.flat[i]!r}, "
        f"expected {expected.flat[i]!r}"
    )


def assert_within(actual, expected, bound):
    """|actual - expected| <= bound element-wise (plus half an ULP of the result)."""
    assert actual.shape == expected.shape and actual.dtype == np.float32
    err = np.abs(actual.astype(np.float64) - expected.astype(np.float64))
    limit = bound + np.abs(expected.astype(np.float64)) * EPS / 2
    same = (actual == expected) | (np.isnan(actual) & np.isnan(expected))
    bad = ~(same | (err <= limit))
    assert not bad.any(), (
        f"{int(bad.sum())} of {bad.size} elements off; first at {int(np.argmax(bad))}: "
        f"error {err.flat[np.argmax(bad)]:.3g} > bound {limit.flat[np.argmax(bad)]:.3g}"
    )


def _data(rng, shape):
    return rng.uniform(-2, 2, size=shape).astype(np.float32)


# ---- matmul and gemm ------------------------------------------------------------------------


def _dot_bound(k, magnitude):
    # |fl(sum) - sum| <= gamma_k * sum |a b|, gamma_k ~ k eps; +2 covers alpha/beta/bias steps.
    return (k + 2) * EPS * magnitude


MATMUL_SHAPES = [
    ([1, 1], [1, 1]),
    ([1, 7], [7, 1]),
    ([3, 5], [5, 7]),
    ([6, 64], [64, 64]),
    ([7, 65], [65, 129]),
    ([13, 1], [1, 33]),
    ([2, 2048], [2048, 17]),  # long K: several passes over K
    ([130, 1537], [1537, 70]),
    ([2, 3, 5, 9], [9, 66]),  # A's batch folds into rows
    ([3, 1, 5, 37], [4, 37, 66]),  # broadcast batches
    ([5, 9], [2, 3, 9, 20]),  # A broadcast over B's batches
    ([2, 1, 4, 3], [1, 5, 3, 2]),
]


@pytest.mark.parametrize("constant_b", [False, True])
@pytest.mark.parametrize("a_shape,b_shape", MATMUL_SHAPES)
def test_matmul(a_shape, b_shape, constant_b):
    rng = np.random.default_rng(len(a_shape) * 100 + a_shape[-1])
    a, b = _data(rng, a_shape), _data(rng, b_shape)
    inputs, constants = ({"a": a}, {"b": b}) if constant_b else ({"a": a, "b": b}, {})
    got, want = _both(lambda g, o: g.matmul(o["a"], o["b"]), inputs, constants)
    magnitude = np.matmul(np.abs(a).astype(np.float64), np.abs(b).astype(np.float64))
    assert_within(got, want, _dot_bound(a_shape[-1], magnitude))


@pytest.mark.parametrize("seed", range(24))
def test_gemm(seed):
    rng = np.random.default_rng(seed)
    m, k, n = (int(v) for v in rng.choice([1, 2, 5, 6, 17, 64, 65, 300, 700], size=3))
    a_t, b_t = bool(rng.integers(2)), bool(rng.integers(2))
    alpha = float(rng.choice([1.0, 0.5, -2.25]))
    beta = float(rng.choice([1.0, 0.0, 3.0]))
    c_shape = [[], [n], [1, n], [m, 1], [m, n], None][int(rng.integers(6))]
    a = _data(rng, [k, m] if a_t else [m, k])
    b = _data(rng, [n, k] if b_t else [k, n])
    inputs = {"a": a}
    constants = {}
    (constants if rng.integers(2) else inputs)["b"] = b
    options = {"alpha": alpha, "beta": beta, "a_transpose": a_t, "b_transpose": b_t}
    c = None
    if c_shape is not None:
        c = _data(rng, c_shape)
        inputs["c"] = c

    def make(g, o):
        extra = {"c": o["c"]} if c is not None else {}
        return g.gemm(o["a"], o["b"], **options, **extra)

    got, want = _both(make, inputs, constants)
    a2 = (a.T if a_t else a).astype(np.float64)
    b2 = (b.T if b_t else b).astype(np.float64)
    magnitude = abs(alpha) * np.abs(a2) @ np.abs(b2)
    if c is not None:
        magnitude = magnitude + abs(beta) * np.broadcast_to(np.abs(c), (m, n))
    assert_within(got, want, _dot_bound(k, magnitude))


# ---- conv2d -------------------------------------------------------------------------------


def _conv_case(rng):
    nhwc = bool(rng.integers(2))
    kind = rng.choice(["dense", "grouped", "depthwise"], p=[0.45, 0.2, 0.35])
    n = int(rng.integers(1, 3))
    kh, kw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    stride = [int(rng.integers(1, 3)), int(rng.integers(1, 3))]
    dilation = [int(rng.integers(1, 3)), int(rng.integers(1, 3))]
    pads = [int(v) for v in rng.integers(0, 3, size=4)]
    while True:
        h, w = int(rng.integers(1, 14)), int(rng.integers(1, 14))
        if (
            h + pads[0] + pads[1] >= (kh - 1) * dilation[0] + 1
            and w + pads[2] + pads[3] >= (kw - 1) * dilation[1] + 1
        ):
            break
    if kind == "depthwise":
        cin = int(rng.integers(1, 40))
        groups, cout = cin, cin
    elif kind == "grouped":
        groups = int(rng.integers(2, 4))
        cin, cout = groups * int(rng.integers(1, 6)), groups * int(rng.integers(1, 40))
    else:
        groups, cin, cout = 1, int(rng.integers(1, 20)), int(rng.integers(1, 140))
    layout = str(rng.choice(["oihw", "hwio", "ohwi", "ihwo"]))
    sizes = {"o": cout, "i": cin // groups, "h": kh, "w": kw}
    filt = _data(rng, [sizes[c] for c in layout])
    x = _data(rng, [n, h, w, cin] if nhwc else [n, cin, h, w])
    bias = _data(rng, [cout]) if rng.integers(2) else None
    options = {
        "strides": stride,
        "dilations": dilation,
        "padding": pads,
        "groups": groups,
        "input_layout": "nhwc" if nhwc else "nchw",
        "filter_layout": layout,
    }
    return x, filt, bias, options, (cin // groups) * kh * kw


def _check_conv(x, filt, bias, options, k, constant_filter=True, op="conv2d"):
    """conv2d (or `op`, e.g. conv_transpose2d) on cpu against the reference, within the bound
    for sums of k products."""
    inputs, constants = {"x": x}, {}
    (constants if constant_filter else inputs)["w"] = filt
    if bias is not None:
        constants["b"] = bias

    def make(g, o):
        extra = {"bias": o["b"]} if bias is not None else {}
        return getattr(g, op)(o["x"], o["w"], **options, **extra)

    got, want = _both(make, inputs, constants)
    # sum |x| |w| + |bias| by the reference itself.
    mag_constants = {"w": np.abs(filt)}
    if bias is not None:
        mag_constants["b"] = np.abs(bias)
    magnitude = _run("reference", make, {"x": np.abs(x)}, mag_constants)
    assert_within(got, want, _dot_bound(k, magnitude.astype(np.float64)))


@pytest.mark.parametrize("seed", range(60))
def test_conv2d_random(seed):
    rng = np.random.default_rng(1000 + seed)
    x, filt, bias, options, k = _conv_case(rng)
    _check_conv(x, filt, bias, options, k, constant_filter=bool(seed % 4))


@pytest.mark.parametrize("nhwc", [False, True])
@pytest.mark.parametrize("kernel", [1, 3])
def test_conv2d_long_reduction(nhwc, kernel):
    # 600 input channels: each tap's channels are split into several passes over K.
    rng = np.random.default_rng(kernel)
    x = _data(rng, [1, 5, 6, 600] if nhwc else [1, 600, 5, 6])
    filt = _data(rng, [70, 600, kernel, kernel])
    options = {"padding": [1, 1, 1, 1], "input_layout": "nhwc" if nhwc else "nchw"}
    _check_conv(x, filt, _data(rng, [70]), options, 600 * kernel * kernel)


@pytest.mark.parametrize("nhwc", [False, True])
def test_conv2d_few_channels_large_image(nhwc):
    # 3 input channels over 300 x 300: the per-tap pointer table would outgrow the input, so
    # tiles build theirs as they go.
    rng = np.random.default_rng(7)
    x = _data(rng, [1, 300, 300, 3] if nhwc else [1, 3, 300, 300])
    filt = _data(rng, [16, 3, 3, 3])
    options = {"padding": [1, 1, 1, 1], "input_layout": "nhwc" if nhwc else "nchw"}
    _check_conv(x, filt, _data(rng, [16]), options, 27)


@pytest.mark.parametrize("nhwc", [False, True])
@pytest.mark.parametrize("stride,dilation", [(1, 1), (2, 1), (1, 2), (3, 2)])
def test_depthwise_conv2d(nhwc, stride, dilation):
    rng = np.random.default_rng(stride * 10 + dilation)
    c = 37
    x = _data(rng, [2, 23, 19, c] if nhwc else [2, c, 23, 19])
    filt = _data(rng, [c, 1, 3, 3])
    options = {
        "strides": [stride, stride],
        "dilations": [dilation, dilation],
        "padding": [1, 2, 2, 1],
        "groups": c,
        "input_layout": "nhwc" if nhwc else "nchw",
    }
    _check_conv(x, filt, _data(rng, [c]), options, 9)


# ---- element-wise ---------------------------------------------------------------------------

BINARY_SHAPES = [
    ([1], [1]),
    ([17], [17]),
    ([70001], [70001]),  # several parallel chunks
    ([5, 17], [1]),
    ([1], [5, 17]),
    ([4, 33], [33]),
    ([4, 33], [4, 1]),
    ([2, 3, 4, 5], [3, 1, 5]),
    ([2, 1, 4, 1], [1, 3, 1, 5]),
    ([2, 64, 3, 3], [1, 64, 1, 1]),
    ([3, 1], [3, 1]),
]


def _with_specials(rng, shape):
    a = rng.standard_normal(shape).astype(np.float32) * 10
    flat = a.reshape(-1)
    specials = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, 3.4e38], dtype=np.float32)
    picks = rng.random(flat.size) < 0.05
    flat[picks] = rng.choice(specials, size=int(picks.sum()))
    return a


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "max", "min"])
@pytest.mark.parametrize("a_shape,b_shape", BINARY_SHAPES)
def test_binary(op, a_shape, b_shape):
    rng = np.random.default_rng(len(a_shape) + a_shape[-1])
    inputs = {"a": _with_specials(rng, a_shape), "b": _with_specials(rng, b_shape)}
    got, want = _both(lambda g, o: getattr(g, op)(o["a"], o["b"]), inputs)
    # Double rounding (the reference computes in double) costs at most one ULP.
    assert_ulp(got, want, 0 if op in ("max", "min") else 1)


UNARY = [
    ("relu", {}, 0),
    ("identity", {}, 0),
    ("neg", {}, 0),
    ("abs", {}, 0),
    ("floor", {}, 0),
    ("ceil", {}, 0),
    ("round_even", {}, 0),
    ("sqrt", {}, 0),
    ("reciprocal", {}, 0),
    ("clamp", {"min_value": -1.5, "max_value": 2.25}, 0),
    ("clamp", {"min_value": 0.0}, 0),
    ("leaky_relu", {"alpha": 0.1}, 1),
    ("linear", {"alpha": 0.1, "beta": -1.0}, 1),
    ("hard_sigmoid", {"alpha": 0.3, "beta": 0.4}, 1),
    ("hard_swish", {}, 1),
    ("exp", {}, 2),
    ("sigmoid", {}, 3),
    ("tanh", {}, 2),
    # float32 (test_cpu_transcendental.py and test_cpu_elementary.py check them against exact
    # values; sin/cos/tan evaluate in double after the reduction).
    ("elu", {"alpha": 0.7}, 2),
    ("gelu", {}, 8),
    ("erf", {}, 4),
    ("sin", {}, 1),
    ("cos", {}, 1),
    ("tan", {}, 1),
    ("log", {}, 1),
    ("softplus", {}, 2),
    # The reference's operations: exact.
    ("softsign", {}, 0),
    ("sign", {}, 0),
]


@pytest.mark.parametrize("size", [1, 15, 16, 17, 1000, 70001])
@pytest.mark.parametrize(
    "op,options,max_ulp", UNARY, ids=[u[0] + str(i) for i, u in enumerate(UNARY)]
)
def test_unary(op, options, max_ulp, size):
    rng = np.random.default_rng(size)
    x = _with_specials(rng, [size])
    x[: size // 2] = rng.uniform(-120, 120, size // 2)  # exp's overflow and subnormal ranges
    got, want = _both(lambda g, o: getattr(g, op)(o["x"], **options), {"x": x})
    if op == "gelu":
        # The reference's 0.5 x (1 + erf(x / sqrt 2)) cancels below x ~ -5.5 (in double); the
        # float32 kernel is exact there (checked in test_cpu_transcendental.py).
        keep = ~(x < -5)
        got, want = got[keep], want[keep]
    assert_ulp(got, want, max_ulp)


@pytest.mark.parametrize(
    "shape,axis",
    [([1, 1], 1), ([3, 17], 1), ([4, 1000], 1), ([2, 3, 70], 2), ([5, 33, 7], 1), ([70, 3], 0)],
)
def test_softmax(shape, axis):
    rng = np.random.default_rng(shape[-1])
    x = (rng.standard_normal(shape) * 20).astype(np.float32)
    got, want = _both(lambda g, o: g.softmax(o["x"], axis=axis), {"x": x})
    assert_ulp(got, want, 4)


def test_softmax_special_rows():
    x = np.array(
        [[1.0, np.nan, 2.0], [np.inf, 1.0, 0.0], [-np.inf, -np.inf, -np.inf], [-np.inf, 0, 1]],
        dtype=np.float32,
    )
    got, want = _both(lambda g, o: g.softmax(o["x"], axis=1), {"x": x})
    assert_ulp(got, want, 4)


# ---- pooling ------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(40))
def test_pool2d_random(seed):
    rng = np.random.default_rng(2000 + seed)
    nhwc = bool(rng.integers(2))
    method = "max_pool2d" if seed % 2 else "average_pool2d"
    c, n = int(rng.integers(1, 40)), int(rng.integers(1, 3))
    h, w = int(rng.integers(1, 15)), int(rng.integers(1, 15))
    win = [int(rng.integers(1, h + 1)), int(rng.integers(1, w + 1))]
    options = {
        "window_dimensions": win,
        "strides": [int(rng.integers(1, 3)), int(rng.integers(1, 3))],
        "dilations": [1, 1] if rng.integers(2) else [int(rng.integers(1, 3))] * 2,
        "padding": [int(v) for v in rng.integers(0, 2, size=4)],
        "layout": "nhwc" if nhwc else "nchw",
        "output_shape_rounding": "ceil" if rng.integers(2) else "floor",
    }
    reach_h = (win[0] - 1) * options["dilations"][0] + 1
    reach_w = (win[1] - 1) * options["dilations"][1] + 1
    pads = options["padding"]
    if h + pads[0] + pads[1] < reach_h or w + pads[2] + pads[3] < reach_w:
        options["dilations"] = [1, 1]
    x = _with_specials(rng, [n, h, w, c] if nhwc else [n, c, h, w])
    if method == "average_pool2d":
        # Finite and far from overflow: float sums of huge values overflow where the
        # reference's double sums do not.
        x = np.clip(np.nan_to_num(x), -100, 100)
    got, want = _both(lambda g, o: getattr(g, method)(o["x"], **options), {"x": x})
    if method == "max_pool2d":
        assert_ulp(got, want, 0)
    else:
        # A mean of up to win_h * win_w values: the sum's bound, divided by the count.
        mag = _run("reference", lambda g, o: g.average_pool2d(o["x"], **options), {"x": np.abs(x)})
        assert_within(got, want, (win[0] * win[1] + 1) * EPS * mag.astype(np.float64))


@pytest.mark.parametrize("layout", ["nchw", "nhwc"])
@pytest.mark.parametrize("method", ["global_average_pool", "global_max_pool"])
@pytest.mark.parametrize("size", [1, 7, 56])
def test_global_pool(layout, method, size):
    rng = np.random.default_rng(size)
    shape = [2, size, size, 19] if layout == "nhwc" else [2, 19, size, size]
    x = rng.standard_normal(shape).astype(np.float32)
    got, want = _both(lambda g, o: getattr(g, method)(o["x"], layout=layout), {"x": x})
    if method == "global_max_pool":
        assert_ulp(got, want, 0)
    else:
        mag = _run(
            "reference", lambda g, o: g.global_average_pool(o["x"], layout=layout), {"x": np.abs(x)}
        )
        assert_within(got, want, (size * size + 1) * EPS * mag.astype(np.float64))


@pytest.mark.parametrize("method", ["global_average_pool", "global_max_pool"])
@pytest.mark.parametrize("channels", [5, 37, 96, 200])
def test_global_pool_nhwc_one_image(method, channels):
    # One image: with several threads the channels are split into blocks of whole cache lines
    # (the last one partial); each channel still sums its pixels in order.
    rng = np.random.default_rng(channels)
    x = rng.standard_normal([1, 41, 43, channels]).astype(np.float32)
    got, want = _both(lambda g, o: getattr(g, method)(o["x"], layout="nhwc"), {"x": x})
    if method == "global_max_pool":
        assert_ulp(got, want, 0)
    else:
        mag = _run(
            "reference", lambda g, o: g.global_average_pool(o["x"], layout="nhwc"), {"x": np.abs(x)}
        )
        assert_within(got, want, (41 * 43 + 1) * EPS * mag.astype(np.float64))
    # The same channels as a per-channel sum in pixel order, in double, divided once (what
    # every split computes, and the reference).
    if method == "global_average_pool":
        acc = np.zeros(channels, np.float64)
        for row in x.reshape(-1, channels):
            acc += row.astype(np.float64)
        np.testing.assert_array_equal(got.reshape(-1), (acc / (41 * 43)).astype(np.float32))


# ---- runtime: fallbacks, dispatch in place, other ISAs and thread counts --------------------


def test_unsupported_cases_fall_back_to_reference():
    # float16 and int32 take the reference kernels; results are identical.
    rng = np.random.default_rng(0)
    for dtype in ("float16", "int32"):
        a = (rng.standard_normal([4, 5]) * 4).astype(dtype)
        b = (rng.standard_normal([5, 3]) * 4).astype(dtype)
        outs = []
        for backend in ("cpu", "reference"):
            ctx = _context(backend)
            g = ctx.create_graph_builder()
            x, y = g.input("a", [4, 5], dtype), g.input("b", [5, 3], dtype)
            op = g.matmul(x, y) if dtype == "float16" else g.add(x, g.constant(np.ones(1, dtype)))
            outs.append(
                ctx.compute(
                    g.build({"y": op}), {"a": a, "b": b} if dtype == "float16" else {"a": a}
                )["y"]
            )
        np.testing.assert_array_equal(outs[0], outs[1])


def test_dispatch_reuses_tensors_and_graph_outputs_that_alias():
    ctx = _context("cpu")
    g = ctx.create_graph_builder()
    x = g.input("x", [3, 4], "float32")
    r = g.relu(x)
    graph = g.build({"x_out": g.identity(x), "r1": r, "r2": r})
    data = np.arange(-6, 6, dtype=np.float32).reshape(3, 4)
    tx = ctx.create_tensor([3, 4], "float32", writable=True)
    outs = {
        k: ctx.create_tensor(s, "float32", readable=True)
        for k, s in (("x_out", [3, 4]), ("r1", [3, 4]), ("r2", [3, 4]))
    }
    for scale in (1.0, -2.0):
        ctx.write_tensor(tx, data * scale)
        ctx.dispatch(graph, {"x": tx}, outs)
        np.testing.assert_array_equal(ctx.read_tensor(outs["x_out"]), data * scale)
        np.testing.assert_array_equal(ctx.read_tensor(outs["r1"]), np.maximum(data * scale, 0))
        np.testing.assert_array_equal(ctx.read_tensor(outs["r2"]), np.maximum(data * scale, 0))


@pytest.mark.skipif(rerun.nested(), reason="nested")
@rerun.each_cpu_setting
def test_other_isas_and_thread_counts(env):
    # Selected at first use and per context respectively, so each needs a fresh process. A
    # machine without AVX2 falls back further; the results must hold either way.
    rerun.assert_file_passes(__file__, env)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_forked_child_runs_without_the_parents_workers():
    ctx = webnn.ML().create_context(accelerated=False, backend="cpu")
    g = ctx.create_graph_builder()
    x = g.input("x", [256, 256], "float32")
    graph = g.build({"y": g.matmul(x, x)})
    a = np.ones((256, 256), np.float32)
    assert ctx.compute(graph, {"x": a})["y"][0, 0] == 256  # starts the workers
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through its exit status
        ok = ctx.compute(graph, {"x": a})["y"][0, 0] == 256
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    assert ctx.compute(graph, {"x": a})["y"][0, 0] == 256


def test_concurrent_dispatches_share_the_context_pool():
    # A dispatch that finds the pool busy runs its tasks on its own thread; results are the same.
    import threading

    ctx = webnn.ML().create_context(accelerated=False, backend="cpu")
    rng = np.random.default_rng(3)
    graphs, feeds, expected = [], [], []
    for i in range(3):
        g = ctx.create_graph_builder()
        x = g.input("x", [64, 96], "float32")
        w = _data(rng, [96, 80 + i])
        graphs.append(g.build({"y": g.relu(g.matmul(x, g.constant(w)))}))
        feeds.append({"x": _data(rng, [64, 96])})
        expected.append(ctx.compute(graphs[i], feeds[i])["y"])
    errors = []

    def worker(i):
        for _ in range(30):
            got = ctx.compute(graphs[i], feeds[i])["y"]
            if not np.array_equal(got, expected[i]):
                errors.append(i)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
