"""batch/instance/layer normalization and quantize/dequantize_linear through the Python API.

Covers option combinations the WPT corpus leaves out (axes orders, layouts, defaults, dtypes,
blockwise shapes, saturation, dynamic dimensions) against NumPy references computed in
float64, plus the rejection paths.
"""

import numpy as np
import pytest
import webnn

BACKENDS = webnn.backends()
RNG = np.random.default_rng(1234)

QUANT_RANGES = {
    "uint8": (0, 255),
    "int8": (-128, 127),
    "uint32": (0, 2**32 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "uint4": (0, 15),
    "int4": (-8, 7),
}
NUMPY_OF = {
    "uint8": np.uint8,
    "int8": np.int8,
    "uint32": np.uint32,
    "int32": np.int32,
    "uint4": np.uint8,
    "int4": np.int8,
    "float32": np.float32,
    "float16": np.float16,
}
TOLERANCE = {"float32": {"rtol": 2e-6, "atol": 2e-6}, "float16": {"rtol": 2e-3, "atol": 2e-3}}


@pytest.fixture(params=BACKENDS)
def context(request):
    return webnn.ML().create_context(accelerated=False, backend=request.param)


def run(context, make, **arrays):
    """make(builder, operands) -> output operand; arrays become graph inputs of their dtype."""
    builder = context.create_graph_builder()
    operands = {
        name: builder.input(name, list(a.shape), a.dtype.name) for name, a in arrays.items()
    }
    graph = builder.build({"out": make(builder, operands)})
    return context.compute(graph, arrays)["out"]


def const(builder, array, data_type=None):
    array = np.asarray(array)
    return builder.constant(array, shape=list(array.shape), data_type=data_type or array.dtype.name)


def randn(shape, dtype):
    return RNG.standard_normal(shape).astype(dtype)


def assert_close(actual, expected, dtype):
    """Compares with the float64 reference rounded once to `dtype` (overflow gives inf)."""
    assert actual.dtype == np.dtype(dtype)
    with np.errstate(over="ignore"):
        rounded = expected.astype(dtype).astype(np.float64)
    np.testing.assert_allclose(actual.astype(np.float64), rounded, **TOLERANCE[dtype])


# ---- references (float64) -----------------------------------------------------------------


def ref_batch_norm(x, mean, var, scale, bias, eps, axis):
    shape = [1] * x.ndim
    shape[axis] = x.shape[axis]

    def param(p, default):
        return default if p is None else p.astype(np.float64).reshape(shape)

    x = x.astype(np.float64)
    return (x - param(mean, 0)) / np.sqrt(param(var, 1) + eps) * param(scale, 1.0) + param(
        bias, 0.0
    )


def ref_layer_norm(x, scale, bias, eps, axes):
    x = x.astype(np.float64)
    axes = list(axes)
    mean = x.mean(axis=tuple(axes), keepdims=True)
    var = ((x - mean) ** 2).mean(axis=tuple(axes), keepdims=True)
    y = (x - mean) / np.sqrt(var + eps)
    # scale/bias dims follow the order of `axes`; put them in input order for broadcasting.
    shape = [x.shape[a] if a in axes else 1 for a in range(x.ndim)]
    order = np.argsort(axes)

    def param(p, default):
        return default if p is None else p.astype(np.float64).transpose(order).reshape(shape)

    return y * param(scale, 1.0) + param(bias, 0.0)


def expand_blocks(param, shape):
    """Blockwise broadcast of `param` to `shape` (ops.md §1.4)."""
    out = np.asarray(param)
    for axis, size in enumerate(shape):
        out = np.repeat(out, size // out.shape[axis], axis=axis)
    return out


def ref_quantize(x, scale, zero_point, out_type):
    lo, hi = QUANT_RANGES[out_type]
    q = np.rint(x.astype(np.float64) / expand_blocks(scale, x.shape).astype(np.float64))
    if zero_point is not None:
        q = q + expand_blocks(zero_point, x.shape).astype(np.float64)
    return np.clip(q, lo, hi).astype(NUMPY_OF[out_type])


def ref_dequantize(x, scale, zero_point):
    q = x.astype(np.float64)
    if zero_point is not None:
        q = q - expand_blocks(zero_point, x.shape).astype(np.float64)
    return q * expand_blocks(scale, x.shape).astype(np.float64)


# ---- batch_normalization ------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize(
    "shape,axis",
    [
        ([5], 0),
        ([2, 3, 4], 0),
        ([2, 3, 4], 2),
        ([2, 3, 2, 2], 3),
        ([1, 2, 1, 3, 2], 3),
        ([2, 3, 2, 2, 1, 2], 1),
    ],
)
@pytest.mark.parametrize(
    "with_scale,with_bias", [(False, False), (True, False), (False, True), (True, True)]
)
def test_batch_normalization_axes_and_options(context, dtype, shape, axis, with_scale, with_bias):
    c = shape[axis]
    x = randn(shape, dtype)
    mean, var = randn([c], dtype), np.abs(randn([c], dtype)) + 0.5
    scale = randn([c], dtype) if with_scale else None
    bias = randn([c], dtype) if with_bias else None

    def make(b, ops):
        return b.batch_normalization(
            ops["x"],
            const(b, mean),
            const(b, var),
            scale=const(b, scale) if with_scale else None,
            bias=const(b, bias) if with_bias else None,
            epsilon=1e-3,
            axis=axis,
        )

    out = run(context, make, x=x)
    assert_close(out, ref_batch_norm(x, mean, var, scale, bias, 1e-3, axis), dtype)


def test_batch_normalization_defaults_and_positional(context):
    # Default axis 1 and epsilon 1e-5; scale, bias, epsilon, axis in pywebnn positional order.
    x = randn([2, 4, 3], "float32")
    mean, var = randn([4], "float32"), np.abs(randn([4], "float32"))
    scale, bias = randn([4], "float32"), randn([4], "float32")
    out = run(
        context, lambda b, o: b.batch_normalization(o["x"], o["m"], o["v"]), x=x, m=mean, v=var
    )
    assert_close(out, ref_batch_norm(x, mean, var, None, None, 1e-5, 1), "float32")
    y = randn([3, 2, 4], "float32")
    out = run(
        context,
        lambda b, o: b.batch_normalization(o["y"], o["m"], o["v"], o["s"], o["b"], 0.5, 2),
        y=y,
        m=mean,
        v=var,
        s=scale,
        b=bias,
    )
    assert_close(out, ref_batch_norm(y, mean, var, scale, bias, 0.5, 2), "float32")


def test_batch_normalization_dynamic_batch(context):
    builder = context.create_graph_builder()
    x = builder.input("x", [{"name": "n", "maxSize": 4}, 3], "float32")
    mean, var = randn([3], "float32"), np.abs(randn([3], "float32")) + 0.1
    y = builder.batch_normalization(x, const(builder, mean), const(builder, var))
    assert builder.operand_shape(y) == [{"name": "n", "maxSize": 4}, 3]
    graph = builder.build({"y": y})
    xt = context.create_tensor([4, 3], "float32", writable=True)
    yt = context.create_tensor([4, 3], "float32", readable=True)
    context.resize_tensor(xt, [2, 3])
    context.resize_tensor(yt, [2, 3])
    data = randn([2, 3], "float32")
    context.write_tensor(xt, data)
    context.dispatch(graph, {"x": xt}, {"y": yt})
    assert_close(
        context.read_tensor(yt), ref_batch_norm(data, mean, var, None, None, 1e-5, 1), "float32"
    )


def test_batch_normalization_rejections(context):
    b = context.create_graph_builder()
    x = b.input("x", [2, 3, 4], "float32")
    m3, v3 = const(b, np.zeros(3, np.float32)), const(b, np.ones(3, np.float32))
    with pytest.raises(ValueError, match="axis"):
        b.batch_normalization(x, m3, v3, axis=3)
    with pytest.raises(OverflowError):
        b.batch_normalization(x, m3, v3, axis=-1)
    with pytest.raises(ValueError, match="mean"):
        b.batch_normalization(x, const(b, np.zeros(4, np.float32)), v3)
    with pytest.raises(ValueError, match="variance"):
        b.batch_normalization(x, m3, const(b, np.ones(4, np.float32)), axis=1)
    with pytest.raises(ValueError, match="scale"):
        b.batch_normalization(x, m3, v3, scale=const(b, np.ones((1, 3), np.float32)))
    with pytest.raises(ValueError, match="bias"):
        b.batch_normalization(x, m3, v3, bias=const(b, np.ones(2, np.float32)))
    with pytest.raises(ValueError, match="mean"):
        b.batch_normalization(x, const(b, np.zeros(3, np.float16)), v3)
    with pytest.raises(ValueError, match="data type"):
        b.batch_normalization(
            b.input("i", [2, 3], "int32"),
            const(b, np.zeros(3, np.int32)),
            const(b, np.zeros(3, np.int32)),
        )
    with pytest.raises(ValueError, match="rank"):
        b.batch_normalization(
            b.input("s", [], "float32"),
            const(b, np.zeros(1, np.float32)),
            const(b, np.zeros(1, np.float32)),
            axis=0,
        )
    # The channel axis sizes the parameters, so it must be static.
    dyn = b.input("d", [2, {"name": "c", "maxSize": 3}], "float32")
    with pytest.raises(ValueError, match="dynamic"):
        b.batch_normalization(dyn, m3, v3)
    with pytest.raises(TypeError):
        b.batch_normalization(x, np.zeros(3, np.float32), v3)
    with pytest.raises(TypeError):
        b.batch_normalization(x, m3, v3, epsilon="small")


# ---- instance_normalization ---------------------------------------------------------------


def ref_instance_norm(x, scale, bias, eps, layout):
    if layout == "nhwc":
        x = x.transpose(0, 3, 1, 2)
    y = ref_layer_norm(x, None, None, eps, [2, 3])
    c = x.shape[1]
    if scale is not None:
        y = y * scale.astype(np.float64).reshape(1, c, 1, 1)
    if bias is not None:
        y = y + bias.astype(np.float64).reshape(1, c, 1, 1)
    return y.transpose(0, 2, 3, 1) if layout == "nhwc" else y


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("layout", ["nchw", "nhwc"])
@pytest.mark.parametrize(
    "with_scale,with_bias", [(False, False), (True, False), (False, True), (True, True)]
)
def test_instance_normalization(context, dtype, layout, with_scale, with_bias):
    shape = [2, 3, 4, 5] if layout == "nchw" else [2, 4, 5, 3]
    x = randn(shape, dtype) * 3 + 1
    scale = randn([3], dtype) if with_scale else None
    bias = randn([3], dtype) if with_bias else None

    def make(b, ops):
        return b.instance_normalization(
            ops["x"],
            scale=const(b, scale) if with_scale else None,
            bias=const(b, bias) if with_bias else None,
            epsilon=1e-2,
            layout=layout,
        )

    out = run(context, make, x=x)
    assert_close(out, ref_instance_norm(x, scale, bias, 1e-2, layout), dtype)


def test_instance_normalization_defaults(context):
    x = randn([1, 2, 3, 3], "float32")
    out = run(context, lambda b, o: b.instance_normalization(o["x"]), x=x)
    assert_close(out, ref_instance_norm(x, None, None, 1e-5, "nchw"), "float32")
    # A constant plane normalizes to 0 (+ bias) instead of dividing by zero.
    flat = np.full([1, 2, 2, 2], 7, np.float32)
    bias = np.array([0.5, -1], np.float32)
    out = run(context, lambda b, o: b.instance_normalization(o["x"], None, o["b"]), x=flat, b=bias)
    np.testing.assert_array_equal(out, np.broadcast_to(bias.reshape(1, 2, 1, 1), flat.shape))


def test_instance_normalization_dynamic_batch_and_spatial(context):
    b = context.create_graph_builder()
    n, h = {"name": "n", "maxSize": 2}, {"name": "h", "maxSize": 5}
    y = b.instance_normalization(
        b.input("x", [n, 3, h, 2], "float32"), scale=const(b, np.ones(3, np.float32))
    )
    assert b.operand_shape(y) == [n, 3, h, 2]


def test_instance_normalization_rejections(context):
    b = context.create_graph_builder()
    x = b.input("x", [1, 3, 2, 2], "float32")
    with pytest.raises(ValueError, match="layout"):
        b.instance_normalization(x, layout="NCHW")
    with pytest.raises(ValueError, match="scale"):
        b.instance_normalization(x, scale=const(b, np.ones(3, np.float32)), layout="nhwc")
    with pytest.raises(ValueError, match="bias"):
        b.instance_normalization(x, bias=const(b, np.ones(2, np.float32)))
    with pytest.raises(ValueError, match="bias"):
        b.instance_normalization(x, bias=const(b, np.ones(3, np.float16)))
    with pytest.raises(ValueError, match="rank"):
        b.instance_normalization(b.input("r3", [1, 3, 2], "float32"))
    with pytest.raises(ValueError, match="data type"):
        b.instance_normalization(b.input("i8", [1, 3, 2, 2], "int8"))
    with pytest.raises(ValueError, match="dynamic"):
        b.instance_normalization(
            b.input("d", [1, 2, 2, {"name": "c", "maxSize": 3}], "float32"), layout="nhwc"
        )
    with pytest.raises(TypeError):
        b.instance_normalization(x, layout=1)


# ---- layer_normalization ------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize(
    "shape,axes",
    [
        ([], None),
        ([5], None),
        ([5], [0]),
        ([2, 3, 4], None),
        ([2, 3, 4], []),
        ([2, 3, 4], [0, 2]),
        ([2, 3, 4], [2, 0]),
        ([2, 3, 4, 2], [3, 1]),
        ([2, 3, 4, 2], [1, 3, 0]),
        ([3, 2, 2, 1, 2], [4, 2]),
        ([2, 3, 4], [0, 1, 2]),
    ],
)
@pytest.mark.parametrize("with_params", [False, True])
def test_layer_normalization_axes(context, dtype, shape, axes, with_params):
    x = randn(shape, dtype) * 2
    effective = list(range(1, len(shape))) if axes is None else axes
    param_shape = [shape[a] for a in effective]
    scale = randn(param_shape, dtype) if with_params else None
    bias = randn(param_shape, dtype) if with_params else None

    def make(b, ops):
        return b.layer_normalization(
            ops["x"],
            scale=const(b, scale) if with_params else None,
            bias=const(b, bias) if with_params else None,
            epsilon=1e-3,
            axes=axes,
        )

    out = run(context, make, x=x)
    assert_close(out, ref_layer_norm(x, scale, bias, 1e-3, effective), dtype)


