"""The public Python API (spec/api.md §2–§10): every method, its defaults and its errors."""

import numpy as np
import pytest
import webnn


@pytest.fixture(params=webnn.backends())
def ctx(request):
    return webnn.ML().create_context(accelerated=False, backend=request.param)


def simple_graph(ctx, shape=(2, 3)):
    b = ctx.create_graph_builder()
    x = b.input("x", list(shape), "float32")
    y = b.add(x, b.constant(np.ones(shape, np.float32)))
    return b.build({"y": y})


# ---- module, ML, context (§2, §6, §7) ---------------------------------------------------


def test_module_exports():
    for name in (
        "ML",
        "MLContext",
        "MLGraphBuilder",
        "MLOperand",
        "MLGraph",
        "MLTensor",
        "AsyncMLContext",
        "backends",
    ):
        assert hasattr(webnn, name)
    assert isinstance(webnn.__version__, str) and webnn.__version__.count(".") == 2
    assert webnn.backends()[:2] == ["cpu", "reference"]


@pytest.mark.parametrize("cls", ["MLContext", "MLOperand", "MLGraph", "MLTensor"])
def test_direct_construction_is_a_type_error(cls):
    with pytest.raises(TypeError, match="cannot be instantiated directly"):
        getattr(webnn, cls)()


def test_builder_direct_construction_is_a_runtime_error():
    with pytest.raises(RuntimeError):
        webnn.MLGraphBuilder()


def test_create_context_defaults_and_properties():
    ctx = webnn.ML().create_context()
    assert ctx.power_preference == "default"
    assert ctx.accelerated is False  # no GPU/NPU backend in this build
    assert ctx.backend == "cpu"
    ctx = webnn.ML().create_context("low-power", False, "reference")
    assert (ctx.power_preference, ctx.backend, ctx.accelerated) == ("low-power", "reference", False)
    ctx = webnn.ML().create_context(power_preference="high-performance", accelerated=True)
    assert ctx.accelerated is False and ctx.power_preference == "high-performance"


def test_create_context_errors():
    ml = webnn.ML()
    with pytest.raises(ValueError, match="high-performance"):
        ml.create_context(power_preference="fast")
    with pytest.raises(TypeError):
        ml.create_context(accelerated="yes")
    with pytest.raises(ValueError, match="cpu"):
        ml.create_context(backend="onnx")


def test_contexts_are_independent():
    a = webnn.ML().create_context()
    b = webnn.ML().create_context()
    g = simple_graph(a)
    t = b.create_tensor([2, 3], "float32", readable=True)
    with pytest.raises(RuntimeError):
        b.dispatch(g, {"x": b.create_tensor([2, 3], "float32")}, {"y": t})
    ta = a.create_tensor([2, 3], "float32", readable=True)
    with pytest.raises(RuntimeError, match="another context"):
        b.read_tensor(ta)


# ---- tensors (§7, §8, §12) ----------------------------------------------------------------


def test_create_tensor_properties(ctx):
    t = ctx.create_tensor([2, 3], "float16", readable=True)
    assert (t.data_type, t.shape, t.size, t.readable, t.writable) == (
        "float16",
        [2, 3],
        6,
        True,
        False,
    )
    assert t.exportable_to_gpu is False
    assert repr(t) == "MLTensor(dtype='float16', shape=[2, 3], readable=True, writable=False)"
    np.testing.assert_array_equal(ctx.read_tensor(t), np.zeros((2, 3), np.float16))
    scalar = ctx.create_tensor([], "int32", readable=True)
    assert scalar.size == 1 and ctx.read_tensor(scalar).shape == ()
    empty = ctx.create_tensor([1, 0, 4], "float32", readable=True, writable=True)
    assert empty.size == 0 and ctx.read_tensor(empty).shape == (1, 0, 4)


def test_create_tensor_errors(ctx):
    with pytest.raises(ValueError, match="Unsupported data type"):
        ctx.create_tensor([2], "float64")
    with pytest.raises(TypeError):
        ctx.create_tensor([2], 5)
    with pytest.raises(OverflowError):
        ctx.create_tensor([-1], "float32")
    with pytest.raises(ValueError, match="out of range"):
        ctx.create_tensor([2**31], "float32")
    with pytest.raises(ValueError):
        ctx.create_tensor([{"name": "b", "maxSize": 2}], "float32")
    with pytest.raises(TypeError):
        ctx.create_tensor([True], "float32")
    with pytest.raises(ValueError):
        ctx.create_tensor([1] * 9, "float32")


