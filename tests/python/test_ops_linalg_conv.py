"""matmul, gemm, conv2d and conv_transpose2d through the public API, checked against NumPy.

Covers option combinations the WPT corpus does not (layout pairs, grouped/depthwise with
strides, dilations and asymmetric padding, output_sizes, broadcasting of batch dims and of
gemm's c, float16) and the rejection paths (ValueError / TypeError / OverflowError).
"""

import itertools

import numpy as np
import pytest
import webnn

BACKENDS = webnn.backends()
DYN = {"name": "batch", "maxSize": 4}


@pytest.fixture(params=BACKENDS)
def context(request):
    return webnn.ML().create_context(accelerated=False, backend=request.param)


def _rng(seed=0):
    return np.random.default_rng(seed)


def _run(context, make, inputs, dtype="float32"):
    """Builds make(builder, operands...) with every array as a graph input, returns the output."""
    builder = context.create_graph_builder()
    operands = [builder.input(f"in{i}", list(a.shape), dtype) for i, a in enumerate(inputs)]
    out = make(builder, *operands)
    graph = builder.build({"out": out})
    feeds = {f"in{i}": a.astype(dtype) for i, a in enumerate(inputs)}
    return context.compute(graph, feeds)["out"]


def _check(actual, expected, dtype):
    assert actual.dtype == np.dtype(dtype)
    assert actual.shape == expected.shape
    # Engine accumulates in double and rounds once; allow a couple of ULPs of the output type.
    rtol, atol = (1e-6, 1e-6) if dtype == "float32" else (2e-3, 2e-3)
    np.testing.assert_allclose(actual.astype(np.float64), expected, rtol=rtol, atol=atol)


def _data(shape, dtype, rng):
    # Values exactly representable in float16 so the float64 expectation sees the same inputs.
    return rng.uniform(-2, 2, size=shape).astype(dtype).astype(np.float64)


def _builder(context):
    return context.create_graph_builder()


# ---- matmul -------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize(
    "a_shape,b_shape",
    [
        ([3, 4], [4, 5]),
        ([2, 3, 4], [4, 5]),
        ([3, 4], [2, 4, 5]),
        ([2, 1, 3, 4], [5, 4, 2]),
        ([1, 2, 1, 1, 3], [3, 3, 2]),
        ([1, 1], [1, 1]),
    ],
)
def test_matmul_broadcasts_batch_dims(context, dtype, a_shape, b_shape):
    rng = _rng(1)
    a, b = _data(a_shape, dtype, rng), _data(b_shape, dtype, rng)
    out = _run(context, lambda bl, x, y: bl.matmul(x, y), [a, b], dtype)
    _check(out, np.matmul(a, b), dtype)


def test_matmul_dynamic_batch_and_rows_pass_through(context):
    b = _builder(context)
    rows = {"name": "rows", "maxSize": 9}
    x = b.input("x", [DYN, rows, 4], "float32")
    y = b.input("y", [1, 4, 5], "float32")
    assert b.operand_shape(b.matmul(x, y)) == [DYN, rows, 5]


@pytest.mark.parametrize(
    "a_shape,b_shape,a_type,b_type,message",
    [
        ([4], [4, 5], "float32", "float32", "rank"),
        ([3, 4], [4], "float32", "float32", "rank"),
        ([3, 4], [3, 5], "float32", "float32", "columns"),
        ([2, 3, 4], [3, 4, 5], "float32", "float32", "broadcastable"),
        ([3, 4], [4, 5], "float32", "float16", "data type"),
        ([3, 4], [4, 5], "int32", "int32", "data type"),
    ],
)
def test_matmul_rejects(context, a_shape, b_shape, a_type, b_type, message):
    b = _builder(context)
    x, y = b.input("x", a_shape, a_type), b.input("y", b_shape, b_type)
    with pytest.raises(ValueError, match=message):
        b.matmul(x, y)


def test_matmul_rejects_dynamic_inner_mismatch(context):
    b = _builder(context)
    x = b.input("x", [3, {"name": "k", "maxSize": 4}], "float32")
    y = b.input("y", [4, 5], "float32")
    with pytest.raises(ValueError, match="columns"):
        b.matmul(x, y)


