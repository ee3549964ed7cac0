"""Casting and tensor manipulation (spec/ops.md §3.6, §4): options, dtypes and rejections
beyond the WPT corpus, checked against NumPy."""

import numpy as np
import pytest
import webnn

BACKENDS = webnn.backends()
BYTE_TYPES = ["float32", "float16", "int32", "uint32", "int64", "uint64", "int8", "uint8"]
NP = {t: np.dtype(t) for t in BYTE_TYPES}
NP.update({"int4": np.dtype("int8"), "uint4": np.dtype("uint8")})


@pytest.fixture(params=BACKENDS)
def ctx(request):
    return webnn.ML().create_context(accelerated=False, backend=request.param)


def run(ctx, make, *arrays, data_types=None):
    """Builds make(builder, *inputs) over graph inputs holding `arrays` and runs it."""
    b = ctx.create_graph_builder()
    inputs = []
    for i, a in enumerate(arrays):
        dt = data_types[i] if data_types else str(a.dtype)
        inputs.append(b.input(f"x{i}", list(a.shape), dt))
    out = make(b, *inputs)
    outs = out if isinstance(out, list) else [out]
    graph = b.build({f"y{i}": o for i, o in enumerate(outs)})
    res = ctx.compute(graph, {f"x{i}": a for i, a in enumerate(arrays)})
    got = [res[f"y{i}"] for i in range(len(outs))]
    return got if isinstance(out, list) else got[0]


def builder(ctx):
    return ctx.create_graph_builder()


def assert_same(actual, expected):
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    np.testing.assert_array_equal(actual, expected)


def sample(shape, dtype, start=0):
    return (np.arange(int(np.prod(shape))) + start).reshape(shape).astype(dtype)


# ---- cast ---------------------------------------------------------------------------------


@pytest.mark.parametrize("src", BYTE_TYPES)
@pytest.mark.parametrize("dst", BYTE_TYPES)
def test_cast_in_range_values_match_numpy(ctx, src, dst):
    x = np.array([0, 1, 2, 7, 100, 127], dtype=src)
    assert_same(run(ctx, lambda b, a: b.cast(a, dst), x), x.astype(dst))


@pytest.mark.parametrize("dst", ["int32", "int8", "uint8", "uint32", "int64"])
def test_cast_float_to_int_truncates_and_saturates(ctx, dst):
    x = np.array(
        [-1e10, -300.7, -2.9, -0.5, 0.5, 2.9, 300.7, 1e10, np.inf, -np.inf, np.nan],
        dtype=np.float32,
    )
    info = np.iinfo(dst)

    def expected(v):
        if np.isnan(v):
            return 0
        if np.isinf(v):
            return info.max if v > 0 else info.min
        return min(max(int(v), info.min), info.max)  # int() truncates toward zero

    want = np.array([expected(v) for v in x.tolist()], dtype=object).astype(dst)
    assert_same(run(ctx, lambda b, a: b.cast(a, dst), x), want)


@pytest.mark.parametrize(
    "src,dst",
    [
        ("int32", "int8"),
        ("int32", "uint8"),
        ("int64", "int32"),
        ("int8", "uint32"),
        ("uint32", "int32"),
        ("int64", "uint64"),
        ("uint64", "int64"),
        ("uint8", "int8"),
    ],
)
def test_cast_between_integers_wraps(ctx, src, dst):
    info = np.iinfo(src)
    values = [info.min, -1, 100, 200, 300, 70000, info.max]
    x = np.array([v for v in values if info.min <= v <= info.max], dtype=src)
    # NumPy integer astype is the C conversion: modular, two's complement.
    assert_same(run(ctx, lambda b, a: b.cast(a, dst), x), x.astype(dst))


def test_cast_int64_to_float32_rounds_once(ctx):
    # 2^60 + 2^36 + 1 is just above the float32 midpoint 2^60 + 2^36; rounding through double
    # would drop the +1 and then round the tie to even (2^60).
    x = np.array([2**60 + 2**36 + 1, -(2**60 + 2**36 + 1)], dtype=np.int64)
    want = np.array([2**60 + 2**37, -(2**60 + 2**37)], dtype=np.float32)
    assert_same(run(ctx, lambda b, a: b.cast(a, "float32"), x), want)