@pytest.mark.parametrize(
    "data_type,carrier",
    [
        ("float32", np.float32),
        ("float16", np.float16),
        ("int32", np.int32),
        ("uint32", np.uint32),
        ("int64", np.int64),
        ("uint64", np.uint64),
        ("int8", np.int8),
        ("uint8", np.uint8),
        ("int4", np.int8),
        ("uint4", np.uint8),
    ],
)
def test_write_read_round_trip_every_type(ctx, data_type, carrier):
    t = ctx.create_tensor([3, 3], data_type, readable=True, writable=True)
    values = np.array([[0, 1, 2], [3, 4, 5], [6, 7, 7]])
    if data_type == "int4":
        values = values - 8
    ctx.write_tensor(t, values)
    out = ctx.read_tensor(t)
    assert out.dtype == carrier and out.shape == (3, 3) and out.flags.writeable
    assert out.flags.c_contiguous and out.flags.owndata
    np.testing.assert_array_equal(out, values.astype(carrier))


def test_write_tensor_adapts_numpy(ctx):
    t = ctx.create_tensor([4], "int32", readable=True, writable=True)
    ctx.write_tensor(t, [1.7, -1.7, 2.0, 3.9])  # unsafe cast truncates
    np.testing.assert_array_equal(ctx.read_tensor(t), [1, -1, 2, 3])
    u = ctx.create_tensor([1], "uint32", readable=True, writable=True)
    ctx.write_tensor(u, np.array([-1]))
    assert ctx.read_tensor(u)[0] == 4294967295
    big_endian = np.array([1.5, 2.5], dtype=">f4")
    f = ctx.create_tensor([2], "float32", readable=True, writable=True)
    ctx.write_tensor(f, big_endian)
    np.testing.assert_array_equal(ctx.read_tensor(f), [1.5, 2.5])
    # any shape with the right element count is read in C order
    m = ctx.create_tensor([2, 3], "float32", readable=True, writable=True)
    ctx.write_tensor(m, np.arange(6).reshape(3, 2))
    np.testing.assert_array_equal(ctx.read_tensor(m), np.arange(6).reshape(2, 3))


@pytest.mark.parametrize(
    "dtype", ["float32", "float16", "int32", "uint32", "int64", "uint64", "int8", "uint8"]
)
def test_write_and_read_tensor_copy_the_data_whatever_its_layout(ctx, dtype):
    # Arrays already in the tensor's layout are copied straight in; strided, Fortran-order,
    # other-dtype and bool arrays are converted first: every kind must land the same values.
    rng = np.random.default_rng(3)
    base = rng.integers(0, 100, size=(6, 8)).astype(dtype)
    t = ctx.create_tensor([3, 8], dtype, readable=True, writable=True)
    sources = {
        "contiguous": base[:3],
        "strided rows": base[::2],
        "reversed": base[:3][::-1],
        "fortran": np.asfortranarray(base[:3]),
        "other dtype": base[:3].astype(np.float64),
        "read-only": np.frombuffer(base[:3].tobytes(), dtype=dtype).reshape(3, 8),
    }
    for name, src in sources.items():
        ctx.write_tensor(t, src)
        out = ctx.read_tensor(t)
        np.testing.assert_array_equal(out, np.ascontiguousarray(src).astype(dtype), err_msg=name)
    # The tensor keeps its own copy: neither the source nor the result aliases it.
    src = base[:3].copy()
    ctx.write_tensor(t, src)
    src[...] = 0
    first = ctx.read_tensor(t)
    first[...] = 1
    np.testing.assert_array_equal(ctx.read_tensor(t), base[:3])
    b = ctx.create_tensor([2], "uint8", readable=True, writable=True)
    ctx.write_tensor(b, np.array([True, False]))
    np.testing.assert_array_equal(ctx.read_tensor(b), [1, 0])
    empty = ctx.create_tensor([0, 3], dtype, readable=True, writable=True)
    ctx.write_tensor(empty, np.zeros((0, 3), dtype))
    assert ctx.read_tensor(empty).shape == (0, 3)


