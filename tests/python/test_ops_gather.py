"""gather, gather_elements, gather_nd, scatter_elements, scatter_nd, where: options, data
types, index edge cases and rejections beyond the WPT corpus, checked against NumPy."""

import numpy as np
import pytest
import webnn

BACKENDS = webnn.backends()
INDEX_TYPES = ["int32", "uint32", "int64"]
# Data types and the NumPy type their values are exchanged in (4-bit: one value per byte).
DATA_TYPES = {
    "float32": np.float32,
    "float16": np.float16,
    "int32": np.int32,
    "uint32": np.uint32,
    "int64": np.int64,
    "uint64": np.uint64,
    "int8": np.int8,
    "uint8": np.uint8,
    "int4": np.int8,
    "uint4": np.uint8,
}
BYTE_TYPES = [t for t in DATA_TYPES if not t.endswith("int4")]


def _context(backend):
    return webnn.ML().create_context(accelerated=False, backend=backend)


def _values(shape, data_type, seed=0):
    """Distinct-ish values valid for `data_type` (4-bit types hold [-8, 7] / [0, 15])."""
    rng = np.random.default_rng(seed)
    lo, hi = {"int4": (-8, 8), "uint4": (0, 16), "int8": (-128, 128), "uint8": (0, 256)}.get(
        data_type, (-1000, 1000)
    )
    if data_type.startswith("uint") and data_type != "uint4" and data_type != "uint8":
        lo = 0
    values = rng.integers(lo, hi, size=shape)
    if data_type.startswith("float"):
        values = values + rng.choice([0.0, 0.25, 0.5], size=shape)
    return np.asarray(values).astype(DATA_TYPES[data_type])


def _run(backend, make, **inputs):
    """Builds make(builder, *operands) from named (array, data_type) inputs and computes it."""
    context = _context(backend)
    builder = context.create_graph_builder()
    operands = [
        builder.input(name, list(array.shape), data_type)
        for name, (array, data_type) in inputs.items()
    ]
    graph = builder.build({"out": make(builder, *operands)})
    feeds = {name: array for name, (array, _) in inputs.items()}
    return context.compute(graph, feeds)["out"]


def _norm(indices, size):
    """Index semantics of the spec: [-n, n) counts from the end; the rest is clamped."""
    indices = np.asarray(indices, dtype=np.int64)
    return np.clip(np.where(indices < 0, indices + size, indices), 0, size - 1)


def _np_gather_nd(x, indices):
    indices = np.asarray(indices, dtype=np.int64)
    k = indices.shape[-1]
    tuples = indices.reshape(-1, k)
    slices = [x[tuple(_norm(t[d], x.shape[d]) for d in range(k))] for t in tuples]
    return np.array(slices, dtype=x.dtype).reshape(indices.shape[:-1] + x.shape[k:])


def _np_scatter_elements(x, indices, updates, axis):
    out = x.copy()
    norm = _norm(indices, x.shape[axis])
    for idx in np.ndindex(*indices.shape):
        target = list(idx)
        target[axis] = norm[idx]
        out[tuple(target)] = updates[idx]
    return out


def _np_scatter_nd(x, indices, updates):
    out = x.copy()
    indices = np.asarray(indices, dtype=np.int64)
    k = indices.shape[-1]
    tuples = indices.reshape(-1, k)
    slices = updates.reshape((len(tuples),) + x.shape[k:])
    for t, s in zip(tuples, slices):
        out[tuple(_norm(t[d], x.shape[d]) for d in range(k))] = s
    return out


def _assert_equal(actual, expected):
    assert actual.shape == expected.shape
    np.testing.assert_array_equal(actual, expected)


# ---- gather -----------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("axis", [0, 1, 2])
@pytest.mark.parametrize("indices_shape", [[], [4], [2, 3]])
def test_gather_axes_and_index_ranks(backend, axis, indices_shape):
    x = _values([3, 4, 5], "float32")
    size = x.shape[axis]
    rng = np.random.default_rng(axis + len(indices_shape))
    indices = rng.integers(-size - 2, size + 2, size=indices_shape).astype(np.int32)
    out = _run(
        backend,
        lambda b, xi, ii: b.gather(xi, ii, axis=axis),
        x=(x, "float32"),
        i=(indices, "int32"),
    )
    _assert_equal(out, np.take(x, _norm(indices, size), axis=axis))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("data_type", list(DATA_TYPES))