def test_cast_to_float16_overflows_to_infinity(ctx):
    x = np.array([65504, 65519, 65520, 100000, -100000], dtype=np.int32)
    want = np.array([65504, 65504, np.inf, np.inf, -np.inf], dtype=np.float16)
    assert_same(run(ctx, lambda b, a: b.cast(a, "float16"), x), want)


@pytest.mark.parametrize("dst,lo,hi", [("int4", -8, 7), ("uint4", 0, 15)])
def test_cast_to_4bit_saturates(ctx, dst, lo, hi):
    x = np.array([-100.5, -8.9, -3.7, 0, 3.7, 7.9, 15.5, 100, np.nan], dtype=np.float32)
    with np.errstate(invalid="ignore"):
        want = np.clip(np.nan_to_num(np.trunc(x), nan=0.0), lo, hi).astype(NP[dst])
    assert_same(run(ctx, lambda b, a: b.cast(a, dst), x), want)
    xi = np.array([-300, -9, -1, 5, 16, 300], dtype=np.int32)
    assert_same(run(ctx, lambda b, a: b.cast(a, dst), xi), np.clip(xi, lo, hi).astype(NP[dst]))


def test_cast_from_int4_constant(ctx):
    b = builder(ctx)
    values = np.array([-8, -3, 0, 5, 7], dtype=np.int8)
    c = b.constant(values, shape=[5], data_type="int4")
    g = b.build({"y": b.cast(c, "float32")})
    assert_same(ctx.compute(g, {})["y"], values.astype(np.float32))


def test_cast_rejects_unknown_type(ctx):
    b = builder(ctx)
    x = b.input("x", [2], "float32")
    with pytest.raises(ValueError):
        b.cast(x, "float64")
    with pytest.raises(TypeError):
        b.cast(x, 5)


# ---- concat -------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["int32", "uint64", "int8", "float16"])
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_concat_three_inputs(ctx, dtype, axis):
    shapes = [[2, 3, 4], [2, 3, 4], [2, 3, 4]]
    for s, n in zip(shapes, [1, 2, 3]):
        s[axis] = n
    arrays = [sample(s, dtype, 10 * i) for i, s in enumerate(shapes)]
    got = run(ctx, lambda b, *xs: b.concat(list(xs), axis), *arrays)
    assert_same(got, np.concatenate(arrays, axis))


def test_concat_single_input_and_scalars(ctx):
    a = sample([2, 3], np.float32)
    assert_same(run(ctx, lambda b, x: b.concat((x,), 1), a), a)
    s = [np.array(v, dtype=np.int32) for v in (4, 5, 6)]
    assert_same(run(ctx, lambda b, *xs: b.concat(list(xs), 0), *s), np.array([4, 5, 6], np.int32))


def test_concat_int4_constants(ctx):
    b = builder(ctx)
    a = np.array([[-8, 1], [2, 7]], dtype=np.int8)
    c = np.array([[-1, 3]], dtype=np.int8)
    y = b.concat(
        [
            b.constant(a, shape=[2, 2], data_type="int4"),
            b.constant(c, shape=[1, 2], data_type="int4"),
        ],
        0,
    )
    assert_same(ctx.compute(b.build({"y": y}), {})["y"], np.concatenate([a, c]))


def test_concat_rejections(ctx):
    b = builder(ctx)
    a = b.input("a", [2, 3], "float32")
    with pytest.raises(ValueError):
        b.concat([], 0)
    with pytest.raises(ValueError, match="axis"):
        b.concat([a, a], 2)
    with pytest.raises(ValueError, match="data type"):
        b.concat([a, b.input("i", [2, 3], "int32")], 0)
    with pytest.raises(ValueError, match="rank"):
        b.concat([a, b.input("r", [2, 3, 1], "float32")], 0)
    with pytest.raises(ValueError, match="axis 1 differs"):
        b.concat([a, b.input("d", [2, 4], "float32")], 0)
    with pytest.raises(ValueError):
        b.concat([b.input("s", [], "float32")], 1)
    with pytest.raises(TypeError):
        b.concat(a, 0)
    with pytest.raises(TypeError):
        b.concat([a, 1.0], 0)
    with pytest.raises(OverflowError):
        b.concat([a, a], -1)


