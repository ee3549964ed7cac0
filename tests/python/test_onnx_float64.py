"""Models with `double` (float64) tensors: WebNN has no float64, so the importer computes them
in float32 and says so with webnn.onnx.Float64Warning (float64="float32", the default), or
refuses them (float64="error"). The session takes float64 feeds for double inputs and returns
float64 arrays for double outputs, as ONNX Runtime does; results are compared with ORT's
double computation at the tolerance float32 computation implies."""

import functools
import warnings

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
import webnn
import webnn.onnx as wo
from onnx import TensorProto, helper, numpy_helper
from webnn.onnx import InferenceSession

# The warning is what these models are expected to give (test_float64_warning_* checks it).
pytestmark = pytest.mark.filterwarnings("ignore::webnn.onnx.Float64Warning")
D, F = TensorProto.DOUBLE, TensorProto.FLOAT
RNG = np.random.default_rng(64)
# float32 has 24 bits: a handful of rounded operators stay within a few 1e-7 relative to the
# output's magnitude; 1e-5 leaves room for sums over a few dozen terms, and is 1e8 times the
# error a float64 computation would have.
FLOAT32_BOUND = 1e-5


def _model(nodes, inputs, outputs, inits=(), opset=17):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model.SerializeToString()


@functools.cache  # one set of random weights for every test
def _sklearn_like():
    """A double MLP + softmax as skl2onnx writes double models: Gemm, Relu, MatMul, Add,
    Softmax, ArgMax (int64 label), ReduceSum."""
    inits = [
        numpy_helper.from_array(RNG.standard_normal([6, 16]), "w1"),
        numpy_helper.from_array(RNG.standard_normal([16]), "b1"),
        numpy_helper.from_array(RNG.standard_normal([16, 4]) / 4, "w2"),
        numpy_helper.from_array(RNG.standard_normal([4]), "b2"),
    ]
    nodes = [
        helper.make_node("Gemm", ["x", "w1", "b1"], ["h0"]),
        helper.make_node("Relu", ["h0"], ["h1"]),
        helper.make_node("MatMul", ["h1", "w2"], ["l0"]),
        helper.make_node("Add", ["l0", "b2"], ["logits"]),
        helper.make_node("Softmax", ["logits"], ["prob"], axis=1),
        helper.make_node("ArgMax", ["prob"], ["label"], axis=1, keepdims=0),
        helper.make_node("ReduceSum", ["logits"], ["total"], keepdims=1),
    ]
    return _model(
        nodes,
        [helper.make_tensor_value_info("x", D, ["N", 6])],
        [
            helper.make_tensor_value_info("prob", D, ["N", 4]),
            helper.make_tensor_value_info("label", TensorProto.INT64, ["N"]),
            helper.make_tensor_value_info("total", D, [1, 1]),
        ],
        inits,
    )


def _float_model_with_double_middle():
    """What torch exports write for `x.double()...float()`: float input, Cast to double, work
    in double (with a double constant), Cast back to float."""
    nodes = [
        helper.make_node("Cast", ["x"], ["xd"], to=D),
        helper.make_node("Mul", ["xd", "k"], ["m"]),
        helper.make_node("Tanh", ["m"], ["t"]),
        helper.make_node("Mul", ["xd", "xd"], ["xsq"]),
        helper.make_node("Sqrt", ["xsq"], ["r"]),
        helper.make_node("Add", ["t", "r"], ["s"]),
        helper.make_node("Cast", ["s"], ["y"], to=F),
    ]
    inits = [numpy_helper.from_array(np.array([0.75]), "k")]
    return _model(
        nodes,
        [helper.make_tensor_value_info("x", F, [3, 5])],
        [helper.make_tensor_value_info("y", F, [3, 5])],
        inits,
    )


def _ort(data, feed):
    return ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, feed)


def _session(data, backend, **kw):
    ctx = webnn.ML().create_context(accelerated=False, backend=backend)
    return InferenceSession(data, context=ctx, **kw)