def test_write_tensor_errors(ctx):
    t = ctx.create_tensor([2, 2], "float32", readable=True, writable=True)
    with pytest.raises(ValueError, match="Shape mismatch"):
        ctx.write_tensor(t, np.zeros(5))
    with pytest.raises(TypeError):
        ctx.write_tensor("tensor", np.zeros(4))
    ro = ctx.create_tensor([2], "float32", readable=True)
    with pytest.raises(RuntimeError, match="not writable"):
        ctx.write_tensor(ro, [1, 2])
    wo = ctx.create_tensor([2], "float32", writable=True)
    with pytest.raises(RuntimeError, match="not readable"):
        ctx.read_tensor(wo)
    q = ctx.create_tensor([2], "int4", writable=True)
    with pytest.raises(ValueError, match="out of range"):
        ctx.write_tensor(q, [1, 8])
    uq = ctx.create_tensor([2], "uint4", writable=True)
    with pytest.raises(ValueError, match="index 0"):
        ctx.write_tensor(uq, [-1, 3])


def test_destroy(ctx):
    t = ctx.create_tensor([2], "float32", readable=True, writable=True)
    t.destroy()
    t.destroy()  # second destroy is a no-op
    for call in (
        lambda: ctx.read_tensor(t),
        lambda: ctx.write_tensor(t, [1, 2]),
        lambda: ctx.resize_tensor(t, [3]),
        lambda: ctx.set_tensor_capacity(t, [4]),
    ):
        with pytest.raises(RuntimeError, match="destroyed"):
            call()
    g = simple_graph(ctx)
    out = ctx.create_tensor([2, 3], "float32", readable=True)
    with pytest.raises(RuntimeError, match="destroyed"):
        ctx.dispatch(g, {"x": t}, {"y": out})


def test_resize_tensor_preserves_byte_prefix(ctx):
    t = ctx.create_tensor([2, 2], "int32", readable=True, writable=True)
    ctx.write_tensor(t, [[1, 2], [3, 4]])
    ctx.resize_tensor(t, [3, 2])
    assert t.shape == [3, 2] and t.size == 6
    np.testing.assert_array_equal(ctx.read_tensor(t), [[1, 2], [3, 4], [0, 0]])
    ctx.resize_tensor(t, [1])
    np.testing.assert_array_equal(ctx.read_tensor(t), [1])
    ctx.resize_tensor(t, [2, 2])  # re-exposed bytes are zero
    np.testing.assert_array_equal(ctx.read_tensor(t), [[1, 0], [0, 0]])
    assert t.readable and t.writable and t.data_type == "int32"
    with pytest.raises(OverflowError):
        ctx.resize_tensor(t, [-2])
    with pytest.raises(TypeError):
        ctx.resize_tensor(object(), [2])


def test_set_tensor_capacity(ctx):
    t = ctx.create_tensor([1, 2, 0, 4], "float32", readable=True, writable=True)
    ctx.set_tensor_capacity(t, [1, 2, 16, 4])
    assert t.shape == [1, 2, 0, 4]
    ctx.resize_tensor(t, [1, 2, 3, 4])
    np.testing.assert_array_equal(ctx.read_tensor(t), np.zeros((1, 2, 3, 4)))
    ctx.set_tensor_capacity(t, [1])  # never shrinks
    assert t.shape == [1, 2, 3, 4]


# ---- builder (§9) ------------------------------------------------------------------------


def test_input_and_operand_queries(ctx):
    b = ctx.create_graph_builder()
    x = b.input("x", [2, {"name": "batch", "maxSize": 8}], "float16")
    assert b.operand_shape(x) == [2, {"name": "batch", "maxSize": 8}]
    assert b.operand_data_type(x) == "float16"
    s = b.input(name="s", shape=[], data_type="int32")
    assert b.operand_shape(s) == []
    y = b.input("y", [{"name": "batch", "max_size": 8}], "float32")
    assert b.operand_shape(y) == [{"name": "batch", "maxSize": 8}]
    assert b.operand_shape(x) is not b.operand_shape(x)


def test_input_errors(ctx):
    b = ctx.create_graph_builder()
    b.input("x", [2], "float32")
    with pytest.raises(ValueError, match="duplicate"):
        b.input("x", [2], "float32")
    with pytest.raises(ValueError):
        b.input("", [2], "float32")
    with pytest.raises(ValueError):
        b.input("z", [0], "float32")
    with pytest.raises(OverflowError):
        b.input("z", [-3], "float32")
    with pytest.raises(TypeError):
        b.input("z", [2.0], "float32")
    with pytest.raises(TypeError):
        b.input("z", 2, "float32")
    with pytest.raises(ValueError, match="Unsupported data type"):
        b.input("z", [2], "bool")
    with pytest.raises(ValueError):
        b.input("z", [1] * 9, "float32")
    with pytest.raises(ValueError):
        b.input("z", [{"name": "n"}], "float32")
    with pytest.raises(ValueError):
        b.input("z", [{"name": "n", "maxSize": 2, "extra": 1}], "float32")
    with pytest.raises(TypeError):
        b.input("z", [{"name": 3, "maxSize": 2}], "float32")
    with pytest.raises(ValueError):
        b.input("z", [{"name": "n", "maxSize": 0}], "float32")
    with pytest.raises(ValueError):
        b.input("z", [{"name": "1n", "maxSize": 2}], "float32")
    b.input("p", [{"name": "n", "maxSize": 2}], "float32")
    with pytest.raises(ValueError, match="maxSize"):
        b.input("q", [{"name": "n", "maxSize": 3}], "float32")


