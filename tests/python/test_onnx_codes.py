"""webnn.onnx.codes: float8 / float4 / e8m0 values held as uint8 codes (issue 6).

The decode tables and the threshold tables of the encoding graph are checked against onnx's
reference Cast (onnx.reference.ReferenceEvaluator) for every code, every float16 value, every
threshold and its float32 neighbours, +-0, +-inf, NaN and a dense random float32 sample; the
WebNN graph that encode()/decode() build is run on the cpu backend over the same values."""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

import webnn
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator
from webnn.onnx import codes as C

_MODES = [(e, s, "up") for e in C.FLOAT_CODED for s in (True, False) if e != C.FLOAT8E8M0] + [
    (C.FLOAT8E8M0, s, r) for s in (True, False) for r in ("up", "down", "nearest")
]


def _reference_cast(x, src, dst, **attrs):
    node = helper.make_node("Cast", ["x"], ["y"], to=dst, **attrs)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", src, [None])],
        [helper.make_tensor_value_info("y", dst, [None])],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)])
    return ReferenceEvaluator(model).run(None, {"x": x})[0]


def _samples(elem, saturate, round_mode):
    t = C.encode_tables(elem, saturate, round_mode)[0]
    near = np.concatenate([t, np.nextafter(t, np.float32(0)), np.nextafter(t, np.float32(np.inf))])
    f16 = np.arange(65536, dtype=np.uint16).view(np.float16).astype(np.float32)
    dense = np.random.default_rng(0).integers(0, 2**32, 200_000, dtype=np.uint64)
    dense = dense.astype(np.uint32).view(np.float32)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan], np.float32)
    x = np.concatenate([near, -near, f16, dense, special])
    # a NaN's sign bit cannot be seen by WebNN operators: only the positive quiet NaN
    return np.concatenate([x[~np.isnan(x)], special[-1:]])


@pytest.mark.parametrize("elem", C.FLOAT_CODED)
def test_decode_table_is_onnx_reference(elem):
    count = 16 if elem == C.FLOAT4E2M1 else 256
    codes = np.arange(count, dtype=np.uint8).view(C.CODED[elem][0])
    want = _reference_cast(codes, elem, TensorProto.FLOAT)
    got = C.decode_table(elem)
    np.testing.assert_array_equal(got.view(np.uint32)[~np.isnan(got)],
                                  want.view(np.uint32)[~np.isnan(want)])  # fmt: skip
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))


def _reference_codes(x, elem, saturate, round_mode):
    attrs = {"saturate": int(saturate)}
    if elem == C.FLOAT8E8M0:
        attrs["round_mode"] = round_mode
    with np.errstate(all="ignore"):
        return _reference_cast(x, TensorProto.FLOAT, elem, **attrs).view(np.uint8)


@pytest.mark.parametrize("elem,saturate,round_mode", _MODES)
def test_encode_tables_match_onnx_reference(elem, saturate, round_mode):
    x = _samples(elem, saturate, round_mode)
    t, pos, neg, nan = C.encode_tables(elem, saturate, round_mode)
    index = np.searchsorted(t, np.abs(x), side="right")
    got = np.where(np.signbit(x), neg[index], pos[index])
    got = np.where(np.isnan(x), nan, got).astype(np.uint8)
    np.testing.assert_array_equal(got, _reference_codes(x, elem, saturate, round_mode))


class _Node:
    """What encode()/decode() use of a converter's NodeContext."""

    def __init__(self, builder):
        self.b = builder
        self.importer = self

    def operand(self, array):
        return self.b.constant(np.ascontiguousarray(array))

    def const(self, value, dtype):
        return self.b.constant(np.asarray(value, dtype=dtype).reshape([]))


@pytest.mark.parametrize("elem,saturate,round_mode", _MODES)
def test_encode_decode_graph_match_onnx_reference(elem, saturate, round_mode):
    x = _samples(elem, saturate, round_mode)
    context = webnn.ML().create_context(backend="cpu")
    b = context.create_graph_builder()
    n = _Node(b)
    xin = b.input("x", [len(x)], "float32")
    codes = C.encode(n, xin, elem, saturate, round_mode)
    cin = b.input("c", [256 if elem != C.FLOAT4E2M1 else 16], "uint8")
    values = C.decode(n, cin, elem)
    graph = b.build({"codes": codes, "values": values})
    all_codes = np.arange(256 if elem != C.FLOAT4E2M1 else 16, dtype=np.uint8)
    got = context.compute(graph, {"x": x, "c": all_codes})
    np.testing.assert_array_equal(got["codes"], _reference_codes(x, elem, saturate, round_mode))
    want = _reference_cast(all_codes.view(C.CODED[elem][0]), elem, TensorProto.FLOAT)
    np.testing.assert_array_equal(got["values"], want)