def test_matmul_rejects_non_operand(context):
    b = _builder(context)
    x = b.input("x", [3, 4], "float32")
    with pytest.raises(TypeError):
        b.matmul(x, np.ones((4, 5), np.float32))


# ---- gemm ---------------------------------------------------------------------------------


def _gemm_expected(a, b, c, alpha, beta, a_t, b_t):
    a2 = a.T if a_t else a
    b2 = b.T if b_t else b
    out = alpha * (a2 @ b2)
    if c is not None:
        out = out + beta * c
    return out


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("a_t,b_t", list(itertools.product([False, True], repeat=2)))
@pytest.mark.parametrize("c_shape", [None, [], [5], [3, 1], [1, 5], [3, 5]])
def test_gemm_transposes_and_c_broadcast(context, dtype, a_t, b_t, c_shape):
    rng = _rng(2)
    a = _data([4, 3] if a_t else [3, 4], dtype, rng)
    b = _data([5, 4] if b_t else [4, 5], dtype, rng)
    alpha, beta = 0.5, -1.25
    arrays = [a, b]
    if c_shape is not None:
        arrays.append(_data(c_shape, dtype, rng))

    def make(bl, x, y, c=None):
        return bl.gemm(x, y, c=c, alpha=alpha, beta=beta, a_transpose=a_t, b_transpose=b_t)

    out = _run(context, make, arrays, dtype)
    c = arrays[2] if c_shape is not None else None
    _check(out, _gemm_expected(a, b, c, alpha, beta, a_t, b_t), dtype)


def test_gemm_defaults_and_positional_options(context):
    rng = _rng(3)
    a, b, c = (_data(s, "float32", rng) for s in ([2, 3], [2, 4], [4]))
    # Defaults: alpha = beta = 1, no transposes, c absent.
    out = _run(context, lambda bl, x, y: bl.gemm(x, y), [a.T.copy(), b])
    _check(out, a.T @ b, "float32")
    out = _run(context, lambda bl, x, y, z: bl.gemm(x, y, c=z), [a.T.copy(), b, c])
    _check(out, a.T @ b + c, "float32")
    # Positional order follows the spec: (a, b, c, alpha, beta, a_transpose, b_transpose).
    out = _run(context, lambda bl, x, y, z: bl.gemm(x, y, z, 2.0, 3.0, True, False), [a, b, c])
    _check(out, 2.0 * (a.T @ b) + 3.0 * c, "float32")


def test_gemm_dynamic_rows_pass_through(context):
    b = _builder(context)
    m = {"name": "m", "maxSize": 8}
    x = b.input("x", [m, 4], "float32")
    y = b.input("y", [4, 5], "float32")
    assert b.operand_shape(b.gemm(x, y)) == [m, 5]
    z = b.input("z", [1, 5], "float32")
    assert b.operand_shape(b.gemm(x, y, c=z)) == [m, 5]


@pytest.mark.parametrize(
    "a_shape,b_shape,c_shape,kwargs,message",
    [
        ([3, 4], [5, 4], None, {}, "inner dimensions"),
        ([3, 4], [4, 5], None, {"a_transpose": True}, "inner dimensions"),
        ([3, 4, 1], [4, 5], None, {}, "rank"),
        ([4], [4, 5], None, {}, "rank"),
        ([3, 4], [4, 5], [3], {}, "broadcastable"),
        ([3, 4], [4, 5], [5, 3], {}, "broadcastable"),
        ([3, 4], [4, 5], [1, 3, 5], {}, "rank"),
    ],
)
def test_gemm_rejects_shapes(context, a_shape, b_shape, c_shape, kwargs, message):
    b = _builder(context)
    x, y = b.input("x", a_shape, "float32"), b.input("y", b_shape, "float32")
    c = b.input("c", c_shape, "float32") if c_shape is not None else None
    with pytest.raises(ValueError, match=message):
        b.gemm(x, y, c=c, **kwargs)