def test_layer_normalization_scale_only_and_default_epsilon(context):
    x = randn([3, 4], "float32")
    scale = randn([4], "float32")
    out = run(context, lambda b, o: b.layer_normalization(o["x"], o["s"]), x=x, s=scale)
    assert_close(out, ref_layer_norm(x, scale, None, 1e-5, [1]), "float32")


def test_layer_normalization_dynamic_dims(context):
    b = context.create_graph_builder()
    n = {"name": "n", "maxSize": 8}
    x = b.input("x", [n, 3, 4], "float32")
    # Dynamic dims pass through on unnormalized axes and on normalized ones without params.
    assert b.operand_shape(
        b.layer_normalization(x, scale=const(b, np.ones((3, 4), np.float32)))
    ) == [n, 3, 4]
    assert b.operand_shape(b.layer_normalization(x, axes=[0, 2])) == [n, 3, 4]
    with pytest.raises(ValueError, match="dynamic"):
        b.layer_normalization(x, scale=const(b, np.ones((8, 4), np.float32)), axes=[0, 2])
    graph = b.build({"y": b.layer_normalization(x, bias=const(b, np.ones((3, 4), np.float32)))})
    xt = context.create_tensor([8, 3, 4], "float32", writable=True)
    yt = context.create_tensor([8, 3, 4], "float32", readable=True)
    context.resize_tensor(xt, [3, 3, 4])
    context.resize_tensor(yt, [3, 3, 4])
    data = randn([3, 3, 4], "float32")
    context.write_tensor(xt, data)
    context.dispatch(graph, {"x": xt}, {"y": yt})
    want = ref_layer_norm(data, None, np.ones((3, 4), np.float32), 1e-5, [1, 2])
    assert_close(context.read_tensor(yt), want, "float32")


