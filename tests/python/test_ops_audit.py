"""Regression tests for the spec-semantics audit of the reference kernels and shape inference.

Each expectation is computed independently with NumPy straight from the W3C WebNN
specification text (index.bs): the resample2d sampling formulas, the "cast" algorithm
(ConvertToFloat / ConvertToInt) applied to MLNumber and double options, the pooling output
size rule, the sign definition and the method-step validation rules.
"""

import math

import numpy as np
import pytest
import webnn

RNG = np.random.default_rng(2026)


@pytest.fixture(params=webnn.backends())
def ctx(request):
    return webnn.ML().create_context(accelerated=False, backend=request.param)


def run(ctx, build, **feeds):
    b = ctx.create_graph_builder()
    inputs = {name: b.input(name, list(v.shape), str(v.dtype)) for name, v in feeds.items()}
    graph = b.build({"out": build(b, **inputs)})
    return ctx.compute(graph, feeds)["out"]


def builder(ctx):
    return ctx.create_graph_builder()


# ---- spec helpers -----------------------------------------------------------------------------


def convert_to_int(x, dtype):
    """The spec's ConvertToInt: NaN -> 0, clamp to the type's range, round half to even."""
    info = np.iinfo(dtype)
    if math.isnan(x):
        return 0
    x = min(max(x, info.min), info.max)
    return round(x)  # Python's round() is round-half-to-even


def resample_coordinate(o, in_size, out_size):
    """scale = outputSize / inputSize; clamp((o + 0.5) / scale - 0.5, 0, inputSize - 1)."""
    scale = out_size / in_size
    return min(max((o + 0.5) / scale - 0.5, 0.0), in_size - 1)


def resample2d_spec(x, out_h, out_w, linear):
    """resample2d over axes [2, 3], written from the spec's sampling pseudo-code."""
    n, c, in_h, in_w = x.shape
    y = np.zeros((n, c, out_h, out_w), dtype=np.float64)
    xd = x.astype(np.float64)
    for oh in range(out_h):
        cy = resample_coordinate(oh, in_h, out_h)
        for ow in range(out_w):
            cx = resample_coordinate(ow, in_w, out_w)
            if not linear:
                y[:, :, oh, ow] = xd[:, :, math.ceil(cy - 0.5), math.ceil(cx - 0.5)]
                continue
            x0, x1, y0, y1 = math.floor(cx), math.ceil(cx), math.floor(cy), math.ceil(cy)
            tx, ty = cx - x0, cy - y0
            with np.errstate(invalid="ignore"):
                vy0 = xd[:, :, y0, x0] * (1 - tx) + xd[:, :, y0, x1] * tx
                vy1 = xd[:, :, y1, x0] * (1 - tx) + xd[:, :, y1, x1] * tx
                y[:, :, oh, ow] = vy0 * (1 - ty) + vy1 * ty
    return y.astype(x.dtype)


# ---- resample2d ---------------------------------------------------------------------------------


def test_resample2d_nearest_downsample_takes_the_lower_sample_on_ties(ctx):
    # The [1, 1, 4, 6] case of WPT PR 41811: halving puts every output coordinate exactly
    # halfway between two input samples; ceil(c - 0.5) takes the top-left one.
    x = np.array(
        [
            [3.86, 45.18, 87.67, 98.78, 66.37, 3.41],
            [86.15, 95.98, 76.87, 16.53, 65.99, 25.47],
            [22.56, 92.08, 85.81, 92.63, 29.92, 75.40],
            [62.06, 1.77, 99.47, 11.44, 25.40, 67.02],
        ],
        dtype=np.float32,
    ).reshape(1, 1, 4, 6)
    want = x[:, :, ::2, ::2]
    np.testing.assert_array_equal(resample2d_spec(x, 2, 3, False), want)
    by_size = run(ctx, lambda b, x: b.resample2d(x, sizes=[2, 3]), x=x)
    by_scale = run(ctx, lambda b, x: b.resample2d(x, scales=[0.5, 0.5]), x=x)
    np.testing.assert_array_equal(by_size, want)
    np.testing.assert_array_equal(by_scale, want)


@pytest.mark.parametrize(
    "in_hw,out_hw", [((2, 2), (3, 3)), ((4, 6), (6, 9)), ((5, 7), (3, 4)), ((3, 10), (7, 3))]
)
def test_resample2d_nearest_matches_spec_formula(ctx, in_hw, out_hw):
    x = RNG.uniform(-10, 10, size=(1, 2) + in_hw).astype(np.float32)
    got = run(ctx, lambda b, x: b.resample2d(x, sizes=list(out_hw)), x=x)
    np.testing.assert_array_equal(got, resample2d_spec(x, *out_hw, linear=False))