# ---- expand / reshape ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "shape,new_shape",
    [([3, 1], [2, 3, 4]), ([1], [5]), ([], [2, 2]), ([2, 1, 3], [2, 4, 3]), ([4], [4])],
)
@pytest.mark.parametrize("dtype", ["int64", "uint8", "float16"])
def test_expand_matches_broadcast_to(ctx, shape, new_shape, dtype):
    a = sample(shape, dtype, 1)
    assert_same(run(ctx, lambda b, x: b.expand(x, new_shape), a), np.broadcast_to(a, new_shape))


def test_expand_rejections(ctx):
    b = builder(ctx)
    x = b.input("x", [2, 3], "float32")
    with pytest.raises(ValueError, match="broadcast"):
        b.expand(x, [3, 3])
    with pytest.raises(ValueError):
        b.expand(x, [3])  # fewer dimensions than the input
    with pytest.raises(ValueError):
        b.expand(x, [0, 3])
    with pytest.raises(ValueError):
        b.expand(x, [1] * 7 + [2, 3])  # rank 9


@pytest.mark.parametrize("new_shape", [[], [1, 1, 1], [1]])
def test_reshape_to_and_from_scalar(ctx, new_shape):
    a = np.array(3.5, dtype=np.float32)
    got = run(ctx, lambda b, x: b.reshape(x, new_shape), a)
    assert_same(got, a.reshape(new_shape))
    back = run(ctx, lambda b, x: b.reshape(x, []), got)
    assert_same(back, a)


@pytest.mark.parametrize("dtype", ["uint32", "int8", "uint64"])
def test_reshape_integers(ctx, dtype):
    a = sample([2, 3, 4], dtype)
    assert_same(run(ctx, lambda b, x: b.reshape(x, [4, 6]), a), a.reshape(4, 6))


def test_reshape_rejections(ctx):
    b = builder(ctx)
    x = b.input("x", [2, 3], "float32")
    with pytest.raises(ValueError, match="number of elements"):
        b.reshape(x, [4, 2])
    with pytest.raises(ValueError):
        b.reshape(x, [6, 0])
    with pytest.raises((ValueError, OverflowError)):
        b.reshape(x, [-1, 3])
    with pytest.raises(TypeError):
        b.reshape(x, [2.0, 3])


# ---- slice --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "starts,sizes,strides",
    [
        ([0, 0], [3, 5], None),
        ([1, 2], [2, 3], None),
        ([0, 1], [3, 4], [2, 3]),
        ([2, 4], [1, 1], [5, 7]),
        ([1, 0], [2, 5], [1, 2]),
    ],
)
@pytest.mark.parametrize("dtype", ["float32", "int64", "uint8"])
def test_slice_with_strides(ctx, starts, sizes, strides, dtype):
    a = sample([3, 5], dtype)
    want = a[tuple(slice(s, s + n, st) for s, n, st in zip(starts, sizes, strides or [1, 1]))]
    got = run(ctx, lambda b, x: b.slice(x, starts, sizes, strides=strides), a)
    assert_same(got, want)


def test_slice_scalar(ctx):
    a = np.array(7, dtype=np.int32)
    assert_same(run(ctx, lambda b, x: b.slice(x, [], []), a), a)


def test_slice_rejections(ctx):
    b = builder(ctx)
    x = b.input("x", [3, 5], "float32")
    with pytest.raises(ValueError, match="starts length"):
        b.slice(x, [0], [1, 1])
    with pytest.raises(ValueError, match="sizes length"):
        b.slice(x, [0, 0], [1])
    with pytest.raises(ValueError, match="strides length"):
        b.slice(x, [0, 0], [1, 1], strides=[1])
    with pytest.raises(ValueError):
        b.slice(x, [0, 0], [0, 1])
    with pytest.raises(ValueError):
        b.slice(x, [0, 0], [1, 1], strides=[0, 1])
    with pytest.raises(ValueError, match="exceeds"):
        b.slice(x, [2, 0], [2, 1])
    with pytest.raises(ValueError, match="exceeds"):
        b.slice(x, [4, 0], [1, 1])
    with pytest.raises(OverflowError):
        b.slice(x, [-1, 0], [1, 1])