@pytest.mark.parametrize("index_type", INDEX_TYPES)
def test_gather_data_and_index_types(backend, data_type, index_type):
    x = _values([4, 3], data_type)
    indices = np.array([[3, 0], [1, 2]], dtype=DATA_TYPES[index_type])
    axis = INDEX_TYPES.index(index_type) % 2  # positional axis, both values
    out = _run(
        backend, lambda b, xi, ii: b.gather(xi, ii, axis), x=(x, data_type), i=(indices, index_type)
    )
    expected = np.take(x, _norm(indices.astype(np.int64), x.shape[axis]), axis=axis)
    assert out.dtype == x.dtype
    _assert_equal(out, expected)


@pytest.mark.parametrize("backend", BACKENDS)
def test_gather_default_axis_and_extreme_indices(backend):
    x = _values([5, 2], "int32")
    indices = np.array(
        [np.iinfo(np.int64).min, -6, -5, -1, 4, 5, np.iinfo(np.int64).max], dtype=np.int64
    )
    out = _run(backend, lambda b, xi, ii: b.gather(xi, ii), x=(x, "int32"), i=(indices, "int64"))
    _assert_equal(out, x[[0, 0, 0, 4, 4, 4, 4]])
    big = np.array([0, 4, np.iinfo(np.uint32).max], dtype=np.uint32)
    out = _run(backend, lambda b, xi, ii: b.gather(xi, ii), x=(x, "int32"), i=(big, "uint32"))
    _assert_equal(out, x[[0, 4, 4]])


@pytest.mark.parametrize("backend", BACKENDS)
def test_gather_keyword_names_and_constant_indices(backend):
    context = _context(backend)
    b = context.create_graph_builder()
    x = _values([2, 3], "float16")
    xi = b.input("x", [2, 3], "float16")
    indices = b.constant(np.array([2, -3, 1], dtype=np.int32))
    graph = b.build({"out": b.gather(x=xi, indices=indices, axis=1, label="g")})
    _assert_equal(context.compute(graph, {"x": x})["out"], x[:, [2, 0, 1]])


@pytest.mark.parametrize("backend", BACKENDS)
def test_gather_dynamic_dims(backend):
    context = _context(backend)
    b = context.create_graph_builder()
    xi = b.input("x", [{"name": "batch", "maxSize": 4}, 5], "float32")
    ii = b.input("i", [{"name": "n", "maxSize": 3}], "int32")
    y = b.gather(xi, ii, axis=1)
    assert b.operand_shape(y) == [{"name": "batch", "maxSize": 4}, {"name": "n", "maxSize": 3}]
    graph = b.build({"y": y})
    x = _values([2, 5], "float32")
    indices = np.array([4, -1], dtype=np.int32)
    xt = context.create_tensor([4, 5], "float32", writable=True)
    it = context.create_tensor([3], "int32", writable=True)
    yt = context.create_tensor([4, 3], "float32", readable=True)
    context.resize_tensor(xt, [2, 5])
    context.resize_tensor(it, [2])
    context.resize_tensor(yt, [2, 2])
    context.write_tensor(xt, x)
    context.write_tensor(it, indices)
    context.dispatch(graph, {"x": xt, "i": it}, {"y": yt})
    _assert_equal(context.read_tensor(yt), x[:, [4, 4]])


@pytest.mark.parametrize("backend", BACKENDS)
def test_gather_from_empty_dynamic_axis_is_a_runtime_error(backend):
    context = _context(backend)
    b = context.create_graph_builder()
    xi = b.input("x", [{"name": "n", "maxSize": 4}, 2], "float32")
    ii = b.input("i", [1], "int32")
    graph = b.build({"y": b.gather(xi, ii)})
    xt = context.create_tensor([0, 2], "float32", writable=True)
    it = context.create_tensor([1], "int32", writable=True)
    yt = context.create_tensor([1, 2], "float32", readable=True)
    with pytest.raises(RuntimeError):
        context.dispatch(graph, {"x": xt, "i": it}, {"y": yt})


# ---- gather_elements --------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("axis", [0, 1, 2])
@pytest.mark.parametrize("index_type", INDEX_TYPES)
def test_gather_elements_axes(backend, axis, index_type):
    x = _values([3, 4, 2], "float32")
    shape = list(x.shape)
    shape[axis] = 5  # the indexed axis may be longer than the input's
    rng = np.random.default_rng(axis)
    lo = 0 if index_type == "uint32" else -x.shape[axis] - 2
    indices = rng.integers(lo, x.shape[axis] + 2, size=shape).astype(DATA_TYPES[index_type])
    out = _run(
        backend,
        lambda b, xi, ii: b.gather_elements(xi, ii, axis=axis),
        x=(x, "float32"),
        i=(indices, index_type),
    )
    _assert_equal(out, np.take_along_axis(x, _norm(indices, x.shape[axis]), axis=axis))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("data_type", list(DATA_TYPES))