def test_layer_normalization_rejections(context):
    b = context.create_graph_builder()
    x = b.input("x", [2, 3, 4], "float32")
    with pytest.raises(ValueError, match="duplicate"):
        b.layer_normalization(x, axes=[1, 1])
    with pytest.raises(ValueError, match="out of range"):
        b.layer_normalization(x, axes=[3])
    with pytest.raises(OverflowError):
        b.layer_normalization(x, axes=[-1])
    with pytest.raises(ValueError, match="scale rank"):
        b.layer_normalization(x, scale=const(b, np.ones(4, np.float32)))
    with pytest.raises(ValueError, match="bias"):
        b.layer_normalization(x, bias=const(b, np.ones((4, 3), np.float32)))
    with pytest.raises(ValueError, match="scale"):
        b.layer_normalization(x, scale=const(b, np.ones((2, 3), np.float32)), axes=[1, 0])
    with pytest.raises(ValueError, match="scale"):
        b.layer_normalization(x, scale=const(b, np.ones((3, 4), np.float16)))
    with pytest.raises(ValueError, match="rank"):
        b.layer_normalization(b.input("s", [], "float32"), bias=const(b, np.ones(1, np.float32)))
    with pytest.raises(ValueError, match="data type"):
        b.layer_normalization(b.input("i", [2, 3], "int32"))
    with pytest.raises(TypeError):
        b.layer_normalization(x, axes=[0.5])
    with pytest.raises(TypeError):
        b.layer_normalization(x, scale=np.ones((3, 4), np.float32))


