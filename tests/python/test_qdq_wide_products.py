"""Integer products past 2^24 on the int8 kernels (graph/passes/qdq_fusion.cc and
integer_matmul.cc): QLinearMatMul, QDQ MatMul and MatMulInteger with full-range int8 weights
and K up to 2048, where max|x - x_zp| * sum|w| passes 2^24 and the float graph's partial sums
round. ONNX defines these products as the exact integer sum; the int8 kernels compute it in
int32 and convert it to float32 once. Checked against numpy's exact integer product (bit-exact:
requantized as ORT does, or float32(sum) for MatMulInteger), against ONNX Runtime (within one
quantization step, the count of differing values reported) and against our own float graph
(every pass but the two integer ones: within one step)."""

import numpy as np
import pytest

ort = pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")
import webnn
import webnn.onnx as wo
from onnx import TensorProto, helper
from ort_compare import graph_model, onnxruntime_outputs
from webnn.onnx.ops import ort_u8s8

OPSETS = {"": 17}
# Every pass but the integer ones: the float graph the rewrite replaces.
FLOAT_PASSES = (
    "float16_promotion,canonicalization,constant_folding,batch_norm_folding,layout_assignment,"
    "shared_weight_products,epilogue_fusion,matmul_transposes"
)


def _skip_on_a_saturating_machine():
    """uint8 activations (and QDQ int8 ones, shifted to uint8) times int8 weights: on an x86 CPU
    without VNNI, ONNX Runtime's u8s8 kernels saturate pairs and the importer models that
    (ort_u8s8.py, tested by test_integer_matmul_u8s8.py), so the graph is not the exact
    integer product these tests check (found on an AVX2 machine, 2026-12-06)."""
    if ort_u8s8.saturating_machine():
        pytest.skip("u8s8 products saturate on this CPU (AVX2 without VNNI), as ORT's do")


def _ours(model, feeds, monkeypatch, passes="all", rewritten=None):
    """Our cpu outputs; `rewritten`: the pass that must have taken the one product."""
    monkeypatch.setenv("WEBNN_PASSES", passes)
    context = webnn.ML().create_context(accelerated=False, backend="cpu")
    graph = wo.load(context, model)
    out = context.compute(graph, feeds)
    monkeypatch.delenv("WEBNN_PASSES")
    if rewritten:
        assert graph.compile_stats["passes"].get(rewritten, 0) == 1, graph.compile_stats
    return out


def _multiplier(sx, sw, sy):
    """x_scale * w_scale / y_scale in float32 steps, as ops/quantization.py and ORT form it."""
    return (
        (np.float32(sx) * np.asarray(sw, np.float32)).astype(np.float32) / np.float32(sy)
    ).astype(np.float32)


def _requantized(acc, m, zp, dtype):
    """ORT's requantization of the exact sums: float32(acc) * m, rounded half to even, + zp."""
    y = np.rint(acc.astype(np.float32) * m) + zp
    info = np.iinfo(dtype)
    return np.clip(y, info.min, info.max).astype(dtype)


def _wide(x, zx, w):
    """The largest max|x - x_zp| * sum|w| over the columns (past 2^24 is the point here)."""
    info = np.iinfo(x.dtype)
    return max(abs(info.min - zx), abs(info.max - zx)) * np.abs(w.astype(np.int64)).sum(0).max()


def _step_report(got, want, what):
    diff = np.abs(got.astype(np.int64) - want.astype(np.int64))
    assert diff.max(initial=0) <= 1, (what, int(diff.max()))
    return int(np.count_nonzero(diff))


