"""Calls written for pywebnn (RustNN's Python package) that api.md allows: device_type,
explicit None for optional options, pad's keyword form, AsyncMLContext tensor defaults,
reprs and ml_dtypes 4-bit arrays."""

import ast
import asyncio
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
import webnn
from samples_common import all_samples

STUB = Path(__file__).resolve().parents[2] / "python" / "webnn" / "_webnn.pyi"


@pytest.fixture(scope="module")
def ctx():
    return webnn.ML().create_context(accelerated=False)


# ---- create_context(device_type=...) -------------------------------------------------------


@pytest.mark.parametrize("accelerated", [True, False])
def test_device_type_cpu_means_not_accelerated(accelerated):
    ml = webnn.ML()
    ctx = ml.create_context(power_preference="default", accelerated=accelerated, device_type="cpu")
    assert ctx.accelerated is False
    assert ctx.device_type == "cpu"


@pytest.mark.parametrize("device_type", ["gpu", "npu", "auto"])
@pytest.mark.parametrize("accelerated", [True, False])
def test_accelerator_device_types_keep_accelerated(device_type, accelerated):
    ml = webnn.ML()
    plain = ml.create_context(accelerated=accelerated)
    ctx = ml.create_context(accelerated=accelerated, device_type=device_type)
    assert ctx.accelerated == plain.accelerated
    assert ctx.backend == plain.backend


def test_device_type_positional_and_none():
    ml = webnn.ML()
    assert ml.create_context("low-power", True, "reference", "cpu").backend == "reference"
    assert ml.create_context(device_type=None).accelerated == ml.create_context().accelerated


def test_device_type_runs_pywebnn_probe():
    # pywebnn's test suite probes its execution backend exactly like this.
    ctx = webnn.ML().create_context(
        power_preference="default", accelerated=False, device_type="cpu"
    )
    b = ctx.create_graph_builder()
    graph = b.build({"output": b.relu(b.input("x", [1, 1], "float32"))})
    result = ctx.compute(graph, {"x": np.array([[1.0]], dtype=np.float32)})
    np.testing.assert_array_equal(result["output"], [[1.0]])


@pytest.mark.parametrize("bad", ["tpu", "CPU", ""])
def test_unknown_device_type_names_accepted_values(bad):
    with pytest.raises(ValueError, match="device_type") as e:
        webnn.ML().create_context(device_type=bad)
    for name in ("'auto'", "'cpu'", "'gpu'", "'npu'"):
        assert name in str(e.value)


def test_device_type_must_be_str():
    with pytest.raises(TypeError, match="device_type"):
        webnn.ML().create_context(device_type=1)


# ---- None for an optional option means the default, for every operation ---------------------


def _builder_methods():
    """Stub signatures: method -> (positional parameter names, {optional name})."""
    tree = ast.parse(STUB.read_text())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "MLGraphBuilder")
    out = {}
    for fn in cls.body:
        if not isinstance(fn, ast.FunctionDef) or fn.name.startswith("_"):
            continue
        if fn.name in ("input", "constant", "build", "save", "operand_shape", "operand_data_type"):
            continue
        positional = [a.arg for a in fn.args.args[1:]]
        optional = set(positional[len(positional) - len(fn.args.defaults) :])
        optional |= {a.arg for a, d in zip(fn.args.kwonlyargs, fn.args.kw_defaults) if d}
        optional.discard("label")
        required = positional[: len(positional) - len(fn.args.defaults)]
        out[fn.name] = (positional, optional, required)
    return out


METHODS = _builder_methods()


class _Proxy:
    """A builder whose calls of `method` pass None for options: for every option they omit
    (option=None), or, for one `option`, None instead of its value or nothing at all."""

    def __init__(self, builder, method, option=None, mode="none"):
        self._builder = builder
        self._method, self._option, self._mode = method, option, mode
        self.filled = 0

    def __getattr__(self, name):
        attr = getattr(self._builder, name)
        if name != self._method:
            return attr
        positional, optional, _ = METHODS[name]

        def call(*args, **kwargs):
            if self._option is None:
                given = set(positional[: len(args)]) | set(kwargs)
                extra = {o: None for o in optional if o not in given}
                self.filled += len(extra)
                return attr(*args, **kwargs, **extra)
            # Spell the arguments from the option on as keywords, then drop or None it.
            if self._option in positional[: len(args)]:
                i = positional.index(self._option)
                kwargs.update(zip(positional[i:], args[i:]))
                args = args[:i]
            kwargs.pop(self._option, None)
            if self._mode == "none":
                kwargs[self._option] = None
            self.filled += 1
            return attr(*args, **kwargs)

        return call