# ---- split --------------------------------------------------------------------------------


@pytest.mark.parametrize("splits,axis", [(2, 0), (3, 1), ([1, 2], 1), ([2, 1, 1], 2), (1, 2)])
def test_split(ctx, splits, axis):
    a = sample([2, 3, 4], np.int32)
    got = run(ctx, lambda b, x: b.split(x, splits, axis=axis), a)
    if isinstance(splits, int):
        want = np.split(a, splits, axis)
    else:
        want = np.split(a, np.cumsum(splits)[:-1], axis)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert_same(g, w)


def test_split_default_axis_and_4bit(ctx):
    b = builder(ctx)
    v = np.array([[0, 1], [2, 3], [4, 5], [6, 7]], dtype=np.uint8) * 2
    c = b.constant(v, shape=[4, 2], data_type="uint4")
    outs = b.split(c, [1, 3])
    res = ctx.compute(b.build({"p": outs[0], "q": outs[1]}), {})
    assert_same(res["p"], v[:1])
    assert_same(res["q"], v[1:])


def test_split_rejections(ctx):
    b = builder(ctx)
    x = b.input("x", [4, 6], "float32")
    with pytest.raises(ValueError, match="divisible"):
        b.split(x, 4, axis=1)
    with pytest.raises(ValueError, match="sum"):
        b.split(x, [2, 3], axis=1)
    with pytest.raises(ValueError):
        b.split(x, [0, 4])
    with pytest.raises(ValueError):
        b.split(x, 0)
    with pytest.raises(ValueError, match="axis"):
        b.split(x, 2, axis=2)
    with pytest.raises(ValueError):
        b.split(b.input("s", [], "float32"), 1)
    with pytest.raises(TypeError):
        b.split(x, 2.0)


# ---- tile ---------------------------------------------------------------------------------


@pytest.mark.parametrize("reps", [[1, 1, 1], [2, 1, 3], [3, 2, 1]])
@pytest.mark.parametrize("dtype", ["int8", "int64", "float16"])
def test_tile(ctx, reps, dtype):
    a = sample([2, 1, 3], dtype)
    assert_same(run(ctx, lambda b, x: b.tile(x, reps), a), np.tile(a, reps))


def test_tile_rejections(ctx):
    b = builder(ctx)
    x = b.input("x", [2, 3], "float32")
    with pytest.raises(ValueError, match="length"):
        b.tile(x, [2])
    with pytest.raises(ValueError):
        b.tile(x, [0, 1])
    with pytest.raises(ValueError):
        b.tile(x, [2**31, 1])


# ---- transpose ----------------------------------------------------------------------------


@pytest.mark.parametrize("perm", [None, [0, 1, 2, 3], [3, 0, 2, 1], [1, 3, 2, 0]])
@pytest.mark.parametrize("dtype", ["int32", "uint64", "int8"])
def test_transpose(ctx, perm, dtype):
    a = sample([2, 3, 1, 4], dtype)
    got = run(ctx, lambda b, x: b.transpose(x, permutation=perm), a)
    assert_same(got, np.transpose(a, perm))


def test_transpose_rejections(ctx):
    b = builder(ctx)
    x = b.input("x", [2, 3, 4], "float32")
    with pytest.raises(ValueError, match="length"):
        b.transpose(x, [1, 0])
    with pytest.raises(ValueError, match="duplicate"):
        b.transpose(x, [0, 1, 1])
    with pytest.raises(ValueError, match="out of range"):
        b.transpose(x, [0, 1, 3])


# ---- pad ----------------------------------------------------------------------------------

NUMPY_MODE = {
    "constant": "constant",
    "edge": "edge",
    "reflection": "reflect",
    "symmetric": "symmetric",
}


@pytest.mark.parametrize("mode", list(NUMPY_MODE))
@pytest.mark.parametrize("begin,end", [([1, 2], [2, 1]), ([0, 3], [2, 0]), ([0, 0], [0, 0])])
@pytest.mark.parametrize("dtype", ["float32", "int32", "uint8"])
def test_pad_modes(ctx, mode, begin, end, dtype):
    a = sample([3, 4], dtype, 1)
    kwargs = {"value": 9} if mode == "constant" else {}
    got = run(ctx, lambda b, x: b.pad(x, begin, end, mode=mode, **kwargs), a)
    want = np.pad(
        a,
        list(zip(begin, end)),
        mode=NUMPY_MODE[mode],
        **({"constant_values": 9} if mode == "constant" else {}),
    )
    assert_same(got, want)


