"""ONNX types WebNN lacks, held in types it has (webnn/onnx/held.py; issue 6).

bfloat16 rounding (checked over whole float32 binades and the special ranges against
ml_dtypes, which onnx's reference uses), int16 / uint16 wrapping (against numpy's C
conversion), Cast / CastLike / QuantizeLinear / DequantizeLinear of float8, float4, int2 and
int16 models through InferenceSession against onnx.reference.ReferenceEvaluator (ONNX Runtime
1.23 cannot be fed float8 from Python) and, for int16 / bfloat16 arithmetic, against ONNX
Runtime; and the refusal of an operator that cannot read coded values."""

import ml_dtypes
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

import webnn
import webnn.onnx as wo
from onnx import TensorProto as T
from onnx import helper
from onnx.reference import ReferenceEvaluator
from webnn.onnx import held

BACKENDS = ["cpu", "reference"]


class _Node:
    """What held.py's graph pieces use of a converter's NodeContext."""

    def __init__(self, builder):
        self.b = builder
        self.importer = self

    def operand(self, array, ctx=None):
        return self.b.constant(np.asarray(array))


def _run_piece(backend, piece, x):
    ctx = webnn.ML().create_context(backend=backend)
    b = ctx.create_graph_builder()
    xin = b.input("x", list(x.shape), str(x.dtype))
    graph = b.build({"y": piece(_Node(b), xin)})
    return ctx.compute(graph, {"x": x})["y"]


def _binades():
    """Every float32 of a few whole binades (the split is scale-invariant between them), the
    subnormals, the binades at the overflow edge, and specials."""
    parts = []
    for top in (0x3F8, 0x008, 0x718, 0x7F0, 0x7F7, 0x000):
        start = np.uint32(top << 20)
        parts.append(np.arange(start, start + (1 << 21), 7, dtype=np.uint32))
    x = np.concatenate(parts).view(np.float32)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 3.3895314e38, 3.4028235e38], np.float32)
    x = np.concatenate([x, -x, special])
    return x


@pytest.mark.parametrize("backend", BACKENDS)
def test_bfloat16_rounding_is_round_to_nearest_even(backend):
    x = _binades()
    got = _run_piece(backend, held.round_bfloat16, x)
    with np.errstate(invalid="ignore"):  # NaN's conversion
        want = x.astype(ml_dtypes.bfloat16).astype(np.float32)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    keep = ~np.isnan(want)
    np.testing.assert_array_equal(got[keep].view(np.uint32), want[keep].view(np.uint32))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("elem,dtype", [(T.INT16, np.int16), (T.UINT16, np.uint16)])
def test_int16_wrap_is_modular(backend, elem, dtype):
    rng = np.random.default_rng(1)
    edges = np.array([-(2**31), 2**31 - 1, -32769, -32768, 32767, 32768, 65535, 65536, -1, 0])
    x = np.concatenate([edges, rng.integers(-(2**31), 2**31, 5000)]).astype(np.int32)
    got = _run_piece(backend, lambda n, v: held.wrap(n, v, elem), x)
    np.testing.assert_array_equal(got, x.astype(dtype).astype(np.int32))


def _model(nodes, inputs, outputs, opset=25):
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _session(model, backend):
    ctx = webnn.ML().create_context(backend=backend)
    return wo.InferenceSession(model.SerializeToString(), context=ctx)


def _same(got, want):
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    g, w = got.astype(np.float64), want.astype(np.float64)
    np.testing.assert_array_equal(g, w)  # NaN equals NaN


_F8 = [T.FLOAT8E4M3FN, T.FLOAT8E4M3FNUZ, T.FLOAT8E5M2, T.FLOAT8E5M2FNUZ, T.FLOAT4E2M1, 24]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("elem", _F8)
def test_float8_reshape_transpose_and_cast_back(backend, elem):
    """A coded input moved by Reshape / Transpose / Concat with a coded initializer, decoded
    by Cast, encoded again by CastLike (saturate=0 where the format has infinities)."""
    np_type = held.numpy_type(elem)
    rng = np.random.default_rng(elem)
    x = (rng.standard_normal(24) * 4).astype(np.float32).astype(np_type).reshape(2, 3, 4)
    w = (rng.standard_normal(12) * 4).astype(np.float32).astype(np_type).reshape(1, 4, 3)
    init = onnx.numpy_helper.from_array(w, "w")
    nodes = [
        helper.make_node("Transpose", ["x"], ["t"], perm=[0, 2, 1]),
        helper.make_node("Concat", ["t", "w"], ["c"], axis=0),
        helper.make_node("Cast", ["c"], ["f"], to=T.FLOAT),
        helper.make_node("Mul", ["f", "k"], ["m"]),
        helper.make_node("CastLike", ["m", "c"], ["y"]),
    ]
    k = onnx.numpy_helper.from_array(np.float32(3.1), "k")
    model = _model(nodes, [("x", elem, [2, 3, 4])], [("y", elem, [3, 4, 3]), ("f", T.FLOAT, None)])
    model.graph.initializer.extend([init, k])
    got = _session(model, backend).run(None, {"x": x})
    with np.errstate(all="ignore"):
        want = ReferenceEvaluator(model).run(None, {"x": x})
    _same(got[0], want[0])
    _same(got[1], want[1])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("elem", [T.FLOAT8E4M3FN, T.FLOAT8E5M2, T.FLOAT4E2M1, T.INT16, 26, 25])