def _method_of(op):
    return next(m for m in METHODS if m.replace("_", "") == op.lower())


SAMPLES = all_samples()


def _outputs(result):
    results = result if isinstance(result, list) else [result]
    return {f"out{i}": r for i, r in enumerate(results)}


def test_every_operation_has_a_sample():
    # Every spec op has a sample (test_support_limits.py checks that), so this covers them all.
    methods = {m.replace("_", "") for m in METHODS}
    assert {op.lower() for op in SAMPLES} <= methods
    assert sum(len(METHODS[_method_of(op)][1]) for op in SAMPLES) > 100


def _sample_types(ctx, op):
    """The sample's data types: float32 for its first operand argument where allowed."""
    field, limit = next(iter(ctx.op_support_limits()[op].items()))
    types = limit["dataTypes"]
    return {field: "float32" if "float32" in types else types[0]}


def _run_sample(ctx, op, proxy):
    """The sample's outputs, or the type of the exception it raised."""
    try:
        outputs = _outputs(SAMPLES[op](proxy, _sample_types(ctx, op)))
        return ctx.compute(proxy._builder.build(outputs), {})
    except (ValueError, TypeError, RuntimeError) as e:
        return type(e)


def _assert_same(got, want, what):
    if isinstance(want, type):
        assert got is want, what
        return
    assert isinstance(got, dict) and set(got) == set(want), what
    for name in want:
        np.testing.assert_array_equal(got[name], want[name], err_msg=f"{what} {name}")


@pytest.mark.parametrize("op", sorted(SAMPLES))
def test_none_for_omitted_options_means_default(ctx, op):
    method = _method_of(op)
    want = _run_sample(ctx, op, _Proxy(ctx.create_graph_builder(), None))
    assert isinstance(want, dict), f"the {op} sample must build and run"
    _assert_same(_run_sample(ctx, op, _Proxy(ctx.create_graph_builder(), method)), want, op)


def _option_cases():
    for op in sorted(SAMPLES):
        method = _method_of(op)
        for option in sorted(METHODS[method][1]):
            yield pytest.param(op, method, option, id=f"{op}:{option}")


@pytest.mark.parametrize("op,method,option", list(_option_cases()))
def test_none_for_each_option_equals_omitting_it(ctx, op, method, option):
    # Replacing the sample's value (if any) by None must act exactly like leaving it out:
    # same results, or the same exception when the default does not suit the sample.
    omitted = _Proxy(ctx.create_graph_builder(), method, option, "omit")
    want = _run_sample(ctx, op, omitted)
    none = _Proxy(ctx.create_graph_builder(), method, option, "none")
    _assert_same(_run_sample(ctx, op, none), want, f"{op} {option}=None")
    assert none.filled > 0, f"the {op} sample never called {method}"


def test_explicit_none_examples_from_the_issue(ctx):
    b = ctx.create_graph_builder()
    x = b.input("x", [1, 2, 5, 5], "float32")
    w = b.constant(np.ones((3, 2, 3, 3), np.float32))
    assert b.operand_shape(b.conv2d(x, w, None, None, None, None)) == [1, 3, 3, 3]
    assert b.operand_shape(b.conv2d(x, w, padding=None, input_layout=None, bias=None)) == [
        1,
        3,
        3,
        3,
    ]
    assert b.operand_shape(b.reduce_sum(x, None, None)) == []
    assert b.operand_shape(b.reduce_mean(x, axes=[1], keep_dimensions=None)) == [1, 5, 5]
    assert b.operand_shape(b.instance_normalization(x, epsilon=None, layout=None)) == [1, 2, 5, 5]
    assert b.operand_shape(b.relu(x, label=None)) == [1, 2, 5, 5]


@pytest.mark.parametrize("method", sorted(METHODS))
def test_none_for_a_required_argument_is_a_type_error(ctx, method):
    _, _, required = METHODS[method]
    if not required:
        pytest.skip("no required argument")
    b = ctx.create_graph_builder()
    with pytest.raises(TypeError) as e:
        getattr(b, method)(*[None] * len(required))
    assert method in str(e.value) and f"'{required[0]}'" in str(e.value), str(e.value)
    assert "None" in str(e.value)