def test_gemm_rejects_types(context):
    b = _builder(context)
    x, y = b.input("x", [3, 4], "float32"), b.input("y", [4, 5], "float32")
    c16 = b.input("c", [5], "float16")
    with pytest.raises(ValueError, match="c data type"):
        b.gemm(x, y, c=c16)
    xi, yi = b.input("xi", [3, 4], "int32"), b.input("yi", [4, 5], "int32")
    with pytest.raises(ValueError, match="data type"):
        b.gemm(xi, yi)
    with pytest.raises(TypeError):
        b.gemm(x, y, alpha="2")
    with pytest.raises(TypeError):
        b.gemm(x, y, a_transpose="yes")


# ---- conv2d / conv_transpose2d: NumPy references ------------------------------------------


def _to_layout(array, src, dst):
    """Transposes a rank-4 array whose axes are named by `src` into the order of `dst`."""
    return np.transpose(array, [src.index(c) for c in dst])


def _conv2d_ref(x, w, strides=(1, 1), dilations=(1, 1), pads=(0, 0, 0, 0), groups=1, bias=None):
    """x nchw, w oihw; direct sliding-window sum per filter tap."""
    n, _, h, wd = x.shape
    o, ig, kh, kw = w.shape
    sh, sw = strides
    dh, dw = dilations
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[1]), (pads[2], pads[3])))
    oh = (h + pads[0] + pads[1] - ((kh - 1) * dh + 1)) // sh + 1
    ow = (wd + pads[2] + pads[3] - ((kw - 1) * dw + 1)) // sw + 1
    og = o // groups
    out = np.zeros((n, o, oh, ow))
    for g in range(groups):
        xg = xp[:, g * ig : (g + 1) * ig]
        wg = w[g * og : (g + 1) * og]
        for i in range(kh):
            for j in range(kw):
                patch = xg[
                    :,
                    :,
                    i * dh : i * dh + (oh - 1) * sh + 1 : sh,
                    j * dw : j * dw + (ow - 1) * sw + 1 : sw,
                ]
                out[:, g * og : (g + 1) * og] += np.einsum("nihw,oi->nohw", patch, wg[:, :, i, j])
    if bias is not None:
        out += bias.reshape(1, -1, 1, 1)
    return out


def _conv_transpose2d_ref(
    x,
    w,
    strides=(1, 1),
    dilations=(1, 1),
    pads=(0, 0, 0, 0),
    groups=1,
    out_size=None,
    output_padding=(0, 0),
    bias=None,
):
    """x nchw, w iohw [C, O/g, kh, kw]; scatters each input element times the filter."""
    n, c, h, wd = x.shape
    _, og, kh, kw = w.shape
    sh, sw = strides
    dh, dw = dilations
    calc_h = (h - 1) * sh + (kh - 1) * dh + 1 - pads[0] - pads[1]
    calc_w = (wd - 1) * sw + (kw - 1) * dw + 1 - pads[2] - pads[3]
    oh, ow = out_size if out_size else (calc_h + output_padding[0], calc_w + output_padding[1])
    full = np.zeros(
        (
            n,
            og * groups,
            pads[0] + oh + (h - 1) * sh + kh * dh,
            pads[2] + ow + (wd - 1) * sw + kw * dw,
        )
    )
    cg = c // groups
    for g in range(groups):
        for i in range(kh):
            for j in range(kw):
                contrib = np.einsum(
                    "nihw,io->nohw", x[:, g * cg : (g + 1) * cg], w[g * cg : (g + 1) * cg, :, i, j]
                )
                full[
                    :,
                    g * og : (g + 1) * og,
                    i * dh : i * dh + (h - 1) * sh + 1 : sh,
                    j * dw : j * dw + (wd - 1) * sw + 1 : sw,
                ] += contrib
    out = full[:, :, pads[0] : pads[0] + oh, pads[2] : pads[2] + ow]
    if bias is not None:
        out = out + bias.reshape(1, -1, 1, 1)
    return out


