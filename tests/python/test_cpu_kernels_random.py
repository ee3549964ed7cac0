"""The cpu backend's fast kernels for convTranspose2d, resample2d, normalizations and data
movement against the reference backend, over random shapes and options.

Tolerances as in test_cpu_backend.py: exact where the float32 result is exact (nearest
resampling, data movement), the K * eps * sum(|a| * |b|) bound for sums of K products, and a
few ULP or a stated bound otherwise. The last test reruns this file with the AVX2 and generic
kernels and with 1 and 3 threads.
"""

import numpy as np
import pytest
import rerun
from test_cpu_backend import EPS, _both, _check_conv, _data, _run, assert_within

# ---- convTranspose2d ------------------------------------------------------------------------


def _conv_transpose_case(rng):
    nhwc = bool(rng.integers(2))
    n = int(rng.integers(1, 3))
    kh, kw = int(rng.integers(1, 5)), int(rng.integers(1, 5))
    stride = [int(rng.integers(1, 4)), int(rng.integers(1, 4))]
    dilation = [int(rng.integers(1, 3)), int(rng.integers(1, 3))]
    h, w = int(rng.integers(1, 10)), int(rng.integers(1, 10))
    # Padding below the full output extent on each axis.
    pads = []
    for size, k, s, d in ((h, kh, stride[0], dilation[0]), (w, kw, stride[1], dilation[1])):
        full = (size - 1) * s + (k - 1) * d + 1
        a = int(rng.integers(0, 3))
        b = int(rng.integers(0, 3))
        while a + b >= full:
            a, b = max(0, a - 1), max(0, b - 1)
            if a == 0 and b == 0:
                break
        pads += [a, b]
    groups = int(rng.choice([1, 1, 2, 3]))
    cin = groups * int(rng.integers(1, 12))
    group_out = int(rng.integers(1, 40))
    layout = str(rng.choice(["iohw", "hwoi", "ohwi", "oihw"]))
    sizes = {"i": cin, "o": group_out, "h": kh, "w": kw}
    filt = _data(rng, [sizes[c] for c in layout])
    x = _data(rng, [n, h, w, cin] if nhwc else [n, cin, h, w])
    bias = _data(rng, [groups * group_out]) if rng.integers(2) else None
    options = {
        "strides": stride,
        "dilations": dilation,
        "padding": pads,
        "groups": groups,
        "input_layout": "nhwc" if nhwc else "nchw",
        "filter_layout": layout,
    }
    extra = int(rng.integers(3))
    if extra == 1:
        options["output_padding"] = [int(rng.integers(0, s)) for s in stride]
    elif extra == 2:
        full = [
            (h - 1) * stride[0] + (kh - 1) * dilation[0] + 1 - pads[0] - pads[1],
            (w - 1) * stride[1] + (kw - 1) * dilation[1] + 1 - pads[2] - pads[3],
        ]
        options["output_sizes"] = [f + int(rng.integers(0, s)) for f, s in zip(full, stride)]
    # Each output sums at most kh * kw taps of cin / groups channels.
    k = (cin // groups) * kh * kw
    return x, filt, bias, options, k


def _check_conv_transpose(x, filt, bias, options, k, constant_filter=True):
    _check_conv(x, filt, bias, options, k, constant_filter, op="conv_transpose2d")


@pytest.mark.parametrize("seed", range(60))
def test_conv_transpose2d_random(seed):
    rng = np.random.default_rng(2000 + seed)
    x, filt, bias, options, k = _conv_transpose_case(rng)
    _check_conv_transpose(x, filt, bias, options, k, constant_filter=bool(seed % 4))


@pytest.mark.parametrize("nhwc", [False, True])
@pytest.mark.parametrize("cout", [1, 24, 70])
def test_conv_transpose2d_2x2_stride2(nhwc, cout):
    # The detection-head shape (no overlap between taps), with channels past one GEMM panel.
    rng = np.random.default_rng(cout)
    x = _data(rng, [1, 17, 13, 24] if nhwc else [1, 24, 17, 13])
    filt = _data(rng, [24, cout, 2, 2])
    options = {"strides": [2, 2], "input_layout": "nhwc" if nhwc else "nchw"}
    _check_conv_transpose(x, filt, _data(rng, [cout]), options, 24)


@pytest.mark.parametrize(
    "kernel,stride,pads", [(2, 2, [0, 0, 0, 0]), (1, 2, [1, 0, 0, 1]), (2, 3, [0, 1, 2, 0])]
)
def test_conv_transpose2d_planar_bands(kernel, stride, pads):
    # Wide rows and many output channels: one input row per band, so many bands per image.
    rng = np.random.default_rng(kernel * 10 + stride)
    x = _data(rng, [2, 8, 9, 300])
    filt = _data(rng, [8, 40, kernel, kernel])
    options = {"strides": [stride, stride], "padding": pads}
    _check_conv_transpose(x, filt, _data(rng, [40]), options, 8)


def test_conv_transpose2d_long_reduction():
    # 900 input channels: each tap's channels are split into several passes over K.
    rng = np.random.default_rng(3)
    x = _data(rng, [1, 900, 4, 5])
    filt = _data(rng, [900, 20, 3, 3])
    options = {"strides": [2, 2], "padding": [1, 1, 1, 1]}
    _check_conv_transpose(x, filt, None, options, 900 * 4)


# ---- resample2d -----------------------------------------------------------------------------


def _resample_case(rng):
    shape = [
        int(rng.integers(1, 3)),
        int(rng.integers(1, 6)),
        int(rng.integers(1, 12)),
        int(rng.integers(1, 12)),
    ]
    axes = [[2, 3], [1, 2], [0, 1], [3, 2]][int(rng.integers(4))]
    mode = str(rng.choice(["nearest-neighbor", "linear"]))
    options = {"mode": mode, "axes": axes}
    if rng.integers(2):
        options["scales"] = [float(rng.choice([0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 8.0])) for _ in axes]
        while any(int(shape[a] * s) < 1 for a, s in zip(axes, options["scales"])):
            options["scales"] = [max(s, 1.0) for s in options["scales"]]
    else:
        options["sizes"] = [int(rng.integers(1, 25)) for _ in axes]
    return _data(rng, shape), options


@pytest.mark.parametrize("seed", range(60))
def test_resample2d_random(seed):
    rng = np.random.default_rng(3000 + seed)
    x, options = _resample_case(rng)
    got, want = _both(lambda g, o: g.resample2d(o["x"], **options), {"x": x})
    if options["mode"] == "nearest-neighbor":
        np.testing.assert_array_equal(got, want)
        return
    # Four products with weights in [0, 1] summing to 1, each rounded in float32: a few eps of
    # the interpolated magnitude.
    magnitude = _run("reference", lambda g, o: g.resample2d(o["x"], **options), {"x": np.abs(x)})
    assert_within(got, want, 6 * EPS * magnitude.astype(np.float64))


@pytest.mark.parametrize("mode", ["nearest-neighbor", "linear"])
@pytest.mark.parametrize("scale", [2.0, 4.0, 8.0])
def test_resample2d_integral_upsampling(mode, scale):
    # The detection model's upsampling (NCHW and NHWC), on rows longer than a vector.
    rng = np.random.default_rng(int(scale))
    x = _data(rng, [1, 3, 9, 37])
    for axes in ([2, 3], [1, 2]):
        options = {"mode": mode, "scales": [scale, scale], "axes": axes}
        got, want = _both(lambda g, o, kw=options: g.resample2d(o["x"], **kw), {"x": x})
        if mode == "nearest-neighbor":
            np.testing.assert_array_equal(got, want)
        else:
            np.testing.assert_allclose(got, want, rtol=0, atol=6 * EPS * 2)


# ---- normalizations -------------------------------------------------------------------------


def _norm_bound(want):
    # The cpu kernels compute in double like the reference; only the order of the double sums
    # of the statistics differs, so results are within one rounding of the reference.
    return np.abs(want.astype(np.float64)) * EPS


@pytest.mark.parametrize("seed", range(20))
def test_batch_normalization_random(seed):
    rng = np.random.default_rng(4000 + seed)
    rank = int(rng.integers(1, 5))
    shape = [int(rng.integers(1, 9)) for _ in range(rank)]
    axis = int(rng.integers(rank))
    c = shape[axis]
    consts = {"mean": _data(rng, [c]), "var": rng.uniform(0.1, 3, c).astype(np.float32)}
    use_scale, use_bias = bool(rng.integers(2)), bool(rng.integers(2))
    if use_scale:
        consts["scale"] = _data(rng, [c])
    if use_bias:
        consts["bias"] = _data(rng, [c])

    def make(g, o):
        extra = {k: o[k] for k in ("scale", "bias") if k in o}
        return g.batch_normalization(o["x"], o["mean"], o["var"], axis=axis, epsilon=1e-3, **extra)

    inputs = {"x": _data(rng, shape)}
    if seed % 2:  # statistics as graph inputs too
        inputs.update(consts)
        consts = {}
    got, want = _both(make, inputs, consts)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("seed", range(20))
def test_instance_normalization_random(seed):
    rng = np.random.default_rng(5000 + seed)
    nhwc = bool(seed % 2)
    n, c, h, w = (
        int(rng.integers(1, 3)),
        int(rng.integers(1, 80)),
        int(rng.integers(1, 9)),
        int(rng.integers(1, 9)),
    )
    x = _data(rng, [n, h, w, c] if nhwc else [n, c, h, w]) + np.float32(rng.uniform(-3, 3))
    consts = {}
    if rng.integers(2):
        consts["scale"] = _data(rng, [c])
    if rng.integers(2):
        consts["bias"] = _data(rng, [c])

    def make(g, o):
        extra = {k: o[k] for k in ("scale", "bias") if k in o}
        return g.instance_normalization(o["x"], layout="nhwc" if nhwc else "nchw", **extra)

    got, want = _both(make, {"x": x}, consts)
    assert_within(got, want, _norm_bound(want))


@pytest.mark.parametrize("seed", range(20))
def test_layer_normalization_random(seed):
    rng = np.random.default_rng(6000 + seed)
    rank = int(rng.integers(1, 5))
    shape = [int(rng.integers(1, 9)) for _ in range(rank)]
    shape[-1] = int(rng.integers(1, 300))
    k = int(rng.integers(0, rank + 1))
    axes = list(range(rank - k, rank)) if k else None
    if axes is None and rank == 1:
        axes = [0]
    if seed % 5 == 4 and rank >= 2:
        axes = [0, rank - 1]  # not trailing: the reference kernel
    norm_shape = [shape[a] for a in (axes if axes is not None else range(1, rank))]
    consts = {}
    if rng.integers(2):
        consts["scale"] = _data(rng, norm_shape)
    if rng.integers(2):
        consts["bias"] = _data(rng, norm_shape)

    def make(g, o):
        extra = {k: o[k] for k in ("scale", "bias") if k in o}
        return g.layer_normalization(o["x"], axes=axes, **extra)

    got, want = _both(make, {"x": _data(rng, shape)}, consts)
    assert_within(got, want, _norm_bound(want))


# ---- transpose and slice (exact copies, every element size) -----------------------------


def _run_typed(backend, make, x):
    from test_cpu_backend import _context

    builder = _context(backend).create_graph_builder()
    op = builder.input("x", list(x.shape), str(x.dtype))
    graph = builder.build({"y": make(builder, op)})
    return _context(backend).compute(graph, {"x": x})["y"]


def _typed_data(rng, shape, dtype):
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    return rng.integers(-100, 100, size=shape).astype(dtype)


@pytest.mark.parametrize("seed", range(40))
def test_transpose_random(seed):
    rng = np.random.default_rng(7000 + seed)
    rank = int(rng.integers(2, 6))
    shape = [int(rng.integers(1, 9)) for _ in range(rank)]
    shape[int(rng.integers(rank))] = int(rng.integers(20, 80))  # past one tile
    perm = [int(v) for v in rng.permutation(rank)]
    dtype = ["float32", "float16", "int8", "int32", "int64", "uint8"][seed % 6]
    x = _typed_data(rng, shape, dtype)
    make = lambda g, o: g.transpose(o, permutation=perm)
    got = _run_typed("cpu", make, x)
    np.testing.assert_array_equal(got, _run_typed("reference", make, x))
    np.testing.assert_array_equal(got, np.transpose(x, perm))


@pytest.mark.parametrize("perm", [[0, 2, 3, 1], [0, 3, 1, 2], [1, 0, 2, 3], [3, 2, 1, 0]])
def test_transpose_layouts_float32(perm):
    # Batches of whole matrices (NCHW <-> NHWC) take the SIMD transpose.
    x = _data(np.random.default_rng(1), [2, 5, 37, 19])
    make = lambda g, o: g.transpose(o, permutation=perm)
    np.testing.assert_array_equal(_run_typed("cpu", make, x), np.transpose(x, perm))


@pytest.mark.parametrize("seed", range(30))
def test_slice_random(seed):
    rng = np.random.default_rng(8000 + seed)
    rank = int(rng.integers(1, 5))
    shape = [int(rng.integers(1, 12)) for _ in range(rank)]
    shape[-1] = int(rng.integers(16, 70))
    starts = [int(rng.integers(0, s)) for s in shape]
    strides = [int(rng.integers(1, 4)) for _ in shape] if seed % 2 else None
    steps = strides or [1] * rank
    # WebNN sizes count input elements; the output has ceil(size / stride) of them.
    sizes = [int(rng.integers(1, s - b + 1)) for s, b in zip(shape, starts)]
    dtype = ["float32", "int64", "float16", "int8"][seed % 4]
    x = _typed_data(rng, shape, dtype)
    make = lambda g, o: g.slice(o, starts, sizes, strides=strides)
    got = _run_typed("cpu", make, x)
    np.testing.assert_array_equal(got, _run_typed("reference", make, x))
    index = tuple(slice(b, b + n, st) for b, n, st in zip(starts, sizes, steps))
    np.testing.assert_array_equal(got, x[index])


@pytest.mark.parametrize("seed", range(20))
def test_expand_random(seed):
    rng = np.random.default_rng(8500 + seed)
    rank = int(rng.integers(1, 5))
    out_shape = [int(rng.integers(1, 9)) for _ in range(rank)]
    out_shape[-1] = int(rng.integers(10, 40))
    drop = int(rng.integers(0, rank))
    in_shape = [d if rng.integers(2) else 1 for d in out_shape[drop:]]
    dtype = ["float32", "int64", "float16", "uint8"][seed % 4]
    x = _typed_data(rng, in_shape, dtype)
    make = lambda g, o: g.expand(o, out_shape)
    got = _run_typed("cpu", make, x)
    np.testing.assert_array_equal(got, np.broadcast_to(x, out_shape))


@pytest.mark.parametrize("seed", range(12))
def test_tile_random(seed):
    rng = np.random.default_rng(8600 + seed)
    rank = int(rng.integers(1, 5))
    shape = [int(rng.integers(1, 7)) for _ in range(rank)]
    shape[-1] = int(rng.integers(5, 40))
    reps = [int(rng.integers(1, 4)) for _ in range(rank)]
    dtype = ["float32", "int64", "float16", "int8"][seed % 4]
    x = _typed_data(rng, shape, dtype)
    make = lambda g, o: g.tile(o, reps)
    np.testing.assert_array_equal(_run_typed("cpu", make, x), np.tile(x, reps))


@pytest.mark.parametrize("mode", ["constant", "edge", "reflection", "symmetric"])
@pytest.mark.parametrize("seed", range(6))
def test_pad_random(mode, seed):
    rng = np.random.default_rng(8700 + seed)
    rank = int(rng.integers(1, 5))
    shape = [int(rng.integers(2, 8)) for _ in range(rank)]
    shape[-1] = int(rng.integers(20, 60))
    limit = 1 if mode == "reflection" else 0  # pads stay within one period
    begin = [int(rng.integers(0, s - limit + 1)) for s in shape]
    end = [int(rng.integers(0, s - limit + 1)) for s in shape]
    x = _data(rng, shape)
    value = float(rng.uniform(-5, 5))

    def make(g, o):
        return g.pad(o["x"], begin, end, mode=mode, value=value)

    got, want = _both(make, {"x": x})
    np.testing.assert_array_equal(got, want)
    np_mode = {"edge": "edge", "reflection": "reflect", "symmetric": "symmetric"}
    widths = list(zip(begin, end))
    if mode == "constant":
        expected = np.pad(x, widths, constant_values=np.float32(value))
    else:
        expected = np.pad(x, widths, mode=np_mode[mode])
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("seed", range(12))
def test_concat_random(seed):
    rng = np.random.default_rng(8800 + seed)
    rank = int(rng.integers(1, 5))
    shape = [int(rng.integers(1, 6)) for _ in range(rank)]
    shape[-1] = int(rng.integers(300, 3000))  # past the 64 KB pieces
    axis = int(rng.integers(rank))
    dtype = ["float32", "int64", "float16", "int8"][seed % 4]
    parts = []
    for _ in range(int(rng.integers(1, 5))):
        s = list(shape)
        s[axis] = int(rng.integers(1, 5))
        parts.append(_typed_data(rng, s, dtype))
    from test_cpu_backend import _context

    builder = _context("cpu").create_graph_builder()
    ops = [builder.input(f"x{i}", list(v.shape), dtype) for i, v in enumerate(parts)]
    graph = builder.build({"y": builder.concat(ops, axis)})
    got = _context("cpu").compute(graph, {f"x{i}": v for i, v in enumerate(parts)})["y"]
    np.testing.assert_array_equal(got, np.concatenate(parts, axis))


@pytest.mark.parametrize("seed", range(4))
def test_concat_of_many_short_slabs(seed):
    """NHWC channel concat (det's FPN: 4 x [1,160,160,24]): one short slab per pixel and input,
    copied by ranges of pixels."""
    rng = np.random.default_rng(8900 + seed)
    dtype = ["float32", "float16", "int8", "float32"][seed]
    hw = [int(rng.integers(40, 90)), int(rng.integers(40, 90))]
    axis = 3 if seed < 3 else 2  # the last case: slabs of whole rows
    shapes = [[1, *hw, int(rng.integers(1, 30))] for _ in range(4)]
    if axis == 2:
        shapes = [[1, hw[0] * 20, int(rng.integers(1, 30)), 7] for _ in range(4)]
    parts = [_typed_data(rng, shape, dtype) for shape in shapes]
    from test_cpu_backend import _context

    builder = _context("cpu").create_graph_builder()
    ops = [builder.input(f"x{i}", list(v.shape), dtype) for i, v in enumerate(parts)]
    graph = builder.build({"y": builder.concat(ops, axis)})
    got = _context("cpu").compute(graph, {f"x{i}": v for i, v in enumerate(parts)})["y"]
    np.testing.assert_array_equal(got, np.concatenate(parts, axis))


# ---- reductions ------------------------------------------------------------------------------

REDUCTIONS = [
    "reduce_sum",
    "reduce_mean",
    "reduce_sum_square",
    "reduce_l1",
    "reduce_l2",
    "reduce_max",
    "reduce_min",
]


@pytest.mark.parametrize("op", REDUCTIONS)
@pytest.mark.parametrize("seed", range(8))
def test_reduce_random(op, seed):
    rng = np.random.default_rng(9000 + seed)
    rank = int(rng.integers(1, 5))
    shape = [int(rng.integers(1, 7)) for _ in range(rank)]
    shape[int(rng.integers(rank))] = int(rng.integers(30, 300))
    if seed % 4 == 0:
        axes = None
    else:  # a run of axes, sometimes with a gap (the reference kernel then)
        a = int(rng.integers(rank))
        b = int(rng.integers(a, rank))
        axes = list(range(a, b + 1))
        if seed % 4 == 3 and rank >= 3:
            axes = [0, rank - 1]
    x = _data(rng, shape)
    if seed % 3 == 0:
        x.flat[rng.integers(x.size, size=3)] = [np.nan, 0.0, -0.0]
    keep = bool(seed % 2)

    def make(g, o):
        return getattr(g, op)(o["x"], axes=axes, keep_dimensions=keep)

    got, want = _both(make, {"x": x})
    if op in ("reduce_max", "reduce_min"):
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
        np.testing.assert_array_equal(got, want)
    else:
        # Both sum in double and round once: at most one float32 rounding apart.
        assert_within(got, want, np.abs(want.astype(np.float64)) * EPS)


# ---- pow with a constant exponent ----------------------------------------------------------


@pytest.mark.parametrize("exponent", [2.0, 1.0, 0.5, 3.0, -1.0])
@pytest.mark.parametrize("shape", [[7], [3, 1000], [2, 5, 64, 33]])
def test_pow_constant_exponent(exponent, shape):
    rng = np.random.default_rng(len(shape))
    x = _data(rng, shape) * np.float32(1e3)
    specials = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -1e-30, 3e38, -3e38]
    x.flat[: len(specials)] = specials[: x.size]
    constants = {"e": np.array(exponent, dtype=np.float32)}
    got, want = _both(lambda g, o: g.pow(o["x"], o["e"]), {"x": x}, constants)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    np.testing.assert_array_equal(got, want)