def test_quantize_dequantize_blocked(backend, elem):
    """Blocked QuantizeLinear to the type and DequantizeLinear back, per block scales along
    axis 1 (a partial last block), against onnx's reference."""
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((2, 7)) * 30).astype(np.float32)
    scale = rng.uniform(0.5, 4, (2, 3)).astype(np.float32)
    zp = np.zeros((2, 3), held.numpy_type(elem))
    inits = [onnx.numpy_helper.from_array(scale, "s"), onnx.numpy_helper.from_array(zp, "z")]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], axis=1, block_size=3),
        helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], axis=1, block_size=3),
    ]
    model = _model(nodes, [("x", T.FLOAT, [2, 7])], [("q", elem, [2, 7]), ("y", T.FLOAT, [2, 7])])
    model.graph.initializer.extend(inits)
    got = _session(model, backend).run(None, {"x": x})
    with np.errstate(all="ignore"):
        want = ReferenceEvaluator(model).run(None, {"x": x})
    _same(got[0], want[0])
    _same(got[1], want[1])


@pytest.mark.parametrize("backend", BACKENDS)
def test_int16_and_bfloat16_arithmetic_match_ort(backend):
    """int16 sums and products that overflow wrap as ONNX Runtime's kernels do; a float
    cast to bfloat16, computed on (Mul, Add: each result rounded) and cast back matches ORT's
    Cast kernels (ORT cannot take or return bfloat16 arrays from Python)."""
    ort = pytest.importorskip("onnxruntime")
    nodes = [
        helper.make_node("Add", ["a", "b"], ["s"]),
        helper.make_node("Mul", ["s", "a"], ["p"]),
        helper.make_node("Cast", ["h"], ["hb"], to=T.BFLOAT16),
        helper.make_node("Cast", ["hb"], ["y"], to=T.FLOAT),
    ]
    model = _model(
        nodes,
        [("a", T.INT16, [4096]), ("b", T.INT16, [4096]), ("h", T.FLOAT, [4096])],
        [("p", T.INT16, [4096]), ("y", T.FLOAT, [4096])],
        opset=21,
    )
    rng = np.random.default_rng(5)
    h = rng.integers(0, 2**32, 4096, dtype=np.uint64).astype(np.uint32).view(np.float32)
    feeds = {
        "a": rng.integers(-32768, 32768, 4096).astype(np.int16),
        "b": rng.integers(-32768, 32768, 4096).astype(np.int16),
        "h": np.where(np.isfinite(h), h, np.float32(1.5)).astype(np.float32),  # every binade
    }
    want = ort.InferenceSession(model.SerializeToString()).run(None, feeds)
    got = _session(model, backend).run(None, feeds)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1].view(np.uint32), want[1].view(np.uint32))


@pytest.mark.parametrize("backend", BACKENDS)
def test_bfloat16_operators_round_each_result(backend):
    """bfloat16 inputs through Mul, Add and Sqrt: every result rounded to bfloat16, as onnx's
    reference computes them (float32, then ml_dtypes' conversion per operator)."""
    nodes = [
        helper.make_node("Mul", ["h", "h"], ["m"]),
        helper.make_node("Add", ["m", "h"], ["a"]),
        helper.make_node("Sqrt", ["a"], ["y"]),
    ]
    model = _model(nodes, [("h", T.BFLOAT16, [2048])], [("y", T.BFLOAT16, [2048])])
    h = np.random.default_rng(6).uniform(0, 300, 2048).astype(ml_dtypes.bfloat16)
    got = _session(model, backend).run(None, {"h": h})[0]
    m = (h.astype(np.float32) * h.astype(np.float32)).astype(ml_dtypes.bfloat16)
    a = (m.astype(np.float32) + h.astype(np.float32)).astype(ml_dtypes.bfloat16)
    want = np.sqrt(a.astype(np.float32)).astype(ml_dtypes.bfloat16)
    # Sqrt is within WebNN's accuracy (not correctly rounded): at most one bfloat16 step
    steps = np.abs(got.view(np.uint16).astype(np.int32) - want.view(np.uint16).astype(np.int32))
    assert steps.max() <= 1 and np.mean(steps == 0) > 0.99