def test_numpy_references_agree_on_a_known_case():
    # Guards the references themselves: a stride-2 transposed conv undoes the spacing of a
    # stride-2 1x1 conv, and a 3x3 box filter sums neighbourhoods.
    x = np.arange(16, dtype=np.float64).reshape(1, 1, 4, 4)
    box = _conv2d_ref(x, np.ones((1, 1, 3, 3)), pads=(1, 1, 1, 1))
    assert box[0, 0, 0, 0] == 0 + 1 + 4 + 5
    assert box[0, 0, 1, 1] == sum(range(3)) + sum(range(4, 7)) + sum(range(8, 11))
    up = _conv_transpose2d_ref(x, np.ones((1, 1, 1, 1)), strides=(2, 2))
    assert up.shape == (1, 1, 7, 7)
    np.testing.assert_array_equal(up[0, 0, ::2, ::2], x[0, 0])
    assert up[0, 0, 1::2].sum() == 0


# ---- conv2d -------------------------------------------------------------------------------

CONV_FILTER_LAYOUTS = ["oihw", "hwio", "ohwi", "ihwo"]


@pytest.mark.parametrize("input_layout", ["nchw", "nhwc"])
@pytest.mark.parametrize("filter_layout", CONV_FILTER_LAYOUTS)
def test_conv2d_layouts_with_groups_strides_dilations_padding_bias(
    context, input_layout, filter_layout
):
    rng = _rng(4)
    x = _data([2, 4, 7, 6], "float32", rng)  # nchw
    w = _data([6, 2, 3, 2], "float32", rng)  # oihw, groups 2
    bias = _data([6], "float32", rng)
    opts = {"strides": [2, 1], "dilations": [1, 2], "padding": [1, 0, 2, 1], "groups": 2}
    expected = _conv2d_ref(x, w, (2, 1), (1, 2), (1, 0, 2, 1), 2, bias)
    xs = _to_layout(x, "nchw", input_layout)
    ws = _to_layout(w, "oihw", filter_layout)

    def make(bl, xi, wi, bi):
        return bl.conv2d(
            xi, wi, input_layout=input_layout, filter_layout=filter_layout, bias=bi, **opts
        )

    out = _run(context, make, [xs, ws, bias])
    _check(out, _to_layout(expected, "nchw", input_layout), "float32")


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_conv2d_depthwise(context, dtype):
    rng = _rng(5)
    x = _data([1, 4, 5, 5], dtype, rng)
    w = _data([8, 1, 3, 3], dtype, rng)  # channel multiplier 2
    out = _run(
        context,
        lambda bl, xi, wi: bl.conv2d(xi, wi, groups=4, padding=[1, 1, 1, 1], strides=[2, 2]),
        [x, w],
        dtype,
    )
    _check(out, _conv2d_ref(x, w, (2, 2), (1, 1), (1, 1, 1, 1), 4), dtype)


def test_conv2d_defaults_positional_and_pads_alias(context):
    rng = _rng(6)
    x = _data([1, 3, 6, 5], "float32", rng)
    w = _data([2, 3, 2, 3], "float32", rng)
    out = _run(context, lambda bl, xi, wi: bl.conv2d(xi, wi), [x, w])
    _check(out, _conv2d_ref(x, w), "float32")
    # Positional options in spec order: strides, dilations, padding.
    out = _run(context, lambda bl, xi, wi: bl.conv2d(xi, wi, [2, 3], [2, 1], [1, 2, 0, 1]), [x, w])
    _check(out, _conv2d_ref(x, w, (2, 3), (2, 1), (1, 2, 0, 1)), "float32")
    out = _run(context, lambda bl, xi, wi: bl.conv2d(xi, wi, pads=[1, 2, 0, 1]), [x, w])
    _check(out, _conv2d_ref(x, w, pads=(1, 2, 0, 1)), "float32")


def test_conv2d_floor_output_size(context):
    # (5 + 0 - 3) / 2 + 1 = 2 exactly and (6 - 3) / 2 + 1 = 2.5 floors to 2.
    b = _builder(context)
    x = b.input("x", [1, 1, 5, 6], "float32")
    w = b.input("w", [1, 1, 3, 3], "float32")
    assert b.operand_shape(b.conv2d(x, w, strides=[2, 2])) == [1, 1, 2, 2]


def test_conv2d_dynamic_batch_passes_through(context):
    b = _builder(context)
    x = b.input("x", [DYN, 5, 5, 3], "float32")
    w = b.input("w", [3, 3, 3, 4], "float32")
    out = b.conv2d(x, w, input_layout="nhwc", filter_layout="hwio")
    assert b.operand_shape(out) == [DYN, 3, 3, 4]