@pytest.mark.parametrize(
    "value,data_type,want_type",
    [
        (np.zeros(3, np.float32), None, "float32"),
        ([1.5, 2.5], None, "float32"),
        (np.array([1, 2], np.uint64), None, "uint64"),
        ([True, False], None, "uint8"),
        ([1, 2], None, "int64"),
        ([1.5, 2.5], "float16", "float16"),
        ([-8, 7], "int4", "int4"),
        (3, None, "int64"),
        (np.float16(2), None, "float16"),
    ],
)
def test_constant_type_inference(ctx, value, data_type, want_type):
    b = ctx.create_graph_builder()
    c = b.constant(value, data_type=data_type)
    assert b.operand_data_type(c) == want_type
    assert b.operand_shape(c) == list(np.asarray(value).shape)
    g = b.build({"out": b.identity(c)})
    np.testing.assert_array_equal(
        ctx.compute(g, {})["out"],
        np.asarray(value).astype({"int4": np.int8}.get(want_type, want_type)),
    )


def test_constant_shape_and_errors(ctx):
    b = ctx.create_graph_builder()
    c = b.constant(np.arange(6), shape=[2, 3], data_type="float32")
    g = b.build({"out": b.identity(c)})
    np.testing.assert_array_equal(ctx.compute(g, {})["out"], np.arange(6).reshape(2, 3))
    b = ctx.create_graph_builder()
    with pytest.raises(ValueError):
        b.constant(1.0, shape=[2, 3])  # scalars are not broadcast
    with pytest.raises(ValueError, match="Unsupported data type"):
        b.constant(np.zeros(2, np.int16))
    with pytest.raises(ValueError, match="Unsupported data type"):
        b.constant(np.zeros(2, np.complex64))
    with pytest.raises(ValueError):
        b.constant(np.zeros((2, 0), np.float32))
    with pytest.raises(ValueError, match="out of range"):
        b.constant([1, 16], data_type="uint4")
    with pytest.raises(ValueError):
        b.constant([1, 2], shape=[{"name": "n", "maxSize": 2}])


def test_operands_are_opaque_and_owned(ctx):
    b1 = ctx.create_graph_builder()
    b2 = ctx.create_graph_builder()
    x = b1.input("x", [2], "float32")
    for attr in ("shape", "data_type", "dtype", "name"):
        assert not hasattr(x, attr)
    assert repr(x).startswith("MLOperand(id=")
    with pytest.raises(ValueError, match="another"):
        b2.relu(x)
    with pytest.raises(ValueError, match="another"):
        b2.operand_shape(x)
    with pytest.raises(TypeError):
        b1.relu(np.zeros(2))


def test_operation_argument_passing(ctx):
    b = ctx.create_graph_builder()
    x = b.input("x", [2, 3], "float32")
    b.leaky_relu(x, 0.2, label="l1")
    b.leaky_relu(input=x, alpha=0.2)
    b.leaky_relu(x=x)  # pywebnn's name for unary operands
    with pytest.raises(TypeError, match="unexpected keyword"):
        b.leaky_relu(x, slope=0.2)
    with pytest.raises(TypeError, match="multiple values"):
        b.leaky_relu(x, 0.2, alpha=0.3)
    with pytest.raises(TypeError, match="missing required"):
        b.softmax(x)
    with pytest.raises(TypeError, match="positional"):
        b.relu(x, 1)
    with pytest.raises(TypeError):
        b.relu(x, label=3)
    with pytest.raises(TypeError):
        b.softmax(x, axis=1.0)
    with pytest.raises(OverflowError):
        b.softmax(x, axis=-1)
    with pytest.raises(ValueError, match="softmax 'sm': axis 2"):
        b.softmax(x, 2, label="sm")
    assert b.where is not None and b.where_ is not None