CASES = [  # x type, K, N, per-column weight scale
    (np.uint8, 384, 100, False),
    (np.uint8, 1000, 64, True),
    (np.uint8, 2048, 100, True),
    (np.int8, 1000, 48, False),
    (np.int8, 2048, 64, True),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_qlinear_matmul_wide_is_the_exact_product(case, monkeypatch):
    xt, k, n, per_column = CASES[case]
    if xt == np.uint8:
        _skip_on_a_saturating_machine()
    rng = np.random.default_rng(40 + case)
    info = np.iinfo(xt)
    x = rng.integers(info.min, info.max + 1, (2, 40, k)).astype(xt)
    zx = int(info.min) + (131 if k < 1000 else 3)  # near the bottom: max|x - zx| 252
    w = rng.integers(-128, 128, (k, n)).astype(np.int8)
    sx, sw = 0.02, (rng.uniform(0.5, 1.5, n) if per_column else np.array(1.0)) * 0.004
    acc = (x.astype(np.int64) - zx) @ w.astype(np.int64)
    # The output scale spreads the requantized values over the type's range.
    sy = float(sx * 0.004 * 3.0 * acc.std() / 120.0)
    zy = 128 if xt == np.uint8 else 0
    inits = {"sx": np.array(sx, np.float32), "zx": np.array(zx, xt), "w": w,
             "sw": np.asarray(sw, np.float32), "zw": np.zeros(np.shape(sw), np.int8),
             "sy": np.array(sy, np.float32), "zy": np.array(zy, xt)}  # fmt: skip
    node = helper.make_node("QLinearMatMul", ["x", "sx", "zx", "w", "sw", "zw", "sy", "zy"], ["y"])
    elem = TensorProto.UINT8 if xt == np.uint8 else TensorProto.INT8
    model = graph_model([node], {"x": x}, {"y": elem}, inits, OPSETS)
    want = _requantized(acc, _multiplier(sx, sw, sy), zy, xt)
    got = _ours(model, {"x": x}, monkeypatch, rewritten="qdq_fusion")["y"]
    np.testing.assert_array_equal(got, want)
    off_ort = _step_report(got, onnxruntime_outputs(model, {"x": x})["y"], "ORT")
    float_graph = _ours(model, {"x": x}, monkeypatch, FLOAT_PASSES)["y"]
    off_float = _step_report(got, float_graph, "float graph")
    print(f"K={k}: max|dx|*sum|w| = {_wide(x, zx, w):.3g}; of {got.size} values "
          f"{off_ort} differ from ORT by one step, {off_float} from our float graph")  # fmt: skip
    assert off_ort == 0  # ORT's QLinearMatMul converts the same exact int32 sums once


@pytest.mark.parametrize("k", [512, 2048])
def test_qdq_matmul_wide_matches_onnxruntime(k, monkeypatch):
    """DQ -> MatMul -> Q (fused to QLinearMatMul by webnn/onnx/qdq.py, as ORT fuses it)."""
    _skip_on_a_saturating_machine()
    rng = np.random.default_rng(k)
    n = 80
    xf = (rng.standard_normal((3, 20, k)) + 2.5).astype(np.float32)
    w = rng.integers(-128, 128, (k, n)).astype(np.int8)
    sw = (rng.uniform(0.5, 1.5, n) * 0.004).astype(np.float32)
    sx, zx = np.float32(4.0 / 255), 10  # max|x - zx| 245
    sy = np.float32(sx * 0.004 * np.sqrt(k) * 64 * 74 / 40)  # the outputs' std about 40 steps
    inits = {"sx": np.array(sx), "zx": np.array(zx, np.uint8), "w": w, "sw": sw,
             "zw": np.zeros(n, np.int8), "sy": np.array(sy), "zy": np.array(128, np.uint8)}  # fmt: skip
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "sx", "zx"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "sx", "zx"], ["xd"]),
        helper.make_node("DequantizeLinear", ["w", "sw", "zw"], ["wd"], axis=1),
        helper.make_node("MatMul", ["xd", "wd"], ["p"]),
        helper.make_node("QuantizeLinear", ["p", "sy", "zy"], ["y"]),
    ]
    model = graph_model(nodes, {"x": xf}, {"y": TensorProto.UINT8}, inits, OPSETS)
    got = _ours(model, {"x": xf}, monkeypatch, rewritten="qdq_fusion")["y"]
    xq = np.clip(np.rint(xf / sx) + zx, 0, 255).astype(np.uint8)
    acc = (xq.astype(np.int64) - zx) @ w.astype(np.int64)
    np.testing.assert_array_equal(got, _requantized(acc, _multiplier(sx, sw, sy), 128, np.uint8))
    off_ort = _step_report(got, onnxruntime_outputs(model, {"x": xf})["y"], "ORT")
    off_float = _step_report(got, _ours(model, {"x": xf}, monkeypatch, FLOAT_PASSES)["y"], "float")
    print(f"K={k}: max|dx|*sum|w| = {_wide(xq, zx, w):.3g}; of {got.size} values {off_ort} "
          f"differ from ORT by one step, {off_float} from our float graph")  # fmt: skip
    assert off_ort == 0


@pytest.mark.parametrize("xt,k", [(np.uint8, 384), (np.uint8, 2048), (np.int8, 2048)])
def test_matmul_integer_wide_is_float32_of_the_exact_sum(xt, k, monkeypatch):
    """MatMulInteger (int32 output) past 2^24: float32(exact sum) converted to int32, the
    correctly rounded value (ORT gives the exact int32; ours is within half a float32 ulp of
    it); within 2^24, the exact sum."""
    if xt == np.uint8:
        _skip_on_a_saturating_machine()
    rng = np.random.default_rng(k + (xt == np.int8))
    info = np.iinfo(xt)
    x = rng.integers(info.min, info.max + 1, (2, 24, k)).astype(xt)
    zx = int(info.min) + 5
    w = rng.integers(-128, 128, (k, 72)).astype(np.int8)
    inits = {"w": w, "zx": np.array(zx, xt), "zw": np.array(0, np.int8)}
    node = helper.make_node("MatMulInteger", ["x", "w", "zx", "zw"], ["y"])
    model = graph_model([node], {"x": x}, {"y": TensorProto.INT32}, inits, {"": 17})
    exact = (x.astype(np.int64) - zx) @ w.astype(np.int64)
    got = _ours(model, {"x": x}, monkeypatch, rewritten="integer_matmul")["y"]
    np.testing.assert_array_equal(got, exact.astype(np.float32).astype(np.int64))
    np.testing.assert_array_equal(onnxruntime_outputs(model, {"x": x})["y"], exact)
    if _wide(x, zx, w) < 2**24:
        np.testing.assert_array_equal(got, exact)
    # The float graph's sums round in its own order: no closer to the exact sum.
    float_graph = _ours(model, {"x": x}, monkeypatch, FLOAT_PASSES)["y"].astype(np.int64)
    assert np.abs(got - exact).max() <= np.abs(float_graph - exact).max()