@pytest.mark.parametrize("axis", [1, 2, 3])
def test_conv2d_rejects_dynamic_channel_or_spatial(context, axis):
    b = _builder(context)
    shape = [1, 3, 5, 5]
    shape[axis] = {"name": "d", "maxSize": 5}
    x = b.input("x", shape, "float32")
    w = b.input("w", [2, 3, 1, 1], "float32")
    with pytest.raises(ValueError, match="dynamic"):
        b.conv2d(x, w)


def _conv2d_error(
    context,
    kwargs,
    x_shape=(1, 4, 5, 5),
    w_shape=(4, 4, 3, 3),
    x_type="float32",
    w_type="float32",
    bias_shape=None,
    bias_type="float32",
):
    b = _builder(context)
    x = b.input("x", list(x_shape), x_type)
    w = b.input("w", list(w_shape), w_type)
    if bias_shape is not None:
        kwargs = dict(kwargs, bias=b.input("bias", list(bias_shape), bias_type))
    return b, x, w, kwargs


@pytest.mark.parametrize(
    "kwargs,shapes,message",
    [
        ({"padding": [1, 1, 1]}, {}, "padding must have 4"),
        ({"strides": [1]}, {}, "strides must have 2"),
        ({"strides": [1, 0]}, {}, r"strides\[1\] must be at least 1"),
        ({"dilations": [0, 1]}, {}, r"dilations\[0\] must be at least 1"),
        ({"dilations": [1, 1, 1]}, {}, "dilations must have 2"),
        ({"groups": 0}, {}, "groups must be at least 1"),
        ({"groups": 3}, {}, "input channels 4 must be divisible by groups 3"),
        (
            {},
            {"w_shape": (4, 2, 3, 3)},
            "input channels 4 / groups 1 must equal filter input channels 2",
        ),
        (
            {"groups": 2},
            {"w_shape": (3, 2, 3, 3)},
            r"output channels 3 .* must be divisible by groups 2",
        ),
        ({}, {"bias_shape": (3,)}, r"bias shape \[3\] must be \[4\]"),
        ({}, {"bias_shape": (1, 4)}, "bias rank"),
        ({}, {"bias_shape": (4,), "bias_type": "float16"}, "bias data type"),
        ({}, {"w_shape": (4, 4, 6, 3)}, "output height would be < 1"),
        ({"dilations": [1, 3]}, {}, "output width would be < 1"),
        ({"input_layout": "nwhc"}, {}, "input_layout"),
        ({"filter_layout": "iohw"}, {}, "filter_layout"),
        ({}, {"x_shape": (4, 5, 5)}, "input rank"),
        ({}, {"w_shape": (4, 4, 3, 3, 1)}, "filter rank"),
        ({}, {"w_type": "float16"}, "filter data type"),
        ({}, {"x_type": "int32", "w_type": "int32"}, "input data type"),
    ],
)
def test_conv2d_rejects(context, kwargs, shapes, message):
    b, x, w, kwargs = _conv2d_error(context, kwargs, **shapes)
    with pytest.raises(ValueError, match=message):
        b.conv2d(x, w, **kwargs)


def test_conv2d_rejects_python_types(context):
    b, x, w, _ = _conv2d_error(context, {})
    with pytest.raises(TypeError):
        b.conv2d(x, w, groups="1")
    with pytest.raises(TypeError):
        b.conv2d(x, w, padding="same")
    with pytest.raises(TypeError):
        b.conv2d(x, w, input_layout=0)
    with pytest.raises(OverflowError):
        b.conv2d(x, w, padding=[0, -1, 0, 0])


# ---- conv_transpose2d ---------------------------------------------------------------------

TRANSPOSE_FILTER_LAYOUTS = ["iohw", "hwoi", "ohwi", "oihw"]