def test_error_messages_name_op_label_rule_and_value(ctx):
    b = ctx.create_graph_builder()
    x = b.input("x", [2, 3], "float32")
    y = b.input("y", [4], "float32")
    with pytest.raises(ValueError) as info:
        b.add(x, y, label="residual")
    message = str(info.value)
    assert message.startswith("add 'residual': ") and "[2,3]" in message and "[4]" in message
    i = b.input("i", [2], "int32")
    with pytest.raises(ValueError, match=r"sigmoid: input data type int32 .*float32"):
        b.sigmoid(i)
    with pytest.raises(ValueError, match="data type"):
        b.add(x, b.input("h", [2, 3], "float16"))


def test_build_consumes_builder(ctx):
    b = ctx.create_graph_builder()
    x = b.input("x", [2], "float32")
    y = b.relu(x)
    g = b.build({"y": y, "y2": y})
    assert g.get_output_names() == ["y", "y2"]
    for call in (
        lambda: b.input("z", [1], "float32"),
        lambda: b.constant([1.0]),
        lambda: b.relu(x),
        lambda: b.operand_shape(y),
        lambda: b.operand_data_type(y),
        lambda: b.build({"y": y}),
    ):
        with pytest.raises(RuntimeError, match="already"):
            call()


def test_build_errors(ctx):
    b = ctx.create_graph_builder()
    x = b.input("x", [2], "float32")
    y = b.relu(x)
    with pytest.raises(TypeError):
        b.build([y])
    with pytest.raises(ValueError):
        b.build({})
    with pytest.raises(ValueError):
        b.build({"": y})
    with pytest.raises(TypeError):
        b.build({"y": 3})
    with pytest.raises(ValueError, match="identity"):
        b.build({"x": x})
    with pytest.raises(ValueError, match="identity"):
        b.build({"c": b.constant([1.0])})
    g = b.build({"y": y})  # argument errors did not consume the builder
    assert g.get_input_names() == ["x"]


def test_build_drops_unreachable_inputs_and_ops(ctx):
    b = ctx.create_graph_builder()
    x = b.input("x", [2], "float32")
    unused = b.input("unused", [3], "float32")
    b.relu(unused)
    g = b.build({"y": b.neg(x)})
    assert list(g.input_descriptors) == ["x"]
    assert g.operation_count == 1
    out = ctx.compute(g, {"x": [1, -2]})
    np.testing.assert_array_equal(out["y"], [-1, 2])


# ---- graphs, dispatch, compute (§10) ------------------------------------------------------


def test_graph_descriptors(ctx):
    b = ctx.create_graph_builder()
    x = b.input("x", [{"name": "batch", "maxSize": 4}, 3], "float32")
    w = b.constant(np.ones((3, 2), np.float32))
    z = b.input("z", [2], "int32")
    g = b.build({"y": b.identity(x), "z2": b.abs(z)})
    assert g.input_descriptors == {
        "x": {"shape": [{"name": "batch", "maxSize": 4}, 3], "data_type": "float32"},
        "z": {"shape": [2], "data_type": "int32"},
    }
    assert g.output_descriptors == {
        "y": {"shape": [{"name": "batch", "maxSize": 4}, 3], "data_type": "float32"},
        "z2": {"shape": [2], "data_type": "int32"},
    }
    assert g.input_descriptors is not g.input_descriptors
    assert repr(g) == "MLGraph(inputs=['x', 'z'], outputs=['y', 'z2'])"
    del w


def test_dispatch_runs_and_leaves_inputs_unchanged(ctx):
    g = simple_graph(ctx)
    x = ctx.create_tensor([2, 3], "float32", readable=True, writable=True)
    y = ctx.create_tensor([2, 3], "float32", readable=True)
    ctx.write_tensor(x, np.arange(6).reshape(2, 3))
    ctx.dispatch(g, {"x": x}, {"y": y})
    np.testing.assert_array_equal(ctx.read_tensor(y), np.arange(6).reshape(2, 3) + 1)
    np.testing.assert_array_equal(ctx.read_tensor(x), np.arange(6).reshape(2, 3))
    # never-written inputs read as zeros
    fresh = ctx.create_tensor([2, 3], "float32")
    ctx.dispatch(g, {"x": fresh}, {"y": y})
    np.testing.assert_array_equal(ctx.read_tensor(y), np.ones((2, 3)))