@pytest.mark.parametrize("in_hw,out_hw", [((2, 3), (2, 3)), ((2, 3), (4, 6)), ((4, 4), (8, 8))])
def test_resample2d_linear_integral_coordinates_read_one_sample(ctx, in_hw, out_hw):
    # x1 = ceil(c) equals x0 at integral coordinates: an infinite neighbour must not leak in
    # through a zero weight (inf * 0 = NaN). (The spec formula still gives NaN at the infinite
    # sample itself, inf * 1 + inf * 0.)
    x = RNG.uniform(-10, 10, size=(1, 1) + in_hw).astype(np.float32)
    x[0, 0, -1, -1] = np.inf
    got = run(ctx, lambda b, x: b.resample2d(x, sizes=list(out_hw), mode="linear"), x=x)
    want = resample2d_spec(x, *out_hw, linear=True)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    if in_hw == out_hw:
        finite = np.isfinite(x)
        np.testing.assert_array_equal(got[finite], x[finite])


def test_resample2d_linear_spec_example(ctx):
    # The [4, 4] -> [8, 8] example in the spec's resample2d note.
    x = np.array([0, 1, 2, 3] * 2 + [12, 13, 14, 15] * 2, np.float32).reshape(1, 1, 4, 4)
    row = np.array([0, 0.25, 0.75, 1.25, 1.75, 2.25, 2.75, 3])
    want = np.stack([row + base for base in [0, 0, 0, 3, 9, 12, 12, 12]]).reshape(1, 1, 8, 8)
    got = run(ctx, lambda b, x: b.resample2d(x, sizes=[8, 8], mode="linear"), x=x)
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_resample2d_validates_scales_even_when_sizes_are_given(ctx):
    b = builder(ctx)
    x = b.input("x", [1, 1, 4, 4], "float32")
    with pytest.raises(ValueError, match="scales"):
        b.resample2d(x, sizes=[2, 2], scales=[-1.0, 1.0])
    with pytest.raises(ValueError, match="scales"):
        b.resample2d(x, sizes=[2, 2], scales=[1.0])
    assert b.operand_shape(b.resample2d(x, sizes=[2, 3], scales=[0.5, 0.5])) == [1, 1, 2, 3]


# ---- element-wise -----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_sign_of_nan_is_zero(ctx, dtype):
    # "returning 1 if > 0, -1 if < 0, and 0 otherwise" (and the spec's where() emulation).
    x = np.array([np.nan, -np.nan, 2.0, -3.0, 0.0, -0.0, np.inf, -np.inf], dtype=dtype)
    want = np.array([0, 0, 1, -1, 0, 0, 1, -1], dtype=dtype)
    np.testing.assert_array_equal(run(ctx, lambda b, x: b.sign(x), x=x), want)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_hard_sigmoid_propagates_nan(ctx, dtype):
    # max(min(alpha * x + beta, 1), 0) with NaN-propagating min/max.
    x = np.array([np.nan, -10.0, 0.0, 10.0], dtype=dtype)
    got = run(ctx, lambda b, x: b.hard_sigmoid(x), x=x)
    np.testing.assert_array_equal(got, np.array([np.nan, 0.0, 0.5, 1.0], dtype=dtype))


def test_coefficients_are_cast_to_the_input_type(ctx):
    # alpha/beta are cast to the input data type before use: a float16 input multiplies by
    # float16(0.01), not by the double 0.01.
    x = np.array([-65472.0, -65216.0, -64864.0, -6.0, 3.0], dtype=np.float16)
    a16 = float(np.float16(0.01))
    want = np.where(x >= 0, x, (a16 * x.astype(np.float64)).astype(np.float16))
    np.testing.assert_array_equal(run(ctx, lambda b, x: b.leaky_relu(x, alpha=0.01), x=x), want)
    uncast = (0.01 * x.astype(np.float64)).astype(np.float16)
    assert not np.array_equal(want, np.where(x >= 0, x, uncast))

    y = RNG.uniform(-100, 100, 64).astype(np.float32)
    a32 = float(np.float32(0.1))
    want = (a32 * y.astype(np.float64)).astype(np.float32)
    np.testing.assert_array_equal(run(ctx, lambda b, y: b.linear(y, alpha=0.1), y=y), want)
    e = np.array([-1.0, -2.0, -7.5, 4.0], np.float16)
    want = np.where(e > 0, e, (a16 * np.expm1(e.astype(np.float64))).astype(np.float16))
    np.testing.assert_array_equal(run(ctx, lambda b, e: b.elu(e, alpha=0.01), e=e), want)


def test_gemm_alpha_beta_are_cast(ctx):
    a = RNG.integers(-5, 5, size=(3, 4)).astype(np.float32)
    w = RNG.integers(-5, 5, size=(4, 2)).astype(np.float32)
    c = RNG.integers(-5, 5, size=(2,)).astype(np.float32)
    alpha, beta = float(np.float32(0.1)), float(np.float32(0.3))
    want = (alpha * (a.astype(np.float64) @ w) + beta * c.astype(np.float64)).astype(np.float32)
    got = run(ctx, lambda b, a, w, c: b.gemm(a, w, c, alpha=0.1, beta=0.3), a=a, w=w, c=c)
    if ctx.backend == "reference":
        np.testing.assert_array_equal(got, want)
    else:
        # Fast float32 GEMM rounds alpha * (a @ w) and the beta * c sum separately.
        np.testing.assert_allclose(got, want, rtol=3e-7, atol=0)