# ---- prelu ---------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(20))
def test_prelu_random(seed):
    rng = np.random.default_rng(9500 + seed)
    rank = int(rng.integers(1, 5))
    shape = [int(rng.integers(1, 8)) for _ in range(rank)]
    shape[int(rng.integers(rank))] = int(rng.integers(20, 70))
    drop = int(rng.integers(0, rank + 1))
    slope_shape = [d if rng.integers(2) else 1 for d in shape[drop:]]
    x = _data(rng, shape)
    x.flat[:4] = [0.0, -0.0, -np.inf, np.nan][: x.size]
    slope = _data(rng, slope_shape)
    inputs, constants = ({"x": x, "s": slope}, {}) if seed % 2 else ({"x": x}, {"s": slope})
    got, want = _both(lambda g, o: g.prelu(o["x"], o["s"]), inputs, constants)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    np.testing.assert_array_equal(got, want)
    expected = np.where(x >= 0, x, np.broadcast_to(slope, shape) * x)
    np.testing.assert_array_equal(got, expected)


# ---- float16 nodes on the float32 kernels ----------------------------------------------------


def _run_f16(backend, make, inputs, constants):
    from test_cpu_backend import _context

    builder = _context(backend).create_graph_builder()
    ops = {k: builder.input(k, list(v.shape), "float16") for k, v in inputs.items()}
    ops.update({k: builder.constant(v) for k, v in constants.items()})
    graph = builder.build({"y": make(builder, ops)})
    return _context(backend).compute(graph, inputs)["y"]