def _assert_float32_close(got, want):
    scale = float(np.abs(want).max())
    err = float(np.abs(got.astype(np.float64) - want).max())
    assert err <= FLOAT32_BOUND * scale, (err, scale)


@pytest.mark.parametrize("backend", ["cpu", "reference"])
def test_double_model_matches_onnxruntime_and_returns_float64(backend):
    data = _sklearn_like()
    x = RNG.standard_normal([5, 6])
    want = _ort(data, {"x": x})
    sess = _session(data, backend)
    got = sess.run(None, {"x": x})
    assert [g.dtype for g in got] == [np.float64, np.int64, np.float64]
    _assert_float32_close(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
    _assert_float32_close(got[2], want[2])
    # a second batch size: another graph of the same session
    x2 = RNG.standard_normal([2, 6])
    _assert_float32_close(sess.run(["prob"], {"x": x2})[0], _ort(data, {"x": x2})[0])


def test_session_reports_double_types_as_onnxruntime_does():
    data = _sklearn_like()
    ours, theirs = _session(data, "cpu"), ort.InferenceSession(data)

    def described(args):
        return [(a.name, a.type, a.shape) for a in args]

    assert described(ours.get_inputs()) == described(theirs.get_inputs())
    assert described(ours.get_outputs()) == described(theirs.get_outputs())
    assert ours.get_inputs()[0].type == "tensor(double)"


def test_session_refuses_a_float32_feed_for_a_double_input_like_onnxruntime():
    data = _sklearn_like()
    sess = _session(data, "cpu")
    with pytest.raises(TypeError, match=r"expected tensor\(double\), got tensor\(float\)"):
        sess.run(None, {"x": np.zeros([2, 6], np.float32)})


@pytest.mark.parametrize("backend", ["cpu", "reference"])
def test_cast_to_double_and_back_in_a_float_model(backend):
    data = _float_model_with_double_middle()
    x = RNG.standard_normal([3, 5]).astype(np.float32)
    want = _ort(data, {"x": x})[0]
    got = _session(data, backend).run(None, {"x": x})[0]
    assert got.dtype == np.float32
    _assert_float32_close(got, want.astype(np.float64))


def test_double_values_folded_at_import():
    """A double shape computation (Range in double, Cast to int64) folds with numpy; its run-time
    consumer sees float32."""
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Cast", ["s"], ["sd"], to=D),
        helper.make_node("Mul", ["sd", "half"], ["hd"]),
        helper.make_node("Cast", ["hd"], ["h"], to=TensorProto.INT64),
        helper.make_node("Reshape", ["x", "h"], ["y0"]),
        helper.make_node("Cast", ["y0"], ["y"], to=D),
    ]
    inits = [numpy_helper.from_array(np.array([0.5, 2.0]), "half")]
    data = _model(
        nodes,
        [helper.make_tensor_value_info("x", F, [4, 3])],
        [helper.make_tensor_value_info("y", D, [2, 6])],
        inits,
    )
    x = RNG.standard_normal([4, 3]).astype(np.float32)
    got = _session(data, "cpu").run(None, {"x": x})[0]
    want = _ort(data, {"x": x})[0]
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, want)  # float32 values, cast exactly


def test_float64_warning_names_the_first_double_tensor():
    assert issubclass(wo.Float64Warning, UserWarning)
    ctx = webnn.ML().create_context(accelerated=False, backend="cpu")
    with pytest.warns(wo.Float64Warning, match="computed in float32") as record:
        wo.load(ctx, _sklearn_like(), free_dims={"N": 2})
    assert len([w for w in record if w.category is wo.Float64Warning]) == 1
    assert "'x'" in str(record[0].message)  # the double graph input, first at run time
    with pytest.warns(wo.Float64Warning, match="'xd'"):  # the cast, before its use of k
        wo.load(ctx, _float_model_with_double_middle())