# ---- clamp bounds: cast to the input type ----------------------------------------------------


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.int64])
@pytest.mark.parametrize("lo,hi", [(2.5, 7.5), (2.7, 6.2), (-3.2, 3.5), (1.5, 2.5)])
def test_clamp_fractional_bounds_round_half_to_even(ctx, dtype, lo, hi):
    x = np.arange(-4, 12, dtype=dtype) if np.iinfo(dtype).min < 0 else np.arange(0, 12, dtype=dtype)
    want = np.clip(x, convert_to_int(lo, dtype), convert_to_int(hi, dtype)).astype(dtype)
    got = run(ctx, lambda b, x: b.clamp(x, min_value=lo, max_value=hi), x=x)
    np.testing.assert_array_equal(got, want)


def test_clamp_compares_bounds_after_casting(ctx):
    # 300 and 280 both cast to 255 for uint8, 2.4 and 2.2 both to 2 for int32, and
    # 1.0001 and 1.0 both to 1.0 for float16: none of these is min > max.
    u = np.array([0, 100, 255], np.uint8)
    got = run(ctx, lambda b, u: b.clamp(u, min_value=300, max_value=280), u=u)
    np.testing.assert_array_equal(got, np.full(3, 255, np.uint8))
    i = np.array([-5, 2, 9], np.int32)
    got = run(ctx, lambda b, i: b.clamp(i, min_value=2.4, max_value=2.2), i=i)
    np.testing.assert_array_equal(got, np.full(3, 2, np.int32))
    h = np.array([0.5, 1.0, 2.0], np.float16)
    got = run(ctx, lambda b, h: b.clamp(h, min_value=1.0001, max_value=1.0), h=h)
    np.testing.assert_array_equal(got, np.ones(3, np.float16))
    b = builder(ctx)
    with pytest.raises(ValueError, match="min_value"):
        b.clamp(b.input("f", [2], "float32"), min_value=1.0001, max_value=1.0)
    with pytest.raises(ValueError, match="min_value"):
        b.clamp(b.input("q", [2], "int32"), min_value=2.6, max_value=2.4)


# ---- pad ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "dtype,value",
    [
        (np.int32, 2.5),
        (np.int32, 3.5),
        (np.int32, -2.5),
        (np.int32, 2.7),
        (np.int8, -0.6),
        (np.uint8, -0.7),
        (np.uint8, 254.5),
        (np.int64, 1e30),
        (np.int8, float("nan")),
    ],
)
def test_pad_value_is_cast_with_round_half_to_even(ctx, dtype, value):
    x = np.array([1, 2, 3], dtype=dtype)
    got = run(ctx, lambda b, x: b.pad(x, [1], [2], value=value), x=x)
    fill = convert_to_int(value, dtype)
    np.testing.assert_array_equal(got, np.array([fill, 1, 2, 3, fill, fill], dtype=dtype))


def test_pad_rejects_a_scalar(ctx):
    b = builder(ctx)
    with pytest.raises(ValueError, match="rank"):
        b.pad(b.input("x", [], "float32"), [], [])


# ---- pooling output sizes ----------------------------------------------------------------------


def conv_output_size(size, window, begin, end, stride, dilation=1):
    """The spec's "calculate conv output size" (a real number)."""
    return (size - ((window - 1) * dilation + 1) + begin + end) / stride + 1


@pytest.mark.parametrize("method", ["average_pool2d", "l2_pool2d", "max_pool2d"])
def test_pool_ceil_allows_a_window_larger_than_the_padded_input(ctx, method):
    # (2 - 3 + 0 + 0) / 2 + 1 = 0.5: floor gives the invalid 0, ceil the valid 1.
    assert math.ceil(conv_output_size(2, 3, 0, 0, 2)) == 1
    x = RNG.uniform(-5, 5, size=(1, 2, 2, 2)).astype(np.float32)
    options = {"window_dimensions": [3, 3], "strides": [2, 2]}
    got = run(ctx, lambda b, x: getattr(b, method)(x, output_shape_rounding="ceil", **options), x=x)
    values = x.reshape(1, 2, 4).astype(np.float64)
    want = {
        "average_pool2d": values.mean(axis=2),
        "l2_pool2d": np.sqrt((values**2).sum(axis=2)),
        "max_pool2d": values.max(axis=2),
    }[method].reshape(1, 2, 1, 1)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    got = run(ctx, lambda b, x: getattr(b, method)(x, output_sizes=[1, 1], **options), x=x)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    b = builder(ctx)
    with pytest.raises(ValueError, match="window"):
        getattr(b, method)(b.input("y", [1, 2, 2, 2], "float32"), **options)