F16_CASES = {
    "conv2d nchw": (
        lambda g, o: g.conv2d(o["x"], o["w"], bias=o["b"], padding=[1, 1, 1, 1]),
        {"x": [1, 5, 9, 11]},
        {"w": [7, 5, 3, 3], "b": [7]},
    ),
    "conv2d nhwc depthwise": (
        lambda g, o: g.conv2d(
            o["x"], o["w"], groups=6, input_layout="nhwc", filter_layout="ihwo", strides=[2, 2]
        ),
        {"x": [2, 9, 8, 6]},
        {"w": [1, 3, 3, 6]},
    ),
    "conv_transpose2d": (
        lambda g, o: g.conv_transpose2d(o["x"], o["w"], strides=[2, 2]),
        {"x": [1, 6, 7, 5]},
        {"w": [6, 4, 2, 2]},
    ),
    "matmul": (lambda g, o: g.matmul(o["x"], o["w"]), {"x": [3, 17, 40]}, {"w": [40, 9]}),
    "gemm": (
        lambda g, o: g.gemm(o["x"], o["w"], c=o["b"]),
        {"x": [6, 33]},
        {"w": [33, 12], "b": [12]},
    ),
    "batch_normalization": (
        lambda g, o: g.batch_normalization(o["x"], o["m"], o["v"], scale=o["s"], bias=o["b"]),
        {"x": [2, 4, 5, 6]},
        {"m": [4], "v": [4], "s": [4], "b": [4]},
    ),
    "layer_normalization": (
        lambda g, o: g.layer_normalization(o["x"], axes=[2], scale=o["s"]),
        {"x": [2, 3, 50]},
        {"s": [50]},
    ),
    "softmax": (lambda g, o: g.softmax(o["x"], 1), {"x": [4, 37]}, {}),
    "average_pool2d": (
        lambda g, o: g.average_pool2d(o["x"], window_dimensions=[3, 3], padding=[1, 1, 1, 1]),
        {"x": [1, 3, 10, 9]},
        {},
    ),
    "resample2d linear": (
        lambda g, o: g.resample2d(o["x"], mode="linear", scales=[2.0, 2.0]),
        {"x": [1, 2, 5, 7]},
        {},
    ),
}