def test_required_none_after_valid_operands(ctx):
    b = ctx.create_graph_builder()
    x = b.input("x", [2, 3], "float32")
    with pytest.raises(TypeError, match=r"concat\(\): argument 'axis' is required"):
        b.concat([x, x], None)
    with pytest.raises(TypeError, match=r"softmax\(\): argument 'axis'"):
        b.softmax(x, axis=None)
    with pytest.raises(TypeError, match=r"add\(\): argument 'b'"):
        b.add(x, None)


# ---- pad(x, padding=..., mode=..., value=...) ----------------------------------------------


def _pad(ctx, x, *args, **kwargs):
    b = ctx.create_graph_builder()
    xin = b.input("x", list(x.shape), "float32")
    return ctx.compute(b.build({"y": b.pad(xin, *args, **kwargs)}), {"x": x})["y"]


X = np.arange(1, 10, dtype=np.float32).reshape(3, 3)


@pytest.mark.parametrize(
    "call,numpy_args",
    [
        (lambda c: _pad(c, X, padding=[1, 2, 3, 4]), (((1, 3), (2, 4)), "constant")),
        (lambda c: _pad(c, X, padding=[1, 1, 0, 2], mode="edge"), (((1, 0), (1, 2)), "edge")),
        (
            lambda c: _pad(c, X, padding=[1, 0, 1, 2], mode="reflection"),
            (((1, 1), (0, 2)), "reflect"),
        ),
        (lambda c: _pad(c, X, [1, 1, 1, 1], "edge"), (((1, 1), (1, 1)), "edge")),
        (lambda c: _pad(c, X, [2, 0], [0, 1]), (((2, 0), (0, 1)), "constant")),
        (
            lambda c: _pad(c, X, beginning_padding=[0, 1], ending_padding=[1, 0], mode="edge"),
            (((0, 1), (1, 0)), "edge"),
        ),
        (
            lambda c: _pad(c, X, padding=[1, 1, 1, 1], mode=None, value=None),
            (((1, 1),) * 2, "constant"),
        ),
    ],
)
def test_pad_forms(ctx, call, numpy_args):
    widths, mode = numpy_args
    np.testing.assert_array_equal(call(ctx), np.pad(X, widths, mode=mode))


def test_pad_keyword_value(ctx):
    want = np.pad(X, ((1, 1), (2, 0)), constant_values=5.0)
    np.testing.assert_array_equal(
        _pad(ctx, X, padding=[1, 2, 1, 0], mode="constant", value=5.0), want
    )
    np.testing.assert_array_equal(_pad(ctx, X, [1, 2, 1, 0], "constant", 5.0), want)
    # pywebnn's positional form with an explicit None mode.
    np.testing.assert_array_equal(_pad(ctx, X, [1, 2, 1, 0], None, 5.0), want)
    # The spec form: ending_padding, then mode, then value.
    np.testing.assert_array_equal(_pad(ctx, X, [1, 2], [1, 0], "constant", 5.0), want)


def test_pad_rejects_both_spellings_and_bad_lengths(ctx):
    b = ctx.create_graph_builder()
    x = b.input("x", [3, 3], "float32")
    with pytest.raises(TypeError, match="multiple values"):
        b.pad(x, [1, 1], padding=[1, 1])
    with pytest.raises(ValueError):
        b.pad(x, padding=[1, 1, 1])
    with pytest.raises(TypeError, match="pad"):
        b.pad(x)


# ---- AsyncMLContext ------------------------------------------------------------------------


def test_async_context_tensors_default_to_readable_and_writable(ctx):
    actx = webnn.AsyncMLContext(ctx)
    t = actx.create_tensor([2, 2], "float32")
    assert t.readable and t.writable
    assert not ctx.create_tensor([2, 2], "float32").readable
    explicit = actx.create_tensor([2], "int32", readable=False, writable=True)
    assert (explicit.readable, explicit.writable) == (False, True)
    positional = actx.create_tensor([2], "int32", True, False, True)
    assert (positional.readable, positional.writable, positional.exportable_to_gpu) == (
        True,
        False,
        True,
    )
    b = actx.create_graph_builder()
    x = b.input("x", [2, 2], "float32")
    graph = b.build({"y": b.mul(x, x)})
    out = actx.create_tensor([2, 2], "float32")

    async def run():
        await actx.write_tensor_async(t, [[1, 2], [3, 4]])
        await actx.dispatch(graph, {"x": t}, {"y": out})
        return await actx.read_tensor_async(out)

    np.testing.assert_array_equal(asyncio.run(run()), [[1, 4], [9, 16]])


# ---- reprs ---------------------------------------------------------------------------------