def test_gather_elements_data_types_default_axis(backend, data_type):
    x = _values([3, 2], data_type)
    indices = np.array([[2, -1], [0, 1]], dtype=np.int64)
    out = _run(
        backend, lambda b, xi, ii: b.gather_elements(xi, ii), x=(x, data_type), i=(indices, "int64")
    )
    _assert_equal(out, np.take_along_axis(x, _norm(indices, 3), axis=0))


# ---- gather_nd --------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("indices_shape", [[1], [3], [4, 1], [2, 2], [2, 3], [2, 2, 2]])
def test_gather_nd_index_depths(backend, indices_shape):
    x = _values([3, 4, 2], "float32")
    rng = np.random.default_rng(len(indices_shape))
    indices = rng.integers(-6, 7, size=indices_shape).astype(np.int32)
    out = _run(
        backend, lambda b, xi, ii: b.gather_nd(xi, ii), x=(x, "float32"), i=(indices, "int32")
    )
    _assert_equal(out, _np_gather_nd(x, indices))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("data_type", list(DATA_TYPES))
@pytest.mark.parametrize("index_type", INDEX_TYPES)
def test_gather_nd_data_and_index_types(backend, data_type, index_type):
    x = _values([3, 2, 2], data_type)
    indices = np.array([[2, 1], [0, 5], [1, 0]], dtype=DATA_TYPES[index_type])
    out = _run(
        backend,
        lambda b, xi, ii: b.gather_nd(input=xi, indices=ii),
        x=(x, data_type),
        i=(indices, index_type),
    )
    _assert_equal(out, _np_gather_nd(x, indices))


# ---- scatter_elements -------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_scatter_elements_axes_duplicates_and_clamping(backend, axis):
    x = _values([3, 4, 2], "float32")
    shape = list(x.shape)
    shape[axis] = 2
    rng = np.random.default_rng(axis)
    # Few distinct targets, so duplicates (last write wins) and clamped values occur.
    indices = rng.integers(-x.shape[axis] - 1, x.shape[axis] + 1, size=shape).astype(np.int64)
    updates = _values(shape, "float32", seed=1)
    out = _run(
        backend,
        lambda b, xi, ii, ui: b.scatter_elements(xi, ii, ui, axis=axis),
        x=(x, "float32"),
        i=(indices, "int64"),
        u=(updates, "float32"),
    )
    _assert_equal(out, _np_scatter_elements(x, indices, updates, axis))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("data_type", BYTE_TYPES)
@pytest.mark.parametrize("index_type", INDEX_TYPES)
def test_scatter_elements_types_default_axis(backend, data_type, index_type):
    x = _values([3, 2], data_type)
    indices = np.array([[2, 0], [2, 1]], dtype=DATA_TYPES[index_type])
    updates = _values([2, 2], data_type, seed=2)
    out = _run(
        backend,
        lambda b, xi, ii, ui: b.scatter_elements(xi, ii, ui),
        x=(x, data_type),
        i=(indices, index_type),
        u=(updates, data_type),
    )
    _assert_equal(out, _np_scatter_elements(x, indices, updates, 0))


# ---- scatter_nd -------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("indices_shape", [[1], [3], [3, 1], [2, 2], [4, 3], [2, 2, 1]])
def test_scatter_nd_index_depths(backend, indices_shape):
    x = _values([3, 4, 2], "float32")
    rng = np.random.default_rng(len(indices_shape) + indices_shape[-1])
    indices = rng.integers(-4, 5, size=indices_shape).astype(np.int32)
    k = indices_shape[-1]
    updates = _values(indices_shape[:-1] + list(x.shape[k:]), "float32", seed=3)
    out = _run(
        backend,
        lambda b, xi, ii, ui: b.scatter_nd(xi, ii, ui),
        x=(x, "float32"),
        i=(indices, "int32"),
        u=(updates, "float32"),
    )
    _assert_equal(out, _np_scatter_nd(x, indices, updates))