def test_pad_default_value_and_float_value(ctx):
    a = sample([2, 2], np.float16, 1)
    got = run(ctx, lambda b, x: b.pad(x, [1, 0], [0, 1]), a)
    assert_same(got, np.pad(a, [(1, 0), (0, 1)]))
    got = run(ctx, lambda b, x: b.pad(x, [1, 1], [1, 1], "constant", -2.5), a)
    assert_same(got, np.pad(a, 1, constant_values=np.float16(-2.5)))


def test_pad_int64_value_is_exact(ctx):
    big = 2**62 + 1  # not representable in double
    a = np.array([1, 2], dtype=np.int64)
    got = run(ctx, lambda b, x: b.pad(x, [1], [1], value=big), a)
    assert_same(got, np.array([big, 1, 2, big], dtype=np.int64))
    u = np.array([1], dtype=np.uint64)
    got = run(ctx, lambda b, x: b.pad(x, [0], [1], value=2**64 - 1), u)
    assert_same(got, np.array([1, 2**64 - 1], dtype=np.uint64))


def test_pad_value_saturates_to_the_input_type(ctx):
    a = np.array([1, 2], dtype=np.int8)
    got = run(ctx, lambda b, x: b.pad(x, [1], [1], value=1000), a)
    assert_same(got, np.array([127, 1, 2, 127], dtype=np.int8))
    b = builder(ctx)
    c = b.constant(np.array([1, -2], dtype=np.int8), shape=[2], data_type="int4")
    g = b.build({"y": b.pad(c, [1], [1], value=100)})
    assert_same(ctx.compute(g, {})["y"], np.array([7, 1, -2, 7], dtype=np.int8))


def test_pad_compat_lists(ctx):
    a = sample([2, 3], np.float32, 1)
    # pywebnn form: one list holding the beginning paddings then the ending paddings.
    got = run(ctx, lambda b, x: b.pad(x, [1, 0, 0, 2]), a)
    assert_same(got, np.pad(a, [(1, 0), (0, 2)]))
    # Only beginning paddings: the ending ones are zero.
    got = run(ctx, lambda b, x: b.pad(x, [1, 2], mode="edge"), a)
    assert_same(got, np.pad(a, [(1, 0), (2, 0)], mode="edge"))


def test_pad_rejections(ctx):
    b = builder(ctx)
    x = b.input("x", [2, 3], "float32")
    with pytest.raises(ValueError, match="mode"):
        b.pad(x, [1, 1], [1, 1], mode="wrap")
    with pytest.raises(ValueError, match="reflection"):
        b.pad(x, [2, 0], [0, 0], mode="reflection")
    with pytest.raises(ValueError, match="symmetric"):
        b.pad(x, [0, 4], [0, 0], mode="symmetric")
    with pytest.raises(ValueError, match="length"):
        b.pad(x, [1, 1, 1], [1, 1, 1])
    with pytest.raises(ValueError, match="length"):
        b.pad(x, [1, 1], [1])
    with pytest.raises(OverflowError):
        b.pad(x, [-1, 1], [1, 1])
    with pytest.raises(TypeError):
        b.pad(x, [1, 1], [1, 1], value="1")


# ---- reverse ------------------------------------------------------------------------------


@pytest.mark.parametrize("axes", [None, [], [0], [2, 0], [1, 2, 0]])
@pytest.mark.parametrize("dtype", ["int32", "uint64", "float16"])
def test_reverse(ctx, axes, dtype):
    a = sample([2, 3, 4], dtype)
    want = a if axes == [] else np.flip(a, axis=None if axes is None else tuple(axes))
    assert_same(run(ctx, lambda b, x: b.reverse(x, axes=axes), a), want)


def test_reverse_rejections(ctx):
    b = builder(ctx)
    x = b.input("x", [2, 3], "float32")
    with pytest.raises(ValueError, match="duplicate"):
        b.reverse(x, [1, 1])
    with pytest.raises(ValueError, match="out of range"):
        b.reverse(x, [2])