def test_tensor_and_graph_reprs(ctx):
    t = ctx.create_tensor([2, 3], "float32", readable=True)
    assert repr(t) == "MLTensor(dtype='float32', shape=[2, 3], readable=True, writable=False)"
    assert repr(ctx.create_tensor([], "int4", writable=True)) == (
        "MLTensor(dtype='int4', shape=[], readable=False, writable=True)"
    )
    b = ctx.create_graph_builder()
    x = b.input("x", [2], "float32")
    graph = b.build({"y": b.relu(x), "z": b.neg(x)})
    assert repr(graph) == "MLGraph(inputs=['x'], outputs=['y', 'z'])"


# ---- ml_dtypes 4-bit arrays ----------------------------------------------------------------

INT4 = np.array([[-8, -1, 0], [1, 6, 7]], dtype=ml_dtypes.int4)
UINT4 = np.array([0, 1, 9, 15, 7], dtype=ml_dtypes.uint4)


@pytest.mark.parametrize("array,data_type", [(INT4, "int4"), (UINT4, "uint4")])
def test_constant_infers_4bit_from_ml_dtypes(ctx, array, data_type):
    b = ctx.create_graph_builder()
    c = b.constant(array)
    assert b.operand_data_type(c) == data_type
    assert b.operand_shape(c) == list(array.shape)
    graph = b.build({"y": b.identity(c)})
    y = ctx.compute(graph, {})["y"]
    carrier = np.int8 if data_type == "int4" else np.uint8
    assert y.dtype == carrier
    np.testing.assert_array_equal(y, array.astype(carrier))


def test_constant_converts_ml_dtypes_to_other_types(ctx):
    b = ctx.create_graph_builder()
    c = b.constant(INT4, data_type="float32")
    d = b.constant(INT4, shape=[3, 2], data_type="int4")
    graph = b.build({"c": b.identity(c), "d": b.identity(d)})
    out = ctx.compute(graph, {})
    np.testing.assert_array_equal(out["c"], INT4.astype(np.float32))
    np.testing.assert_array_equal(out["d"], INT4.astype(np.int8).reshape(3, 2))


@pytest.mark.parametrize("array,data_type", [(INT4, "int4"), (UINT4, "uint4")])
def test_write_and_read_tensor_as_ml_dtypes(ctx, array, data_type):
    t = ctx.create_tensor(list(array.shape), data_type, readable=True, writable=True)
    ctx.write_tensor(t, array)
    carrier = ctx.read_tensor(t)
    assert carrier.dtype == (np.int8 if data_type == "int4" else np.uint8)
    np.testing.assert_array_equal(carrier, array.astype(carrier.dtype))
    for dtype in (
        getattr(ml_dtypes, data_type),
        data_type,
        np.dtype(getattr(ml_dtypes, data_type)),
    ):
        back = ctx.read_tensor(t, dtype=dtype)
        assert back.dtype == getattr(ml_dtypes, data_type)
        assert back.shape == array.shape
        np.testing.assert_array_equal(back.astype(np.int64), array.astype(np.int64))
    assert ctx.read_tensor(t, dtype=carrier.dtype).dtype == carrier.dtype
    assert ctx.read_tensor(t, dtype=None).dtype == carrier.dtype


def test_ml_dtypes_odd_count_packs_low_nibble_first(ctx):
    # 3 int4 values occupy 2 bytes; a dispatch through a graph sees them in order.
    b = ctx.create_graph_builder()
    x = b.input("x", [3], "int4")
    graph = b.build({"y": b.cast(x, "int32")})
    xt = ctx.create_tensor([3], "int4", writable=True)
    yt = ctx.create_tensor([3], "int32", readable=True)
    ctx.write_tensor(xt, np.array([-3, 7, -8], dtype=ml_dtypes.int4))
    ctx.dispatch(graph, {"x": xt}, {"y": yt})
    np.testing.assert_array_equal(ctx.read_tensor(yt), [-3, 7, -8])


def test_read_tensor_rejects_other_dtypes(ctx):
    t = ctx.create_tensor([2], "int4", readable=True)
    with pytest.raises(ValueError, match="read_tensor: dtype 'float32'.*int4"):
        ctx.read_tensor(t, dtype=np.float32)
    f = ctx.create_tensor([2], "float32", readable=True)
    with pytest.raises(ValueError, match="read_tensor"):
        ctx.read_tensor(f, dtype=ml_dtypes.int4)
    with pytest.raises(TypeError):
        ctx.read_tensor(f, dtype="not a dtype")
