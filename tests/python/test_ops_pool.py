"""Pooling, global pooling and resample2d beyond the WPT corpus: layouts, defaults, rounding,
data types, dynamic batch and the rejection paths. Expectations are computed with NumPy."""

import math

import numpy as np
import pytest
import webnn

BACKENDS = webnn.backends()
POOLS = ["average_pool2d", "l2_pool2d", "max_pool2d"]


def _context(backend):
    return webnn.ML().create_context(accelerated=False, backend=backend)


def _run(backend, build, feeds):
    """build(builder, inputs) -> operand; feeds: {name: ndarray}. Returns the output array."""
    context = _context(backend)
    b = context.create_graph_builder()
    inputs = {name: b.input(name, list(a.shape), str(a.dtype)) for name, a in feeds.items()}
    out = build(b, inputs)
    graph = b.build({"out": out})
    return context.compute(graph, feeds)["out"]


def _run_dynamic(context, graph, x, out_shape):
    """Runs a graph with dynamic input dimensions through tensors of concrete shapes."""
    xt = context.create_tensor(list(x.shape), str(x.dtype), writable=True)
    yt = context.create_tensor(list(out_shape), str(x.dtype), readable=True)
    context.write_tensor(xt, x)
    context.dispatch(graph, {"x": xt}, {"y": yt})
    return context.read_tensor(yt)


def _builder():
    return _context("cpu").create_graph_builder()


# ---- NumPy references ---------------------------------------------------------------------


def _pool_size(size, window, begin, end, stride, dilation, rounding):
    value = (size - ((window - 1) * dilation + 1) + begin + end) / stride + 1
    return math.ceil(value) if rounding == "ceil" else math.floor(value)


def _pool_ref(
    x,
    kind,
    window_dimensions=None,
    strides=(1, 1),
    dilations=(1, 1),
    padding=(0, 0, 0, 0),
    layout="nchw",
    rounding="floor",
    output_sizes=None,
):
    """Pools an array; values outside the input (padding) take no part at all."""
    if layout == "nhwc":
        x = x.transpose(0, 3, 1, 2)
    n, c, h, w = x.shape
    window = window_dimensions or (h, w)
    if output_sizes is None:
        output_sizes = (
            _pool_size(h, window[0], padding[0], padding[1], strides[0], dilations[0], rounding),
            _pool_size(w, window[1], padding[2], padding[3], strides[1], dilations[1], rounding),
        )
    out = np.zeros((n, c) + tuple(output_sizes), dtype=np.float64 if kind != "max" else x.dtype)
    for i in range(output_sizes[0]):
        rows = [i * strides[0] - padding[0] + k * dilations[0] for k in range(window[0])]
        rows = [r for r in rows if 0 <= r < h]
        for j in range(output_sizes[1]):
            cols = [j * strides[1] - padding[2] + k * dilations[1] for k in range(window[1])]
            cols = [q for q in cols if 0 <= q < w]
            block = x[:, :, rows][:, :, :, cols]
            if kind == "max":
                # A window entirely in the padding sees nothing: the max of nothing is -inf.
                initial = -np.inf if x.dtype.kind == "f" else None
                out[:, :, i, j] = block.max(axis=(2, 3), initial=initial)
            elif kind == "l2":
                out[:, :, i, j] = np.sqrt((block.astype(np.float64) ** 2).sum(axis=(2, 3)))
            else:
                count = block.shape[2] * block.shape[3]
                with np.errstate(invalid="ignore"):  # the mean of nothing is 0 / 0 = NaN
                    out[:, :, i, j] = block.astype(np.float64).sum(axis=(2, 3)) / count
    if layout == "nhwc":
        out = out.transpose(0, 2, 3, 1)
    return out


_KIND = {"average_pool2d": "average", "l2_pool2d": "l2", "max_pool2d": "max"}