# ---- quantize_linear ----------------------------------------------------------------------


@pytest.mark.parametrize("in_type", ["float32", "float16"])
@pytest.mark.parametrize("out_type", list(QUANT_RANGES))
def test_quantize_linear_types_and_saturation(context, in_type, out_type):
    lo, hi = QUANT_RANGES[out_type]
    # Values reach far past both ends of every type, and ties check round-half-to-even.
    x = np.array(
        [
            [-1e4, -2.5, -1.5, -0.5, 0, 0.5, 1.5, 2.5],
            [3.25, 100.0, 1e4, -7.0, 7.75, 15.0, 65504.0, -65504.0],
        ],
        in_type,
    )
    scale = np.array([[1.0, 0.5]], in_type)
    zero_point = np.array([[lo, hi]] if lo < 0 else [[3, hi - 3]], NUMPY_OF[out_type])
    if out_type in ("uint32", "int32"):
        x[1, 6:] = [3e9, -3e9] if in_type == "float32" else [65504.0, -65504.0]
        scale[0, 1] = 1.0 / 64 if in_type == "float16" else 2.0**-12
    out = run(
        context,
        lambda b, o: b.quantize_linear(o["x"], const(b, scale), const(b, zero_point, out_type)),
        x=x,
    )
    want = ref_quantize(x, scale, zero_point, out_type)
    assert out.dtype == want.dtype
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize(
    "in_shape,param_shape",
    [
        ([], []),
        ([6], [1]),
        ([6], [3]),
        ([6], [6]),
        ([4, 6], [1, 6]),
        ([4, 6], [2, 3]),
        ([4, 6], [4, 1]),
        ([2, 3, 4], [1, 3, 2]),
        ([2, 2, 2, 4], [2, 1, 2, 2]),
    ],
)
def test_quantize_linear_blockwise(context, in_shape, param_shape):
    x = randn(in_shape, "float32") * 20
    scale = (np.abs(randn(param_shape, "float32")) + 0.25).astype(np.float32)
    zero_point = RNG.integers(-20, 20, param_shape).astype(np.int8)
    out = run(
        context, lambda b, o: b.quantize_linear(o["x"], const(b, scale), const(b, zero_point)), x=x
    )
    np.testing.assert_array_equal(out, ref_quantize(x, scale, zero_point, "int8"))