@pytest.mark.parametrize("input_layout", ["nchw", "nhwc"])
@pytest.mark.parametrize("filter_layout", TRANSPOSE_FILTER_LAYOUTS)
def test_conv_transpose2d_layouts_with_groups_strides_dilations_padding_bias(
    context, input_layout, filter_layout
):
    rng = _rng(7)
    x = _data([2, 4, 3, 4], "float32", rng)  # nchw
    w = _data([4, 3, 2, 3], "float32", rng)  # iohw, groups 2 -> 6 output channels
    bias = _data([6], "float32", rng)
    opts = {
        "strides": [2, 3],
        "dilations": [2, 1],
        "padding": [1, 0, 0, 2],
        "output_padding": [1, 2],
        "groups": 2,
    }
    expected = _conv_transpose2d_ref(
        x, w, (2, 3), (2, 1), (1, 0, 0, 2), 2, output_padding=(1, 2), bias=bias
    )
    xs = _to_layout(x, "nchw", input_layout)
    ws = _to_layout(w, "iohw", filter_layout)

    def make(bl, xi, wi, bi):
        return bl.conv_transpose2d(
            xi, wi, input_layout=input_layout, filter_layout=filter_layout, bias=bi, **opts
        )

    out = _run(context, make, [xs, ws, bias])
    _check(out, _to_layout(expected, "nchw", input_layout), "float32")


@pytest.mark.parametrize("extra", [0, 1, 2])
def test_conv_transpose2d_output_sizes_override_output_padding(context, extra):
    rng = _rng(8)
    x = _data([1, 2, 3, 3], "float32", rng)
    w = _data([2, 1, 3, 3], "float32", rng)
    calc = (3 - 1) * 3 + 3 - 1 - 1  # stride 3, kernel 3, padding 1 + 1
    size = [calc + extra, calc + 2 - extra]

    def make(bl, xi, wi):
        # output_padding would violate the stride rule; it is ignored with output_sizes.
        return bl.conv_transpose2d(
            xi, wi, strides=[3, 3], padding=[1, 1, 1, 1], output_padding=[5, 5], output_sizes=size
        )

    out = _run(context, make, [x, w])
    _check(out, _conv_transpose2d_ref(x, w, (3, 3), pads=(1, 1, 1, 1), out_size=size), "float32")


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_conv_transpose2d_depthwise(context, dtype):
    rng = _rng(9)
    x = _data([1, 3, 4, 4], dtype, rng)
    w = _data([3, 2, 2, 2], dtype, rng)  # each input channel -> 2 output channels
    out = _run(
        context,
        lambda bl, xi, wi: bl.conv_transpose2d(xi, wi, groups=3, strides=[2, 2]),
        [x, w],
        dtype,
    )
    _check(out, _conv_transpose2d_ref(x, w, (2, 2), groups=3), dtype)


def test_conv_transpose2d_defaults_and_pads_alias(context):
    rng = _rng(10)
    x = _data([1, 2, 3, 4], "float32", rng)
    w = _data([2, 3, 2, 2], "float32", rng)
    out = _run(context, lambda bl, xi, wi: bl.conv_transpose2d(xi, wi), [x, w])
    _check(out, _conv_transpose2d_ref(x, w), "float32")
    out = _run(context, lambda bl, xi, wi: bl.conv_transpose2d(xi, wi, pads=[1, 0, 0, 1]), [x, w])
    _check(out, _conv_transpose2d_ref(x, w, pads=(1, 0, 0, 1)), "float32")


def test_conv_transpose2d_dynamic_batch_passes_through(context):
    b = _builder(context)
    x = b.input("x", [DYN, 2, 3, 3], "float32")
    w = b.input("w", [2, 5, 3, 3], "float32")
    assert b.operand_shape(b.conv_transpose2d(x, w, strides=[2, 2])) == [DYN, 5, 7, 7]