def test_operator_reading_float8_codes_is_refused():
    nodes = [helper.make_node("Add", ["x", "x"], ["y"])]
    model = _model(nodes, [("x", T.FLOAT8E4M3FN, [4])], [("y", T.FLOAT8E4M3FN, [4])])
    ctx = webnn.ML().create_context(backend="cpu")
    with pytest.raises(wo.OnnxImportError, match=r"Add.*float8e4m3fn tensor"):
        wo.load(ctx, model)


@pytest.mark.parametrize("elem", [T.BFLOAT16, T.FLOAT8E4M3FN, T.FLOAT8E5M2, 24, T.INT16])
def test_external_data_initializers_of_held_types(tmp_path, elem):
    """Weights of these types in an external-data file are memory-mapped as their type."""
    w = np.random.default_rng(7).uniform(-8, 8, (4, 5)).astype(np.float32)
    w = w.astype(held.numpy_type(elem))
    nodes = [
        helper.make_node("Cast", ["w"], ["f"], to=T.FLOAT),
        helper.make_node("Add", ["f", "x"], ["y"]),
    ]
    model = _model(nodes, [("x", T.FLOAT, [4, 5])], [("y", T.FLOAT, [4, 5])])
    model.graph.initializer.append(onnx.numpy_helper.from_array(w, "w"))
    path = tmp_path / "m.onnx"
    onnx.save(model, path, save_as_external_data=True, location="w.bin", size_threshold=0)
    assert (tmp_path / "w.bin").stat().st_size == w.nbytes
    x = np.ones((4, 5), np.float32)
    got = wo.InferenceSession(str(path)).run(None, {"x": x})[0]
    np.testing.assert_array_equal(got, w.astype(np.float32) + 1)