def _interp_matrix(in_size, out_size, linear):
    """(out_size, in_size) matrix mapping samples along one axis, with the WebNN resample2d
    coordinate: scale = out / in, c = clamp((o + 0.5) / scale - 0.5, 0, in - 1); nearest
    picks ceil(c - 0.5), linear weighs floor(c) and ceil(c)."""
    m = np.zeros((out_size, in_size))
    scale = out_size / in_size
    for o in range(out_size):
        s = min(max((o + 0.5) / scale - 0.5, 0.0), in_size - 1)
        if not linear:
            m[o, math.ceil(s - 0.5)] = 1
            continue
        lo, hi = math.floor(s), math.ceil(s)
        m[o, lo] += 1 - (s - lo)
        m[o, hi] += s - lo
    return m


def _resample_ref(x, out_sizes, axes, linear):
    y = x.astype(np.float64)
    for axis, size in zip(axes, out_sizes):
        m = _interp_matrix(x.shape[axis], size, linear)
        y = np.moveaxis(np.tensordot(m, np.moveaxis(y, axis, 0), axes=1), 0, axis)
    return y


def _round_half_away(v):
    return np.sign(v) * np.floor(np.abs(v) + 0.5)


def _assert_close(actual, expected, dtype):
    assert actual.dtype == np.dtype(dtype)
    assert actual.shape == expected.shape
    rtol = 2e-3 if dtype == "float16" else 1e-5
    np.testing.assert_allclose(actual.astype(np.float64), expected, rtol=rtol, atol=rtol)


# ---- pooling: values ------------------------------------------------------------------------

POOL_OPTIONS = [
    {},
    {"window_dimensions": [2, 3]},
    {"window_dimensions": [3, 3], "strides": [2, 1]},
    {"window_dimensions": [2, 2], "dilations": [2, 3]},
    {"window_dimensions": [3, 2], "padding": [2, 0, 1, 3]},
    {"window_dimensions": [3, 3], "padding": [1, 1, 1, 1], "strides": [2, 2], "dilations": [2, 1]},
    {"window_dimensions": [2, 2], "strides": [2, 2], "output_shape_rounding": "ceil"},
    {
        "window_dimensions": [3, 3],
        "strides": [3, 2],
        "padding": [0, 2, 1, 0],
        "output_shape_rounding": "ceil",
    },
    {"window_dimensions": [2, 2], "strides": [2, 2], "output_sizes": [3, 4]},
    {
        "window_dimensions": [2, 2],
        "strides": [2, 2],
        "output_sizes": [2, 3],
        "output_shape_rounding": "ceil",
    },
    {"padding": [1, 0, 0, 2]},  # default window (whole input) with padding
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("method", POOLS)
@pytest.mark.parametrize("layout", ["nchw", "nhwc"])
@pytest.mark.parametrize("options", POOL_OPTIONS, ids=lambda o: "-".join(map(str, o.items())))
def test_pool_matches_numpy(backend, method, layout, options):
    rng = np.random.default_rng(1)
    x = rng.uniform(-10, 10, size=(2, 3, 5, 7)).astype(np.float32)
    if layout == "nhwc":
        x = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
    ref_options = dict(options)
    rounding = ref_options.pop("output_shape_rounding", "floor")
    expected = _pool_ref(
        x,
        _KIND[method],
        layout=layout,
        rounding=rounding,
        **{k: tuple(v) for k, v in ref_options.items()},
    )
    actual = _run(
        backend, lambda b, i: getattr(b, method)(i["x"], layout=layout, **options), {"x": x}
    )
    _assert_close(actual, expected, "float32")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("method", POOLS)
def test_pool_float16(backend, method):
    x = np.random.default_rng(2).uniform(-4, 4, size=(1, 2, 6, 6)).astype(np.float16)
    options = {"window_dimensions": [3, 3], "strides": [2, 2], "padding": [1, 1, 1, 1]}
    expected = _pool_ref(
        x.astype(np.float64), _KIND[method], **{k: tuple(v) for k, v in options.items()}
    )
    actual = _run(backend, lambda b, i: getattr(b, method)(i["x"], **options), {"x": x})
    _assert_close(actual, expected, "float16")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "uint32", "int64", "uint64"])