def test_dispatch_errors(ctx):
    g = simple_graph(ctx)
    x = ctx.create_tensor([2, 3], "float32")
    y = ctx.create_tensor([2, 3], "float32")
    with pytest.raises(TypeError):
        ctx.dispatch("graph", {"x": x}, {"y": y})
    with pytest.raises(TypeError):
        ctx.dispatch(g, [x], {"y": y})
    with pytest.raises(TypeError):
        ctx.dispatch(g, {"x": np.zeros((2, 3))}, {"y": y})
    cases = [
        ({}, {"y": y}),  # missing input
        ({"x": x, "extra": ctx.create_tensor([1], "float32")}, {"y": y}),  # extra input
        ({"q": x}, {"y": y}),  # wrong name
        ({"x": x}, {}),  # missing output
        ({"x": x}, {"y": x}),  # same tensor twice
        ({"x": ctx.create_tensor([2, 3], "float16")}, {"y": y}),  # data type
        ({"x": ctx.create_tensor([3, 2], "float32")}, {"y": y}),  # shape
        ({"x": ctx.create_tensor([6], "float32")}, {"y": y}),  # rank
        ({"x": x}, {"y": ctx.create_tensor([2, 2], "float32")}),  # output shape
    ]
    for inputs, outputs in cases:
        with pytest.raises(RuntimeError, match="dispatch"):
            ctx.dispatch(g, inputs, outputs)


def test_dispatch_binds_dynamic_dimensions(ctx):
    b = ctx.create_graph_builder()
    x = b.input("x", [{"name": "batch", "maxSize": 4}, 3], "float32")
    w = b.constant(np.ones((3, 2), np.float32))
    y = b.relu(b.matmul(x, w))
    g = b.build({"y": y})
    for rows in (1, 3, 4, 2):
        xt = ctx.create_tensor([rows, 3], "float32", writable=True)
        yt = ctx.create_tensor([rows, 2], "float32", readable=True)
        data = np.arange(rows * 3, dtype=np.float32).reshape(rows, 3) - 2
        ctx.write_tensor(xt, data)
        ctx.dispatch(g, {"x": xt}, {"y": yt})
        np.testing.assert_allclose(ctx.read_tensor(yt), np.maximum(data @ np.ones((3, 2)), 0))
    too_big = ctx.create_tensor([5, 3], "float32")
    with pytest.raises(RuntimeError, match="maxSize"):
        ctx.dispatch(g, {"x": too_big}, {"y": ctx.create_tensor([5, 2], "float32")})
    with pytest.raises(RuntimeError):
        ctx.dispatch(
            g,
            {"x": ctx.create_tensor([2, 3], "float32")},
            {"y": ctx.create_tensor([3, 2], "float32")},
        )


def test_dispatch_checks_consistent_dynamic_sizes(ctx):
    b = ctx.create_graph_builder()
    n = {"name": "n", "maxSize": 8}
    g = b.build({"s": b.add(b.input("a", [n], "float32"), b.input("b", [n], "float32"))})
    with pytest.raises(RuntimeError, match="'n'"):
        ctx.dispatch(
            g,
            {"a": ctx.create_tensor([2], "float32"), "b": ctx.create_tensor([3], "float32")},
            {"s": ctx.create_tensor([2], "float32")},
        )


def test_compute(ctx):
    g = simple_graph(ctx)
    out = ctx.compute(g, {"x": np.ones((2, 3)), "ignored": 1})
    assert list(out) == ["y"] and out["y"].dtype == np.float32
    np.testing.assert_array_equal(out["y"], np.full((2, 3), 2.0))
    with pytest.raises(ValueError, match="Missing input"):
        ctx.compute(g, {})
    with pytest.raises(ValueError):
        ctx.compute(g, {"x": np.ones((3, 2))})
    b = ctx.create_graph_builder()
    dyn = b.build({"y": b.relu(b.input("x", [{"name": "n", "maxSize": 3}], "float32"))})
    with pytest.raises(ValueError, match="resize_tensor"):
        ctx.compute(dyn, {"x": np.ones(2)})


def test_async_context(ctx):
    import asyncio

    actx = webnn.AsyncMLContext(ctx)
    g = simple_graph(ctx)
    x = ctx.create_tensor([2, 3], "float32", writable=True)
    y = ctx.create_tensor([2, 3], "float32", readable=True)

    async def run():
        await actx.write_tensor_async(x, np.full((2, 3), 4.0))
        await actx.dispatch(g, {"x": x}, {"y": y})
        return await actx.read_tensor_async(y)

    np.testing.assert_array_equal(asyncio.run(run()), np.full((2, 3), 5.0))
    assert actx.power_preference == ctx.power_preference