def test_a_model_without_doubles_gives_no_warning():
    data = _model(
        [helper.make_node("Relu", ["x"], ["y"])],
        [helper.make_tensor_value_info("x", F, [2])],
        [helper.make_tensor_value_info("y", F, [2])],
    )
    ctx = webnn.ML().create_context(accelerated=False, backend="cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("error", wo.Float64Warning)
        wo.load(ctx, data)


def test_float64_error_mode_names_the_first_double_tensor(tmp_path):
    ctx = webnn.ML().create_context(accelerated=False, backend="cpu")
    with pytest.raises(wo.OnnxImportError, match=r"graph input 'x' is a double \(float64\)"):
        wo.load(ctx, _sklearn_like(), free_dims={"N": 2}, float64="error")
    with pytest.raises(wo.OnnxImportError, match=r"Cast, opset 17\): its output 'xd' is a double"):
        wo.load(ctx, _float_model_with_double_middle(), float64="error")
    # a float model whose only double is a Cast inside: the node is named
    cast_only = _model(
        [
            helper.make_node("Cast", ["x"], ["xd"], to=D, name="to_double"),
            helper.make_node("Tanh", ["xd"], ["t"]),
            helper.make_node("Cast", ["t"], ["y"], to=F),
        ],
        [helper.make_tensor_value_info("x", F, [2])],
        [helper.make_tensor_value_info("y", F, [2])],
    )
    with pytest.raises(
        wo.OnnxImportError, match=r"node 'to_double' \(ai\.onnx::Cast, opset 17\): its output"
    ):
        wo.load(ctx, cast_only, float64="error")
    with pytest.raises(wo.OnnxImportError, match="graph input 'x'"):
        InferenceSession(_sklearn_like(), float64="error").run(None, {"x": np.zeros([1, 6])})
    with pytest.raises(wo.OnnxImportError, match="graph input 'x'"):
        wo.convert(_sklearn_like(), tmp_path / "m.webnn", free_dims={"N": 1}, float64="error")
    data = _model(
        [helper.make_node("Add", ["x", "c"], ["y"])],
        [helper.make_tensor_value_info("x", F, [2])],
        [helper.make_tensor_value_info("y", F, [2])],
        [numpy_helper.from_array(np.array([1.0, 2.0], np.float32), "c")],
    )
    wo.load(ctx, data, float64="error")  # no double: imports


def test_float64_option_is_checked():
    with pytest.raises(wo.OnnxImportError, match="float64='float64'"):
        wo.load(webnn.ML().create_context(), _sklearn_like(), float64="float64")
    with pytest.raises(ValueError, match="float64='double'"):
        InferenceSession(_sklearn_like(), float64="double")


def test_converted_double_model_has_float32_inputs_and_outputs(tmp_path):
    path = tmp_path / "m.webnn"
    with pytest.warns(wo.Float64Warning):
        wo.convert(_sklearn_like(), path, free_dims={"N": 3})
    ctx = webnn.ML().create_context(accelerated=False, backend="cpu")
    graph = ctx.load_graph(str(path))
    assert graph.input_descriptors["x"]["data_type"] == "float32"
    assert graph.output_descriptors["prob"]["data_type"] == "float32"
    x = RNG.standard_normal([3, 6])
    got = ctx.compute(graph, {"x": x.astype(np.float32)})["prob"]
    _assert_float32_close(got, _ort(_sklearn_like(), {"x": x})[0])


def test_session_warns_once_at_the_callers_line():
    sess = InferenceSession(_sklearn_like())  # free batch: imported at the first run
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        sess.run(None, {"x": RNG.standard_normal([2, 6])})
        sess.run(None, {"x": RNG.standard_normal([3, 6])})  # another graph: no second warning
    mine = [w for w in record if w.category is wo.Float64Warning]
    assert len(mine) == 1 and mine[0].filename == __file__


def test_a_double_shape_computation_folds_in_double_precision():
    """floor(75 * 0.84) is 63 in double and 62 in float32 (62.999996): a size computed in
    double at import (torch's interpolate/slicing exports) stays double, warns nothing, and
    float64="error" accepts the model, since nothing double reaches run time."""
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Cast", ["s"], ["sd"], to=D),
        helper.make_node("Mul", ["sd", "scale"], ["m"]),
        helper.make_node("Floor", ["m"], ["f"]),
        helper.make_node("Cast", ["f"], ["end"], to=TensorProto.INT64),
        helper.make_node("Slice", ["x", "zero", "end"], ["y"]),
    ]
    inits = [
        numpy_helper.from_array(np.array([0.84]), "scale"),
        numpy_helper.from_array(np.array([0], np.int64), "zero"),
    ]
    data = _model(
        nodes,
        [helper.make_tensor_value_info("x", F, [75])],
        [helper.make_tensor_value_info("y", F, [63])],
        inits,
    )
    x = np.arange(75, dtype=np.float32)
    want = _ort(data, {"x": x})[0]
    assert want.shape == (63,)
    ctx = webnn.ML().create_context(accelerated=False, backend="cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("error", wo.Float64Warning)
        graph = wo.load(ctx, data, float64="error")
    np.testing.assert_array_equal(ctx.compute(graph, {"x": x})["y"], want)


def test_a_double_weight_read_twice_is_one_constant(tmp_path):
    w = RNG.standard_normal([64, 64])
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["a"]),
        helper.make_node("MatMul", ["a", "w"], ["y"]),
    ]
    data = _model(
        nodes,
        [helper.make_tensor_value_info("x", D, [2, 64])],
        [helper.make_tensor_value_info("y", D, [2, 64])],
        [numpy_helper.from_array(w, "w")],
    )
    wo.convert(data, tmp_path / "m.webnn")
    weights = [p for p in tmp_path.iterdir() if p.suffix != ".webnn"]
    assert sum(p.stat().st_size for p in weights) < 2 * 64 * 64 * 4  # one float32 copy
    x = RNG.standard_normal([2, 64])
    _assert_float32_close(_session(data, "cpu").run(None, {"x": x})[0], _ort(data, {"x": x})[0])