def test_quantize_linear_default_zero_point_is_uint8(context):
    x = np.array([[-3.0, 0.4, 2.6, 300.0]], np.float32)
    scale = np.array([[0.5, 2.0]], np.float32)
    b = context.create_graph_builder()
    y = b.quantize_linear(b.input("x", [1, 4], "float32"), const(b, scale))
    assert b.operand_data_type(y) == "uint8"
    out = context.compute(b.build({"y": y}), {"x": x})["y"]
    np.testing.assert_array_equal(out, ref_quantize(x, scale, None, "uint8"))


def test_quantize_linear_dynamic_dims(context):
    b = context.create_graph_builder()
    n = {"name": "n", "maxSize": 4}
    x = b.input("x", [n, 6], "float32")
    y = b.quantize_linear(
        x, const(b, np.ones((1, 3), np.float32)), const(b, np.zeros((1, 3), np.int8))
    )
    assert b.operand_shape(y) == [n, 6]
    # Per-element parameters along a dynamic axis must carry the same dynamic dimension.
    s = b.input("s", [n, 1], "float32")
    assert b.operand_shape(b.quantize_linear(x, s)) == [n, 6]
    with pytest.raises(ValueError, match="dynamic"):
        b.quantize_linear(x, const(b, np.ones((2, 6), np.float32)))