@pytest.mark.parametrize("backend", BACKENDS)
def test_loop_state_of_int16_wraps_every_step(backend):
    """A Loop whose carried int16 state overflows at each step (body inputs are held as their
    declared type says), against ONNX Runtime."""
    ort = pytest.importorskip("onnxruntime")
    body = helper.make_graph(
        [
            helper.make_node("Identity", ["cond"], ["cond_out"]),
            helper.make_node("Mul", ["s", "s"], ["sq"]),
            helper.make_node("Div", ["sq", "seven"], ["d"]),  # wrapped before dividing
            helper.make_node("Add", ["d", "x"], ["s_out"]),
        ],
        "body",
        [
            helper.make_tensor_value_info("i", T.INT64, []),
            helper.make_tensor_value_info("cond", T.BOOL, []),
            helper.make_tensor_value_info("s", T.INT16, [8]),
        ],
        [
            helper.make_tensor_value_info("cond_out", T.BOOL, []),
            helper.make_tensor_value_info("s_out", T.INT16, [8]),
        ],
    )
    trip = onnx.numpy_helper.from_array(np.array(4, np.int64), "trip")
    nodes = [helper.make_node("Loop", ["trip", "", "x"], ["y"], body=body)]
    model = _model(nodes, [("x", T.INT16, [8])], [("y", T.INT16, [8])], opset=17)
    seven = onnx.numpy_helper.from_array(np.array([7], np.int16), "seven")
    model.graph.initializer.extend([trip, seven])
    x = np.array([3, -7, 181, 255, -32768, 32767, 1000, 0], np.int16)
    want = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x})[0]
    got = _session(model, backend).run(None, {"x": x})[0]
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("src", [T.FLOAT, T.INT32, T.INT64])
@pytest.mark.parametrize("to", [T.INT16, T.UINT16, T.INT4, T.UINT4, 26, 25])
def test_narrowing_casts_discard_higher_bits_as_ort(backend, src, to):
    """Integer -> narrower integer wraps (ONNX: "discard higher bits"), as ONNX Runtime;
    float -> 16-bit integer out of range (undefined in ONNX) as ORT on x86: truncated to int32
    (INT_MIN beyond it), then wrapped; float -> 4-/2-bit as onnx's reference (ml_dtypes:
    truncated, 0 out of range; ORT wraps after rounding). Cast back to float32 in the model
    (ORT returns no 4-/2-bit arrays)."""
    ort = pytest.importorskip("onnxruntime")
    values = [
        -(2**31),
        -(2**20) - 3,
        -70000,
        -32769,
        -9,
        -3,
        -2,
        -1,
        0,
        1,
        2,
        3,
        7,
        8,
        9,
        15,
        16,
        255,
        32767,
        32768,
        65535,
        65536,
        2**24,
        2**31 - 128,
    ]
    np_src = {T.FLOAT: np.float32, T.INT32: np.int32, T.INT64: np.int64}[src]
    x = np.array(values, np_src)
    if src == T.FLOAT:
        x = np.concatenate([x, np.array([3e9, -3e9, 1e20, np.nan, np.inf, -np.inf], np.float32)])
    if src == T.INT64:
        x = np.concatenate([x, np.array([2**40 + 5, -(2**40) - 7, 2**63 - 1], np.int64)])
    nodes = [
        helper.make_node("Cast", ["x"], ["n"], to=to),
        helper.make_node("Cast", ["n"], ["y"], to=T.FLOAT),
    ]
    model = _model(nodes, [("x", src, [len(x)])], [("y", T.FLOAT, [len(x)])])
    model.ir_version = 11
    with np.errstate(all="ignore"):
        if src == T.FLOAT and to not in (T.INT16, T.UINT16):
            x = np.concatenate([x, np.array([1.7, -1.7, 2.5, -8.5, 15.5], np.float32)])
            model.graph.input[0].type.tensor_type.shape.dim[0].dim_value = len(x)
            model.graph.output[0].type.tensor_type.shape.dim[0].dim_value = len(x)
            want = ReferenceEvaluator(model).run(None, {"x": x})[0]
        else:
            want = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x})[0]
    got = _session(model, backend).run(None, {"x": x})[0]
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("domain", ["", "com.microsoft"])
@pytest.mark.parametrize("act", [T.INT16, T.UINT16])
def test_16_bit_qdq_conv_matches_ort(backend, act, domain):
    """A QDQ Conv with 16-bit activations and int8 weights (onnxruntime.quantization's
    QInt16 / QUInt16 activation types, also as its com.microsoft Q/DQ contrib operators) runs
    in float between its quantize / dequantize pairs, as ONNX Runtime's CPU provider runs it:
    within one output step of ORT."""
    ort = pytest.importorskip("onnxruntime")
    rng = np.random.default_rng(8)
    np_act = held.numpy_type(act)
    w = rng.integers(-127, 128, (4, 3, 3, 3)).astype(np.int8)
    inits = [
        onnx.numpy_helper.from_array(np.float32(0.002), "xs"),
        onnx.numpy_helper.from_array(np.array(0 if act == T.INT16 else 32768, np_act), "xz"),
        onnx.numpy_helper.from_array(w, "w"),
        onnx.numpy_helper.from_array(np.float32(0.01), "ws"),
        onnx.numpy_helper.from_array(np.int8(0), "wz"),
        onnx.numpy_helper.from_array(np.float32(0.004), "ys"),
        onnx.numpy_helper.from_array(np.array(0 if act == T.INT16 else 30000, np_act), "yz"),
    ]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
        helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wd"]),
        helper.make_node("Conv", ["xd", "wd"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("QuantizeLinear", ["c", "ys", "yz"], ["yq"]),
        helper.make_node("DequantizeLinear", ["yq", "ys", "yz"], ["y"]),
    ]
    for node in nodes:
        if node.op_type != "Conv":
            node.domain = domain
    model = _model(
        nodes,
        [("x", T.FLOAT, [1, 3, 8, 8])],
        [("y", T.FLOAT, [1, 4, 8, 8]), ("yq", act, [1, 4, 8, 8])],
        opset=21,
    )
    model.graph.initializer.extend(inits)
    if domain:
        model.opset_import.append(helper.make_opsetid(domain, 1))
    x = rng.uniform(-40, 40, (1, 3, 8, 8)).astype(np.float32)
    want = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x})
    got = _session(model, backend).run(None, {"x": x})
    assert got[1].dtype == want[1].dtype
    steps = np.abs(got[1].astype(np.int64) - want[1].astype(np.int64))
    assert steps.max() <= 1 and np.mean(steps == 0) > 0.98
    np.testing.assert_allclose(got[0], want[0], rtol=0, atol=0.004 * 1.0001)