@pytest.mark.parametrize("backend", BACKENDS)
def test_scatter_nd_duplicates_last_write_wins(backend):
    x = np.zeros([4], dtype=np.int32)
    indices = np.array([[1], [3], [-3], [1]], dtype=np.int32)
    updates = np.array([10, 20, 30, 40], dtype=np.int32)
    out = _run(
        backend,
        lambda b, xi, ii, ui: b.scatter_nd(xi, ii, ui),
        x=(x, "int32"),
        i=(indices, "int32"),
        u=(updates, "int32"),
    )
    _assert_equal(out, _np_scatter_nd(x, indices, updates))
    assert out[1] == 40


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("data_type", BYTE_TYPES)
@pytest.mark.parametrize("index_type", INDEX_TYPES)
def test_scatter_nd_types(backend, data_type, index_type):
    x = _values([3, 2], data_type)
    indices = np.array([[2], [0]], dtype=DATA_TYPES[index_type])
    updates = _values([2, 2], data_type, seed=4)
    out = _run(
        backend,
        lambda b, xi, ii, ui: b.scatter_nd(xi, ii, ui),
        x=(x, data_type),
        i=(indices, index_type),
        u=(updates, data_type),
    )
    _assert_equal(out, _np_scatter_nd(x, indices, updates))


# ---- where ------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "shapes",
    [
        ([], [], []),
        ([2, 3], [], [3]),
        ([3], [2, 1], [1, 3]),
        ([2, 1, 3], [4, 1], [1]),
        ([1], [2, 3], [2, 3]),
    ],
)
def test_where_broadcasting(backend, shapes):
    cond_shape, true_shape, false_shape = shapes
    rng = np.random.default_rng(len(cond_shape))
    # Any non-zero condition selects true_value, not only 1.
    condition = rng.choice(np.array([0, 1, 2, 255], dtype=np.uint8), size=cond_shape)
    on_true = _values(true_shape, "float32", seed=5)
    on_false = _values(false_shape, "float32", seed=6)
    out = _run(
        backend,
        lambda b, c, t, f: b.where(c, t, f),
        c=(condition, "uint8"),
        t=(on_true, "float32"),
        f=(on_false, "float32"),
    )
    _assert_equal(out, np.where(condition != 0, on_true, on_false).astype(np.float32))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("data_type", BYTE_TYPES)
def test_where_data_types_and_alias(backend, data_type):
    condition = np.array([[1, 0, 3], [0, 0, 1]], dtype=np.uint8)
    on_true = _values([2, 3], data_type, seed=7)
    on_false = _values([3], data_type, seed=8)
    out = _run(
        backend,
        lambda b, c, t, f: b.where_(condition=c, true_value=t, false_value=f),
        c=(condition, "uint8"),
        t=(on_true, data_type),
        f=(on_false, data_type),
    )
    assert out.dtype == DATA_TYPES[data_type]
    _assert_equal(out, np.where(condition != 0, on_true, on_false))


@pytest.mark.parametrize("backend", BACKENDS)
def test_where_dynamic_dims(backend):
    context = _context(backend)
    b = context.create_graph_builder()
    batch = {"name": "batch", "maxSize": 3}
    c = b.input("c", [batch, 1], "uint8")
    t = b.input("t", [batch, 2], "int32")
    f = b.input("f", [2], "int32")
    y = b.where(c, t, f)
    assert b.operand_shape(y) == [batch, 2]
    graph = b.build({"y": y})
    condition = np.array([[0], [7]], dtype=np.uint8)
    on_true = np.array([[1, 2], [3, 4]], dtype=np.int32)
    on_false = np.array([-1, -2], dtype=np.int32)
    tensors = {}
    for name, array in (("c", condition), ("t", on_true), ("f", on_false)):
        full = [3] + list(array.shape[1:]) if name != "f" else list(array.shape)
        tensors[name] = context.create_tensor(full, str(array.dtype), writable=True)
        context.resize_tensor(tensors[name], list(array.shape))
        context.write_tensor(tensors[name], array)
    yt = context.create_tensor([3, 2], "int32", readable=True)
    context.resize_tensor(yt, [2, 2])
    context.dispatch(graph, tensors, {"y": yt})
    _assert_equal(context.read_tensor(yt), np.where(condition != 0, on_true, on_false))


# ---- rejections -------------------------------------------------------------------------------


def _builder():
    return _context("cpu").create_graph_builder()


def test_gather_rejections():
    b = _builder()
    x = b.input("x", [3, 4], "float32")
    i = b.input("i", [2], "int32")
    with pytest.raises(ValueError, match="axis 2 is out of range"):
        b.gather(x, i, axis=2)
    with pytest.raises(ValueError, match="indices data type float32"):
        b.gather(x, b.input("f", [2], "float32"))
    with pytest.raises(ValueError, match="indices data type uint64"):
        b.gather(x, b.input("u", [2], "uint64"))
    with pytest.raises(ValueError, match="input rank"):
        b.gather(b.input("s", [], "float32"), i)
    with pytest.raises(OverflowError):
        b.gather(x, i, axis=-1)
    with pytest.raises(TypeError):
        b.gather(x, i, axis="1")
    with pytest.raises(TypeError):
        b.gather(np.zeros([3, 4], np.float32), i)
    with pytest.raises(TypeError):
        b.gather(x, [0, 1])