def _masked_softmax_model():
    """A double softmax over scores plus a converter's -1e300 mask (finite in double, beyond
    float32): row 1 is masked everywhere, so ORT's double result there is uniform."""
    mask = np.zeros([3, 4])
    mask[0, 1] = mask[2, 3] = -1e300
    mask[1, :] = -1e300
    nodes = [
        helper.make_node("Add", ["x", "mask"], ["masked"]),
        helper.make_node("Softmax", ["masked"], ["prob"], axis=1),
        helper.make_node("Clip", ["x", "lo", "hi"], ["clipped"]),
    ]
    inits = [
        numpy_helper.from_array(mask, "mask"),
        numpy_helper.from_array(np.array(-1e250), "lo"),
        numpy_helper.from_array(np.array(2.0), "hi"),
    ]
    return _model(
        nodes,
        [helper.make_tensor_value_info("x", D, [3, 4])],
        [helper.make_tensor_value_info(n, D, [3, 4]) for n in ("prob", "clipped")],
        inits,
    )


@pytest.mark.parametrize("backend", ["cpu", "reference"])
def test_doubles_beyond_float32_are_clamped_not_infinite(backend):
    """A double constant or feed beyond float32's range is held as +-FLT_MAX, not +-inf (an inf
    mask would make the fully masked row NaN: inf - inf); the warning counts them."""
    data = _masked_softmax_model()
    x = RNG.standard_normal([3, 4])
    x[2, 0] = -1e200  # a double feed beyond float32 too, clipped by the model to -1e250's clamp
    want = _ort(data, {"x": x})
    with pytest.warns(wo.Float64Warning) as record:
        got = _session(data, backend).run(None, {"x": x})
    message = str(record[0].message)
    assert "7 finite double value(s) beyond float32's range (the first in 'mask', 6" in message
    assert np.isfinite(got[0]).all()
    np.testing.assert_allclose(got[0][1], np.full(4, 0.25), rtol=1e-6)  # uniform, as ORT
    _assert_float32_close(got[0], want[0])
    finite = np.isfinite(x) & (np.abs(x) < 1e30)
    _assert_float32_close(got[1][finite], want[1][finite])
    assert got[1][2, 0] == -np.finfo(np.float32).max  # ORT: -1e200, the nearest float32 bound