def test_eight_bit_integer_operator_reading_int16_is_refused():
    nodes = [helper.make_node("MatMulInteger", ["a", "b"], ["y"])]
    model = _model(
        nodes, [("a", T.INT16, [2, 3]), ("b", T.INT16, [3, 2])], [("y", T.INT32, [2, 2])]
    )
    ctx = webnn.ML().create_context(backend="cpu")
    with pytest.raises(wo.OnnxImportError, match=r"MatMulInteger.*'a', a int16 tensor"):
        wo.load(ctx, model)


@pytest.mark.parametrize("backend", BACKENDS)
def test_float8_through_an_if_on_a_run_time_condition(backend):
    """An If whose branches give float8 values (Cast of the input, or of its negation), read
    by a Cast after it: the If's output is known to hold codes (never read as numbers)."""

    def branch(name, source):
        nodes = [helper.make_node("Cast", [source], [f"{name}_y"], to=T.FLOAT8E4M3FN)]
        out = [helper.make_tensor_value_info(f"{name}_y", T.FLOAT8E4M3FN, None)]
        return helper.make_graph(nodes, name, [], out)

    nodes = [
        helper.make_node("Neg", ["x"], ["nx"]),
        helper.make_node(
            "If", ["c"], ["q"], then_branch=branch("t", "x"), else_branch=branch("e", "nx")
        ),
        helper.make_node("Cast", ["q"], ["y"], to=T.FLOAT),
    ]
    model = _model(nodes, [("x", T.FLOAT, [16]), ("c", T.BOOL, [])], [("y", T.FLOAT, [16])])
    x = np.random.default_rng(9).standard_normal(16).astype(np.float32) * 50
    session = _session(model, backend)
    for c in (True, False):
        feeds = {"x": x, "c": np.array(c)}
        want = ReferenceEvaluator(model).run(None, feeds)[0]
        _same(session.run(None, feeds)[0], want)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("elem", [T.INT16, T.FLOAT8E4M3FN])
def test_held_values_cross_a_folded_cut(backend, elem):
    """A Reshape whose shape is computed at run time: the session cuts before it (the rest
    folds the shape); the held value crossing the cut keeps its ONNX type (int16 products
    after it still wrap, float8 codes are still decoded)."""
    minus_one = onnx.numpy_helper.from_array(np.array([-1], np.int64), "minus_one")
    seven = onnx.numpy_helper.from_array(np.array(7, np.int16), "seven")
    after = (
        [
            helper.make_node("Mul", ["r", "r"], ["sq"]),
            helper.make_node("Div", ["sq", "seven"], ["y"]),
        ]
        if elem == T.INT16
        else [helper.make_node("Cast", ["r"], ["y"], to=T.FLOAT)]
    )
    nodes = [
        helper.make_node("ReduceMax", ["n"], ["m"], keepdims=1),  # two values: not folded
        helper.make_node("Concat", ["m", "minus_one"], ["shape"], axis=0),
        helper.make_node("Reshape", ["x", "shape"], ["r"]),
        *after,
    ]
    out = T.INT16 if elem == T.INT16 else T.FLOAT
    model = _model(nodes, [("x", elem, [4, 6]), ("n", T.INT64, [2])], [("y", out, None)])
    model.graph.initializer.extend([minus_one, seven])
    rng = np.random.default_rng(11)
    if elem == T.INT16:
        x = rng.integers(-32768, 32768, (4, 6)).astype(np.int16)
    else:
        x = (rng.standard_normal((4, 6)) * 50).astype(ml_dtypes.float8_e4m3fn)
    session = _session(model, backend)
    for n in (3, 8):
        feeds = {"x": x, "n": np.array([n, 1], np.int64)}
        with np.errstate(all="ignore"):
            want = ReferenceEvaluator(model).run(None, feeds)[0]
        got = session.run(None, feeds)[0]
        assert got.shape == (n, 24 // n)
        _same(got, want)


def test_graph_output_declared_float8_but_computed_as_uint8_is_refused():
    """A (malformed) model whose float8 output is made by a Cast to uint8: its bytes are no
    float8 codes, so the importer refuses it instead of returning them reinterpreted."""
    nodes = [helper.make_node("Cast", ["x"], ["y"], to=T.UINT8)]
    model = _model(nodes, [("x", T.FLOAT, [4])], [("y", T.FLOAT8E4M3FN, [4])])
    ctx = webnn.ML().create_context(backend="cpu")
    with pytest.raises(wo.OnnxImportError, match=r"'y' is declared float8e4m3fn.*another type"):
        wo.load(ctx, model)