# ---- triangular ---------------------------------------------------------------------------


@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("diagonal", [-5, -1, 0, 2, 6])
@pytest.mark.parametrize("dtype", ["float32", "int64", "uint8"])
def test_triangular(ctx, upper, diagonal, dtype):
    a = sample([2, 3, 4], dtype, 1)
    want = np.triu(a, diagonal) if upper else np.tril(a, diagonal)
    got = run(ctx, lambda b, x: b.triangular(x, upper=upper, diagonal=diagonal), a)
    assert_same(got, want)


def test_triangular_defaults_keep_upper(ctx):
    a = sample([3, 3], np.float32, 1)
    assert_same(run(ctx, lambda b, x: b.triangular(x), a), np.triu(a))


def test_triangular_rejections(ctx):
    b = builder(ctx)
    with pytest.raises(ValueError, match="rank"):
        b.triangular(b.input("x", [3], "float32"))
    c = b.constant(np.zeros([2, 2], np.int8), shape=[2, 2], data_type="int4")
    with pytest.raises(ValueError, match="data type"):
        b.triangular(c)


# ---- squeeze / unsqueeze / shape ----------------------------------------------------------


@pytest.mark.parametrize("axes", [None, [0], [2, 3], [0, 2, 3]])
def test_squeeze(ctx, axes):
    a = sample([1, 2, 1, 1, 3], np.int32)
    want = np.squeeze(a, axis=None if axes is None else tuple(axes))
    assert_same(run(ctx, lambda b, x: b.squeeze(x, axes=axes), a), want)


def test_squeeze_rejections(ctx):
    b = builder(ctx)
    x = b.input("x", [1, 2], "float32")
    with pytest.raises(ValueError, match="size 1"):
        b.squeeze(x, [1])
    with pytest.raises(ValueError, match="out of range"):
        b.squeeze(x, [2])
    with pytest.raises(ValueError, match="duplicate"):
        b.squeeze(x, [0, 0])


@pytest.mark.parametrize("axes", [[0], [2], [0, 3], [3, 0, 1]])
def test_unsqueeze(ctx, axes):
    a = sample([2, 3], np.float16)
    assert_same(run(ctx, lambda b, x: b.unsqueeze(x, axes), a), np.expand_dims(a, tuple(axes)))


def test_unsqueeze_rejections(ctx):
    b = builder(ctx)
    x = b.input("x", [2, 3], "float32")
    with pytest.raises(ValueError, match="out of range"):
        b.unsqueeze(x, [3])
    with pytest.raises(ValueError, match="duplicate"):
        b.unsqueeze(x, [1, 1])
    with pytest.raises(ValueError):
        b.unsqueeze(x, list(range(7)))  # rank 9


@pytest.mark.parametrize("shape", [[5], [2, 3], [1, 4, 1, 2]])
def test_shape(ctx, shape):
    a = sample(shape, np.uint8)
    assert_same(run(ctx, lambda b, x: b.shape(x), a), np.array(shape, dtype=np.int64))


def test_shape_of_scalar_is_rejected(ctx):
    b = builder(ctx)
    with pytest.raises(ValueError):
        b.shape(b.input("x", [], "float32"))


# ---- dynamic dimensions (api.md §11.3–11.4) -----------------------------------------------


def dyn(name, max_size):
    return {"name": name, "maxSize": max_size}