def test_gather_elements_rejections():
    b = _builder()
    x = b.input("x", [3, 4], "float32")
    with pytest.raises(ValueError, match="axis 2 is out of range"):
        b.gather_elements(x, b.input("i0", [3, 4], "int32"), axis=2)
    with pytest.raises(ValueError, match="indices rank 1 must equal input rank 2"):
        b.gather_elements(x, b.input("i1", [3], "int32"))
    with pytest.raises(ValueError, match="on every axis but axis 1"):
        b.gather_elements(x, b.input("i2", [2, 4], "int32"), axis=1)
    with pytest.raises(ValueError, match="indices data type int8"):
        b.gather_elements(x, b.input("i3", [3, 4], "int8"))


def test_gather_nd_rejections():
    b = _builder()
    x = b.input("x", [3, 4], "float32")
    with pytest.raises(ValueError, match="must not exceed the input rank 2"):
        b.gather_nd(x, b.input("i0", [2, 3], "int32"))
    with pytest.raises(ValueError, match="dynamic dimension 'k'"):
        b.gather_nd(x, b.input("i1", [2, {"name": "k", "maxSize": 2}], "int32"))
    with pytest.raises(ValueError, match="indices rank"):
        b.gather_nd(x, b.input("i2", [], "int32"))
    with pytest.raises(ValueError, match="indices data type float16"):
        b.gather_nd(x, b.input("i3", [1], "float16"))


def test_scatter_elements_rejections():
    b = _builder()
    x = b.input("x", [3, 3], "float32")
    i = b.input("i", [2, 3], "int32")
    with pytest.raises(ValueError, match="axis 2 is out of range"):
        b.scatter_elements(x, i, b.input("u0", [2, 3], "float32"), axis=2)
    with pytest.raises(ValueError, match=r"updates shape \[3,2\] must equal indices shape"):
        b.scatter_elements(x, i, b.input("u1", [3, 2], "float32"))
    with pytest.raises(ValueError, match="updates data type int32 must match input"):
        b.scatter_elements(x, i, b.input("u2", [2, 3], "int32"))
    with pytest.raises(ValueError, match="on every axis but axis 1"):
        b.scatter_elements(x, i, b.input("u3", [2, 3], "float32"), axis=1)
    with pytest.raises(ValueError, match="input data type int4"):
        b.scatter_elements(b.input("q", [3, 3], "int4"), i, b.input("u4", [2, 3], "int4"))
    with pytest.raises(TypeError):
        b.scatter_elements(x, i)


def test_scatter_nd_rejections():
    b = _builder()
    x = b.input("x", [4, 5], "float32")
    with pytest.raises(ValueError, match="must not exceed the input rank 2"):
        b.scatter_nd(x, b.input("i0", [2, 3], "int32"), b.input("u0", [2], "float32"))
    i = b.input("i", [2, 1], "int32")
    with pytest.raises(ValueError, match=r"input.shape\[k:\] = \[2,5\]"):
        b.scatter_nd(x, i, b.input("u1", [2, 4], "float32"))
    with pytest.raises(ValueError, match="updates data type float16 must match input"):
        b.scatter_nd(x, i, b.input("u2", [2, 5], "float16"))
    with pytest.raises(ValueError, match="indices data type float32"):
        b.scatter_nd(x, b.input("i3", [2, 1], "float32"), b.input("u3", [2, 5], "float32"))


def test_where_rejections():
    b = _builder()
    t = b.input("t", [2, 3], "float32")
    with pytest.raises(ValueError, match="condition data type float32"):
        b.where(t, t, t)
    c = b.input("c", [2, 3], "uint8")
    with pytest.raises(ValueError, match="false_value data type int32 must match true_value"):
        b.where(c, t, b.input("f", [2, 3], "int32"))
    with pytest.raises(ValueError, match="not broadcastable"):
        b.where(c, t, b.input("f2", [3, 3], "float32"))
    with pytest.raises(ValueError, match="not broadcastable"):
        b.where(b.input("c2", [4], "uint8"), t, t)
    with pytest.raises(ValueError, match="true_value data type int4"):
        b.where(c, b.input("q", [3], "int4"), b.input("q2", [3], "int4"))
    with pytest.raises(TypeError):
        b.where(c, t, 1.0)