def test_quantize_linear_rejections(context):
    b = context.create_graph_builder()
    x = b.input("x", [4, 6], "float32")
    s = const(b, np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match="rank"):
        b.quantize_linear(x, const(b, np.ones(6, np.float32)))
    with pytest.raises(ValueError, match="blockwise"):
        b.quantize_linear(x, const(b, np.ones((3, 3), np.float32)))
    with pytest.raises(ValueError, match="blockwise"):
        b.quantize_linear(x, const(b, np.ones((8, 6), np.float32)))
    with pytest.raises(ValueError, match="zero_point shape"):
        b.quantize_linear(x, s, const(b, np.zeros((2, 1), np.uint8)))
    with pytest.raises(ValueError, match="scale"):
        b.quantize_linear(x, const(b, np.ones((2, 3), np.float16)))
    for bad in ("float32", "int64", "uint64"):
        with pytest.raises(ValueError, match="zero_point"):
            b.quantize_linear(x, s, const(b, np.zeros((2, 3)), bad))
    with pytest.raises(ValueError, match="input"):
        b.quantize_linear(b.input("q", [4, 6], "int8"), s)
    with pytest.raises(TypeError):
        b.quantize_linear(x, 0.5)


# ---- dequantize_linear --------------------------------------------------------------------


@pytest.mark.parametrize("out_type", ["float32", "float16"])
@pytest.mark.parametrize("in_type", list(QUANT_RANGES))
def test_dequantize_linear_types(context, in_type, out_type):
    lo, hi = QUANT_RANGES[in_type]
    x = np.array([[lo, hi, lo + 1, hi - 1], [0, 1, (lo + hi) // 2, hi // 3]], NUMPY_OF[in_type])
    zero_point = np.array([[hi, lo]] if lo < 0 else [[hi, 1]], NUMPY_OF[in_type])
    scale = np.array([[0.125, -3.0]], out_type)
    b = context.create_graph_builder()
    y = b.dequantize_linear(const(b, x, in_type), const(b, scale), const(b, zero_point, in_type))
    assert b.operand_data_type(y) == out_type
    out = context.compute(b.build({"y": y}), {})["y"]
    want = ref_dequantize(x, scale, zero_point)
    assert_close(out, want, out_type)


@pytest.mark.parametrize("in_type", ["int8", "uint4", "int4", "int32"])
def test_dequantize_linear_without_zero_point(context, in_type):
    lo, hi = QUANT_RANGES[in_type]
    x = np.array([lo, -1 if lo < 0 else 2, 0, hi], NUMPY_OF[in_type])
    scale = np.array([0.5, 4.0], np.float32)
    b = context.create_graph_builder()
    y = b.dequantize_linear(const(b, x, in_type), const(b, scale))
    out = context.compute(b.build({"y": y}), {})["y"]
    assert_close(out, ref_dequantize(x, scale, None), "float32")


@pytest.mark.parametrize(
    "in_shape,param_shape",
    [([3, 4], [1, 1]), ([3, 4], [3, 2]), ([6, 4], [2, 4]), ([1, 4, 1, 6], [1, 2, 1, 3])],
)
def test_dequantize_linear_blockwise(context, in_shape, param_shape):
    x = RNG.integers(0, 256, in_shape).astype(np.uint8)
    scale = (randn(param_shape, "float32") + 0.1).astype(np.float32)
    zero_point = RNG.integers(0, 256, param_shape).astype(np.uint8)
    out = run(
        context,
        lambda b, o: b.dequantize_linear(o["x"], const(b, scale), const(b, zero_point)),
        x=x,
    )
    assert_close(out, ref_dequantize(x, scale, zero_point), "float32")


def test_quantize_dequantize_round_trip(context):
    x = randn([2, 8], "float32") * 5
    scale = np.array([[0.1, 0.25], [0.05, 0.5]], np.float32)
    zero_point = np.array([[-3, 2], [0, 7]], np.int8)

    def make(b, ops):
        q = b.quantize_linear(ops["x"], const(b, scale), const(b, zero_point))
        return b.dequantize_linear(q, const(b, scale), const(b, zero_point))

    out = run(context, make, x=x)
    want = ref_dequantize(ref_quantize(x, scale, zero_point, "int8"), scale, zero_point)
    assert_close(out, want, "float32")


def test_dequantize_linear_rejections(context):
    b = context.create_graph_builder()
    x = b.input("x", [4, 6], "uint8")
    s = const(b, np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match="zero_point"):
        b.dequantize_linear(x, s, const(b, np.zeros((2, 3), np.int8)))
    with pytest.raises(ValueError, match="zero_point shape"):
        b.dequantize_linear(x, s, const(b, np.zeros((1, 3), np.uint8)))
    with pytest.raises(ValueError, match="rank"):
        b.dequantize_linear(x, const(b, np.ones((1, 2, 3), np.float32)))
    with pytest.raises(ValueError, match="blockwise"):
        b.dequantize_linear(x, const(b, np.ones((4, 4), np.float32)))
    with pytest.raises(ValueError, match="scale"):
        b.dequantize_linear(x, const(b, np.ones((2, 3), np.int32)))
    for bad in ("float32", "float16", "int64", "uint64"):
        with pytest.raises(ValueError, match="input"):
            b.dequantize_linear(b.input("x_" + bad, [4, 6], bad), s)
    with pytest.raises(TypeError):
        b.dequantize_linear(x, [1.0])