@pytest.mark.parametrize("case", sorted(F16_CASES))
def test_float16_on_float32_kernels(case):
    make, input_shapes, constant_shapes = F16_CASES[case]
    rng = np.random.default_rng(len(case))
    inputs = {k: rng.uniform(-2, 2, s).astype(np.float16) for k, s in input_shapes.items()}
    constants = {k: rng.uniform(-1, 1, s).astype(np.float16) for k, s in constant_shapes.items()}
    if "v" in constants:
        constants["v"] = np.abs(constants["v"]) + np.float16(0.5)
    got = _run_f16("cpu", make, inputs, constants)
    want = _run_f16("reference", make, inputs, constants)
    assert got.dtype == np.float16 and got.shape == want.shape
    # The reference rounds its exact result to float16 once, the cpu backend rounds a float32
    # result: at most one float16 step apart (either side of a power of two).
    step = np.maximum(np.spacing(np.abs(want)), np.spacing(np.abs(got))).astype(np.float64)
    err = np.abs(got.astype(np.float64) - want.astype(np.float64))
    assert (err <= step).all(), f"max error {err.max()} (step {step[np.argmax(err - step)]})"


# ---- other ISAs and thread counts -----------------------------------------------------------


@pytest.mark.skipif(rerun.nested(), reason="nested")
@rerun.each_cpu_setting
def test_other_isas_and_thread_counts(env):
    rerun.assert_file_passes(__file__, env)