def test_dynamic_derived_dimensions(ctx):
    b = builder(ctx)
    past = b.input("past", [dyn("past", 8), 4], "float32")
    new = b.input("new", [1, 4], "float32")
    seq = b.input("seq", [dyn("seq", 3), 4], "float32")
    assert b.operand_shape(b.concat([past, new], 0)) == [dyn("past + 1", 9), 4]
    assert b.operand_shape(b.concat([seq, past, seq], 0)) == [dyn("past + 2*seq", 14), 4]
    assert b.operand_shape(b.pad(past, [1, 0], [2, 1])) == [dyn("past + 3", 11), 5]
    assert b.operand_shape(b.tile(past, [2, 1])) == [dyn("2*past", 16), 4]
    grown = b.concat([past, new], 0)
    assert b.operand_shape(b.tile(grown, [3, 2])) == [dyn("3*past + 3", 27), 8]
    assert b.operand_shape(b.transpose(past)) == [4, dyn("past", 8)]
    assert b.operand_shape(b.cast(past, "int32")) == [dyn("past", 8), 4]
    assert b.operand_shape(b.split(past, 2, axis=1)[0]) == [dyn("past", 8), 2]
    assert b.operand_shape(b.slice(past, [0, 1], [dyn("n", 4), 2])) == [dyn("n", 4), 2]
    assert b.operand_shape(b.reshape(past, [dyn("past", 8), 2, 2])) == [dyn("past", 8), 2, 2]
    assert b.operand_shape(b.expand(new, [dyn("k", 5), 4])) == [dyn("k", 5), 4]
    assert b.operand_shape(b.squeeze(b.unsqueeze(past, [0]))) == [dyn("past", 8), 4]


def test_dynamic_rejections(ctx):
    b = builder(ctx)
    past = b.input("past", [dyn("past", 8), 4], "float32")
    other = b.input("other", [dyn("other", 8), 4], "float32")
    with pytest.raises(ValueError, match="dynamic dimension 'past'"):
        b.split(past, 2, axis=0)
    with pytest.raises(ValueError, match="dynamic dimension 'past'"):
        b.slice(past, [0, 0], [2, 4], strides=[2, 1])
    with pytest.raises(ValueError, match="same number of elements"):
        b.reshape(past, [dyn("other", 8), 4])
    with pytest.raises(ValueError, match="same number of elements"):
        b.reshape(past, [8, 4])
    with pytest.raises(ValueError):
        b.concat([past, other], 1)  # axis 0 differs
    with pytest.raises(ValueError):
        b.expand(past, [8, 4])
    with pytest.raises(ValueError, match="size 1"):
        b.squeeze(b.input("one", [dyn("one", 1), 4], "float32"), [0])


def test_dynamic_concat_and_shape_dispatch(ctx):
    b = builder(ctx)
    past = b.input("past", [dyn("past", 8), 2], "float32")
    new = b.input("new", [1, 2], "float32")
    cat = b.concat([past, new], 0)
    graph = b.build(
        {
            "cat": cat,
            "shape": b.shape(cat),
            "pad": b.pad(past, [1, 0], [0, 0]),
            "tile": b.tile(past, [2, 1]),
        }
    )
    for n in (1, 3, 8):
        p = sample([n, 2], np.float32)
        q = np.full([1, 2], -1, np.float32)
        tp = ctx.create_tensor([n, 2], "float32", writable=True)
        tq = ctx.create_tensor([1, 2], "float32", writable=True)
        ctx.write_tensor(tp, p)
        ctx.write_tensor(tq, q)
        tc = ctx.create_tensor([n + 1, 2], "float32", readable=True)
        ts = ctx.create_tensor([2], "int64", readable=True)
        tpad = ctx.create_tensor([n + 1, 2], "float32", readable=True)
        ttile = ctx.create_tensor([2 * n, 2], "float32", readable=True)
        ctx.dispatch(
            graph, {"past": tp, "new": tq}, {"cat": tc, "shape": ts, "pad": tpad, "tile": ttile}
        )
        assert_same(ctx.read_tensor(tc), np.concatenate([p, q]))
        assert_same(ctx.read_tensor(ts), np.array([n + 1, 2], np.int64))
        assert_same(ctx.read_tensor(tpad), np.pad(p, [(1, 0), (0, 0)]))
        assert_same(ctx.read_tensor(ttile), np.tile(p, [2, 1]))


def test_dynamic_slice_size_binds_at_dispatch(ctx):
    b = builder(ctx)
    x = b.input("x", [6, 2], "int32")
    graph = b.build({"y": b.slice(x, [1, 0], [dyn("m", 5), 2])})
    a = sample([6, 2], np.int32)
    tx = ctx.create_tensor([6, 2], "int32", writable=True)
    ctx.write_tensor(tx, a)
    for m in (1, 4, 5):
        ty = ctx.create_tensor([m, 2], "int32", readable=True)
        ctx.dispatch(graph, {"x": tx}, {"y": ty})
        assert_same(ctx.read_tensor(ty), a[1 : 1 + m])