@pytest.mark.parametrize(
    "kwargs,shapes,message",
    [
        (
            {"strides": [2, 2], "output_padding": [2, 0]},
            {},
            r"output_padding\[0\] 2 must be smaller than strides\[0\] 2",
        ),
        ({"output_padding": [0, 1]}, {}, r"output_padding\[1\] 1 must be smaller"),
        ({"output_padding": [0, 0, 0]}, {}, "output_padding must have 2"),
        ({"output_sizes": [5]}, {}, "output_sizes must have 2"),
        ({"output_sizes": [0, 5]}, {}, r"output_sizes\[0\] must be at least 1"),
        (
            {"strides": [2, 2], "output_sizes": [6, 7]},
            {},
            r"output_sizes\[0\] 6 must be in \[7, 9\)",
        ),
        (
            {"strides": [2, 2], "output_sizes": [7, 9]},
            {},
            r"output_sizes\[1\] 9 must be in \[7, 9\)",
        ),
        ({}, {"w_shape": (2, 4, 3, 3)}, "input channels 4 must equal filter input channels 2"),
        ({"groups": 3}, {}, "input channels 4 must be divisible by groups 3"),
        ({"groups": 0}, {}, "groups must be at least 1"),
        ({"groups": 2}, {"bias_shape": (4,)}, r"bias shape \[4\] must be \[8\]"),
        ({"padding": [3, 3, 0, 0]}, {}, "output height -1 is not a valid dimension"),
        ({"padding": [0, 0]}, {}, "padding must have 4"),
        ({"strides": [0, 1]}, {}, r"strides\[0\] must be at least 1"),
        ({"filter_layout": "hwio"}, {}, "filter_layout"),
        ({"input_layout": "chwn"}, {}, "input_layout"),
        ({}, {"w_type": "float16"}, "filter data type"),
        ({}, {"x_shape": (1, 4, 3)}, "input rank"),
    ],
)
def test_conv_transpose2d_rejects(context, kwargs, shapes, message):
    b, x, w, kwargs = _conv2d_error(context, kwargs, **dict({"x_shape": (1, 4, 3, 3)}, **shapes))
    with pytest.raises(ValueError, match=message):
        b.conv_transpose2d(x, w, **kwargs)


def test_conv_transpose2d_rejects_dynamic_channels(context):
    b = _builder(context)
    x = b.input("x", [1, {"name": "c", "maxSize": 4}, 3, 3], "float32")
    w = b.input("w", [4, 4, 3, 3], "float32")
    with pytest.raises(ValueError, match="dynamic"):
        b.conv_transpose2d(x, w)


def test_dynamic_batch_runs_at_a_smaller_size(context):
    # The kernels must take the batch from the bound tensors, not from maxSize.
    rng = _rng(11)
    x = _data([3, 2, 4, 4], "float32", rng).astype(np.float32)
    w = _data([2, 3, 2, 2], "float32", rng).astype(np.float32)
    m = _data([3, 2, 3], "float32", rng).astype(np.float32)
    k = _data([3, 2], "float32", rng).astype(np.float32)
    b = _builder(context)
    xi = b.input("x", [DYN, 2, 4, 4], "float32")
    mi = b.input("m", [DYN, 2, 3], "float32")
    conv = b.conv2d(
        xi,
        b.constant(_to_layout(w, "iohw", "oihw").copy(), shape=[3, 2, 2, 2], data_type="float32"),
        strides=[2, 2],
    )
    convt = b.conv_transpose2d(xi, b.constant(w, shape=[2, 3, 2, 2], data_type="float32"))
    mm = b.matmul(mi, b.constant(k, shape=[3, 2], data_type="float32"))
    graph = b.build({"conv": conv, "convt": convt, "mm": mm})
    tensors = {
        "x": context.create_tensor([3, 2, 4, 4], "float32", writable=True),
        "m": context.create_tensor([3, 2, 3], "float32", writable=True),
    }
    context.write_tensor(tensors["x"], x)
    context.write_tensor(tensors["m"], m)
    outs = {
        "conv": context.create_tensor([3, 3, 2, 2], "float32", readable=True),
        "convt": context.create_tensor([3, 3, 5, 5], "float32", readable=True),
        "mm": context.create_tensor([3, 2, 2], "float32", readable=True),
    }
    context.dispatch(graph, tensors, outs)
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    _check(
        context.read_tensor(outs["conv"]),
        _conv2d_ref(x64, _to_layout(w64, "iohw", "oihw"), strides=(2, 2)),
        "float32",
    )
    _check(context.read_tensor(outs["convt"]), _conv_transpose2d_ref(x64, w64), "float32")
    _check(context.read_tensor(outs["mm"]), m.astype(np.float64) @ k, "float32")