def test_max_pool_integer_types_are_exact(backend, dtype):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(3)
    x = rng.integers(info.min, info.max, size=(1, 2, 4, 5), dtype=dtype, endpoint=True)
    x[0, 0, 0, 0] = info.max
    x[0, 1, 3, 4] = info.min
    options = {"window_dimensions": [2, 3], "padding": [1, 0, 1, 1]}
    expected = _pool_ref(x, "max", **{k: tuple(v) for k, v in options.items()})
    actual = _run(backend, lambda b, i: b.max_pool2d(i["x"], **options), {"x": x})
    assert actual.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(actual, expected)


@pytest.mark.parametrize("backend", BACKENDS)
def test_max_pool_propagates_nan(backend):
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    x[0, 0, 0, 0] = np.nan
    actual = _run(
        backend,
        lambda b, i: b.max_pool2d(i["x"], window_dimensions=[2, 2], strides=[2, 2]),
        {"x": x},
    )
    np.testing.assert_array_equal(actual, np.array([[[[np.nan, 7], [13, 15]]]], np.float32))


@pytest.mark.parametrize("backend", BACKENDS)
def test_windows_entirely_in_padding(backend):
    # Window 1 with padding 1 on each side: the corner windows see no input element.
    x = np.full((1, 1, 2, 2), 3.0, np.float32)
    options = {"window_dimensions": [1, 1], "padding": [1, 1, 1, 1]}
    with np.errstate(invalid="ignore"):
        mean = np.float64(0) / np.float64(0)  # the mean of nothing
    results = {
        m: _run(backend, lambda b, i, m=m: getattr(b, m)(i["x"], **options), {"x": x})
        for m in POOLS
    }
    assert all(r.shape == (1, 1, 4, 4) for r in results.values())
    assert np.isnan(results["average_pool2d"][0, 0, 0, 0]) and np.isnan(mean)
    assert results["l2_pool2d"][0, 0, 0, 0] == np.sqrt(np.sum(np.array([], np.float64)))
    assert results["max_pool2d"][0, 0, 0, 0] == np.max(np.array([], np.float32), initial=-np.inf)
    np.testing.assert_array_equal(results["average_pool2d"][0, 0, 1:3, 1:3], x[0, 0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_pool_positional_arguments_and_aliases(backend):
    x = np.random.default_rng(4).normal(size=(1, 2, 5, 5)).astype(np.float32)
    expected = _pool_ref(
        x, "average", window_dimensions=(3, 3), strides=(2, 2), padding=(1, 1, 0, 0)
    )
    positional = _run(
        backend,
        lambda b, i: b.average_pool2d(
            i["x"], [3, 3], [2, 2], [1, 1], [1, 1, 0, 0], "nchw", "floor", None
        ),
        {"x": x},
    )
    _assert_close(positional, expected, "float32")
    aliased = _run(
        backend,
        lambda b, i: b.average_pool2d(
            x=i["x"], window_dimensions=(3, 3), strides=(np.int64(2), 2), pads=[1, 1, 0, 0]
        ),
        {"x": x},
    )
    _assert_close(aliased, expected, "float32")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("method", ["global_average_pool", "global_max_pool"])
@pytest.mark.parametrize("layout", ["nchw", "nhwc"])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_global_pool_matches_numpy(backend, method, layout, dtype):
    x = np.random.default_rng(5).uniform(-5, 5, size=(2, 3, 4, 5)).astype(dtype)
    spatial = (2, 3) if layout == "nchw" else (1, 2)
    wide = x.astype(np.float64)
    if method == "global_average_pool":
        expected = wide.mean(axis=spatial, keepdims=True)
    else:
        expected = wide.max(axis=spatial, keepdims=True)
    actual = _run(backend, lambda b, i: getattr(b, method)(i["x"], layout=layout), {"x": x})
    _assert_close(actual, expected, dtype)


@pytest.mark.parametrize("backend", BACKENDS)
def test_global_pool_equals_pool_without_window(backend):
    x = np.random.default_rng(6).normal(size=(1, 4, 3, 3)).astype(np.float32)
    context = _context(backend)
    b = context.create_graph_builder()
    xi = b.input("x", [1, 4, 3, 3], "float32")
    graph = b.build(
        {
            "g": b.global_average_pool(xi),
            "p": b.average_pool2d(xi),
            "gm": b.global_max_pool(xi),
            "pm": b.max_pool2d(xi),
        }
    )
    out = context.compute(graph, {"x": x})
    np.testing.assert_array_equal(out["g"], out["p"])
    np.testing.assert_array_equal(out["gm"], out["pm"])
    np.testing.assert_allclose(out["g"][..., 0, 0], x.mean(axis=(2, 3)), rtol=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("method", POOLS + ["global_average_pool", "global_max_pool"])
def test_pool_dynamic_batch_passes_through(backend, method):
    context = _context(backend)
    b = context.create_graph_builder()
    batch = {"name": "batch", "maxSize": 4}
    xi = b.input("x", [batch, 5, 5, 2], "float32")
    y = getattr(b, method)(xi, layout="nhwc")
    assert b.operand_shape(y) == [batch, 1, 1, 2]
    graph = b.build({"y": y})
    x = np.random.default_rng(7).normal(size=(3, 5, 5, 2)).astype(np.float32)
    actual = _run_dynamic(context, graph, x, [3, 1, 1, 2])
    kind = {"global_average_pool": "average", "global_max_pool": "max"}.get(method)
    expected = _pool_ref(x, kind or _KIND[method], layout="nhwc")
    _assert_close(actual, expected, "float32")


# ---- pooling: output shapes and rejections --------------------------------------------------


def test_pool_output_shapes():
    b = _builder()
    x = b.input("x", [1, 3, 7, 7], "float32")
    for options, shape in [
        ({"window_dimensions": [4, 4], "padding": [1, 1, 1, 1], "strides": [2, 2]}, [1, 3, 3, 3]),
        (
            {
                "window_dimensions": [4, 4],
                "padding": [1, 1, 1, 1],
                "strides": [2, 2],
                "output_shape_rounding": "ceil",
            },
            [1, 3, 4, 4],
        ),
        (
            {
                "window_dimensions": [4, 4],
                "padding": [1, 1, 1, 1],
                "strides": [2, 2],
                "output_shape_rounding": "ceil",
                "output_sizes": [3, 3],
            },
            [1, 3, 3, 3],
        ),
        (
            {
                "window_dimensions": [4, 4],
                "padding": [1, 1, 1, 1],
                "strides": [2, 2],
                "output_sizes": [4, 4],
            },
            [1, 3, 4, 4],
        ),
        ({"window_dimensions": [7, 7], "padding": [3, 3, 3, 3]}, [1, 3, 7, 7]),
    ]:
        for method in POOLS:
            assert b.operand_shape(getattr(b, method)(x, **options)) == shape, (method, options)


BAD_POOL_OPTIONS = [
    ({"window_dimensions": [1, 1, 1]}, "window_dimensions"),
    ({"window_dimensions": [0, 2]}, "window_dimensions"),
    ({"window_dimensions": [8, 2]}, "window"),
    ({"window_dimensions": [2, 8]}, "window"),
    ({"window_dimensions": [3, 3], "dilations": [3, 1]}, "window"),
    ({"padding": [1, 1]}, "padding"),
    ({"strides": [2]}, "strides"),
    ({"strides": [0, 2]}, "strides"),
    ({"dilations": [1, 1, 2]}, "dilations"),
    ({"dilations": [1, 0]}, "dilations"),
    (
        {
            "window_dimensions": [2, 2],
            "padding": [2, 2, 2, 2],
            "strides": [2, 2],
            "output_sizes": [3, 3],
        },
        "output_sizes",
    ),
    (
        {"window_dimensions": [2, 2], "strides": [2, 2], "output_sizes": [2, 3]},
        "output_sizes",
    ),  # floor height with ceil width
    ({"window_dimensions": [2, 2], "output_sizes": [1, 2, 4, 4]}, "output_sizes"),
    ({"window_dimensions": [2, 2], "output_sizes": [0, 4]}, "output_sizes"),
    ({"padding": [2**32 - 1, 2**32 - 1, 0, 0]}, "valid dimension"),
    ({"padding": [0, 0, 2**63 - 1, 2**63 - 1]}, "valid dimension"),
    ({"window_dimensions": [2**62, 2], "dilations": [2**62, 1]}, "window"),
    ({"layout": "NCHW"}, "layout"),
    ({"output_shape_rounding": "round"}, "output_shape_rounding"),
]


@pytest.mark.parametrize("method", POOLS)
@pytest.mark.parametrize(
    "options,message", BAD_POOL_OPTIONS, ids=lambda v: str(v) if isinstance(v, str) else None
)
def test_pool_rejects_bad_options(method, options, message):
    b = _builder()
    x = b.input("x", [1, 2, 5, 5], "float32")
    with pytest.raises(ValueError, match=message):
        getattr(b, method)(x, label="p1", **options)


@pytest.mark.parametrize("method", POOLS + ["global_average_pool", "global_max_pool"])
def test_pool_rejects_bad_inputs(method):
    b = _builder()
    with pytest.raises(ValueError, match="rank"):
        getattr(b, method)(b.input("x", [1, 5, 5], "float32"))
    with pytest.raises(ValueError, match="rank"):
        getattr(b, method)(b.input("y", [1, 1, 5, 5, 1], "float32"))
    if method != "max_pool2d":
        with pytest.raises(ValueError, match="int32"):
            getattr(b, method)(b.input("z", [1, 1, 5, 5], "int32"))
    # Channels and spatial axes need static sizes; only the batch may be dynamic.
    for k, (shape, layout) in enumerate(
        [
            ([1, {"name": "c", "maxSize": 4}, 5, 5], "nchw"),
            ([1, 5, {"name": "w", "maxSize": 5}, 2], "nhwc"),
            ([1, 2, {"name": "h", "maxSize": 5}, 5], "nchw"),
        ]
    ):
        xi = b.input(f"dynamic{k}", shape, "float32")
        with pytest.raises(ValueError, match="dynamic"):
            getattr(b, method)(xi, layout=layout)


def test_pool_rejects_int4_and_unknown_layout_for_global_pools():
    b = _builder()
    x = b.input("x", [1, 2, 4, 4], "float32")
    with pytest.raises(ValueError, match="layout"):
        b.global_max_pool(x, layout="hwcn")
    with pytest.raises(ValueError, match="int4"):
        b.max_pool2d(b.input("q", [1, 2, 4, 4], "int4"))


def test_pool_error_names_op_and_label():
    b = _builder()
    x = b.input("x", [1, 2, 5, 5], "float32")
    with pytest.raises(ValueError, match=r"maxPool2d 'stem'.*strides.*got 3"):
        b.max_pool2d(x, strides=[1, 2, 3], label="stem")


def test_pool_python_type_errors():
    b = _builder()
    x = b.input("x", [1, 2, 5, 5], "float32")
    with pytest.raises(TypeError):
        b.average_pool2d(x, window_dimensions=3)
    with pytest.raises(TypeError):
        b.average_pool2d(x, padding=["1", 0, 0, 0])
    with pytest.raises(TypeError):
        b.max_pool2d(x, layout=1)
    with pytest.raises(TypeError):
        b.l2_pool2d("x")
    with pytest.raises(OverflowError):
        b.max_pool2d(x, strides=[-1, 1])


# ---- resample2d -----------------------------------------------------------------------------

RESAMPLE_CASES = [
    # (input shape, options, output shape)
    ((1, 2, 3, 4), {}, (1, 2, 3, 4)),
    ((1, 2, 3, 4), {"scales": [2.0, 3.0]}, (1, 2, 6, 12)),
    ((1, 2, 3, 4), {"scales": [1.5, 0.75]}, (1, 2, 4, 3)),
    ((1, 2, 6, 8), {"scales": [0.5, 0.5]}, (1, 2, 3, 4)),
    ((1, 2, 5, 4), {"sizes": [3, 7]}, (1, 2, 3, 7)),
    ((1, 2, 5, 4), {"sizes": [7, 3], "scales": [0.1, 0.1]}, (1, 2, 7, 3)),
    ((2, 3, 4, 1), {"sizes": [5, 2], "axes": [1, 2]}, (2, 5, 2, 1)),
    ((2, 3, 4, 5), {"sizes": [3, 6], "axes": [3, 1]}, (2, 6, 4, 3)),
    ((2, 3, 4, 5), {"scales": [2.0, 0.5], "axes": [0, 2]}, (4, 3, 2, 5)),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("mode", ["nearest-neighbor", "linear"])
@pytest.mark.parametrize(
    "shape,options,out_shape", RESAMPLE_CASES, ids=lambda v: str(v).replace(" ", "")
)
def test_resample2d_matches_numpy(backend, mode, shape, options, out_shape):
    x = np.random.default_rng(8).uniform(-10, 10, size=shape).astype(np.float32)
    axes = options.get("axes", [2, 3])
    expected = _resample_ref(x, [out_shape[a] for a in axes], axes, mode == "linear")
    actual = _run(backend, lambda b, i: b.resample2d(i["x"], mode=mode, **options), {"x": x})
    _assert_close(actual, expected, "float32")


@pytest.mark.parametrize("backend", BACKENDS)
def test_resample2d_well_known_cases(backend):
    x = np.random.default_rng(9).normal(size=(1, 2, 4, 6)).astype(np.float32)
    up = _run(backend, lambda b, i: b.resample2d(i["x"], scales=[2.0, 3.0]), {"x": x})
    np.testing.assert_array_equal(up, x.repeat(2, axis=2).repeat(3, axis=3))
    # Half-pixel linear halving averages each 2x2 block.
    down = _run(backend, lambda b, i: b.resample2d(i["x"], sizes=[2, 3], mode="linear"), {"x": x})
    blocks = x.reshape(1, 2, 2, 2, 3, 2).mean(axis=(3, 5))
    np.testing.assert_allclose(down, blocks, rtol=1e-6)
    # scales and the sizes they produce give the same result.
    by_scale = _run(
        backend, lambda b, i: b.resample2d(i["x"], scales=[0.75, 0.5], mode="linear"), {"x": x}
    )
    by_size = _run(
        backend, lambda b, i: b.resample2d(i["x"], sizes=[3, 3], mode="linear"), {"x": x}
    )
    np.testing.assert_array_equal(by_scale, by_size)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", ["float16", "int8", "uint8"])
@pytest.mark.parametrize("mode", ["nearest-neighbor", "linear"])
def test_resample2d_other_types(backend, dtype, mode):
    rng = np.random.default_rng(10)
    if dtype == "float16":
        x = rng.uniform(-5, 5, size=(1, 2, 3, 5)).astype(dtype)
    else:
        info = np.iinfo(dtype)
        x = rng.integers(info.min, info.max, size=(1, 2, 3, 5), dtype=dtype, endpoint=True)
    wide = _resample_ref(x, [7, 4], [2, 3], mode == "linear")
    actual = _run(backend, lambda b, i: b.resample2d(i["x"], sizes=[7, 4], mode=mode), {"x": x})
    assert actual.dtype == np.dtype(dtype)
    if dtype == "float16":
        _assert_close(actual, wide, dtype)
    else:
        # Integers: the interpolated value rounded half away from zero (it stays in range).
        np.testing.assert_array_equal(actual, _round_half_away(wide).astype(dtype))


@pytest.mark.parametrize("backend", BACKENDS)
def test_resample2d_dynamic_batch(backend):
    context = _context(backend)
    b = context.create_graph_builder()
    batch = {"name": "n", "maxSize": 3}
    xi = b.input("x", [batch, 2, 2, 3], "float32")
    y = b.resample2d(xi, scales=[2.0, 2.0], mode="linear")
    assert b.operand_shape(y) == [batch, 2, 4, 6]
    graph = b.build({"y": y})
    x = np.random.default_rng(11).normal(size=(2, 2, 2, 3)).astype(np.float32)
    actual = _run_dynamic(context, graph, x, [2, 2, 4, 6])
    _assert_close(actual, _resample_ref(x, [4, 6], [2, 3], True), "float32")


def test_resample2d_output_shapes():
    b = _builder()
    x = b.input("x", [1, 1, 10, 10], "float32")
    # Scales are IDL floats: 0.7 rounds to 0.69999999 in float32, so floor(10 * 0.7) is 6.
    assert b.operand_shape(b.resample2d(x, scales=[0.7, 0.3])) == [1, 1, 6, 3]
    assert b.operand_shape(b.resample2d(x, scales=[0.25, 1.0])) == [1, 1, 2, 10]
    assert b.operand_shape(b.resample2d(x, sizes=[1, 2], axes=[0, 2])) == [1, 1, 2, 10]


BAD_RESAMPLE_OPTIONS = [
    ({"scales": [1.0, 1.0, 2.0]}, "scales"),
    ({"scales": [1.0, -2.0]}, "scales"),
    ({"scales": [0.0, 2.0]}, "scales"),
    ({"scales": [float("nan"), 2.0]}, "scales"),
    ({"scales": [float("inf"), 2.0]}, "scales"),
    ({"scales": [1e300, 1.0]}, "scales"),  # not representable as an IDL float
    ({"scales": [0.02, 0.8]}, "valid dimension"),
    ({"scales": [2.0**32 - 1, 1.0]}, "valid dimension"),
    ({"sizes": [1, 1, 4, 6]}, "sizes"),
    ({"sizes": [0, 1]}, "sizes"),
    ({"sizes": [1, 2**31]}, "sizes"),
    ({"axes": [0, 1, 2]}, "axes"),
    ({"axes": [3, 4]}, "axes"),
    ({"axes": [1, 1]}, "duplicate"),
    ({"mode": "bilinear"}, "mode"),
]


@pytest.mark.parametrize(
    "options,message", BAD_RESAMPLE_OPTIONS, ids=lambda v: str(v) if isinstance(v, str) else None
)
def test_resample2d_rejects_bad_options(options, message):
    b = _builder()
    x = b.input("x", [1, 1, 2, 4], "float32")
    with pytest.raises(ValueError, match=message):
        b.resample2d(x, **options)


def test_resample2d_rejects_bad_inputs():
    b = _builder()
    with pytest.raises(ValueError, match="rank"):
        b.resample2d(b.input("x", [2, 4], "float32"))
    for dtype in ["int32", "uint32", "int64", "uint64", "int4", "uint4"]:
        with pytest.raises(ValueError, match=dtype):
            b.resample2d(b.input(f"x_{dtype}", [1, 1, 2, 2], dtype))
    dyn = b.input("d", [1, 1, {"name": "h", "maxSize": 8}, 4], "float32")
    with pytest.raises(ValueError, match="dynamic"):
        b.resample2d(dyn, scales=[2.0, 2.0])
    # Axes that are not resampled may stay dynamic.
    assert b.operand_shape(b.resample2d(dyn, sizes=[2, 3], axes=[0, 1])) == [
        2,
        3,
        {"name": "h", "maxSize": 8},
        4,
    ]


def test_resample2d_python_type_errors():
    b = _builder()
    x = b.input("x", [1, 1, 2, 4], "float32")
    with pytest.raises(TypeError):
        b.resample2d(x, scales=["2", "2"])
    with pytest.raises(TypeError):
        b.resample2d(x, sizes=4)
    with pytest.raises(OverflowError):
        b.resample2d(x, axes=[-1, 2])


def test_pool_output_sizes_messages_never_list_an_invalid_rounding_as_a_size():
    # A window taller than the input: only the ceil rounding gives a size. The message said
    # "output_sizes [0,2] must equal the floor-rounded [0,2]" (0 marked "no valid size").
    b = _builder()
    x = b.input("x", [1, 1, 1, 4], "float32")
    with pytest.raises(
        ValueError, match=r"output_sizes entries must be at least 1 \(got \[0,2\]\)"
    ):
        b.max_pool2d(x, window_dimensions=[2, 2], strides=[2, 2], output_sizes=[0, 2])
    with pytest.raises(
        ValueError,
        match=r"output_sizes \[2,2\] must equal the floor-rounded \[none,2\] or the ceil-rounded "
        r"\[1,2\] output sizes",
    ):
        b.max_pool2d(x, window_dimensions=[2, 2], strides=[2, 2], output_sizes=[2, 2])
    y = b.max_pool2d(x, window_dimensions=[2, 2], strides=[2, 2], output_sizes=[1, 2])
    assert b.operand_shape(y) == [1, 1, 1, 2]
