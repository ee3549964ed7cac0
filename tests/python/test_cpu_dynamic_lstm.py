"""The cpu backend's dynamically quantized LSTM (graph/passes/dynamic_quant_lstm.cc, kernel
cpu/dynamic_lstm.cc): the importer's unrolled com.microsoft DynamicQuantizeLSTM steps run as
one kernel per direction. Every value up to the gates is an exact integer or the graph's own
float32 operation in its order, and the gates use the element-wise kernels' sigmoid / tanh, so
the fused graph must give the same bits as the unfused one (WEBNN_PASSES without
dynamic_quant_lstm) on the cpu backend, with any thread count; against the reference backend
(double sigmoid / tanh, which can flip a rounding of the per-step quantization of h) and ONNX
Runtime the outputs stay within the importer's documented bound. Random cases cover the
directions, batch sizes that fill and split the integer tiles, hidden sizes off the 16-unit
blocks, per-tensor and per-column scales, weight zero points, biases present or absent,
initial states as inputs or absent (the first step then folds to constants and stays
unfused), saturating (full-range) weights, and sequences that are not fused (too few steps).
Reruns force the importer's u8s8 arithmetic both ways (WEBNN_ONNX_U8S8), so the kernel's
pair-saturating route (AVX2, generic) and its refusal where pairs can saturate without a
correction run on any machine.
"""

import os

import numpy as np
import pytest
import rerun

ort = pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")
import webnn
import webnn.onnx as wo
from onnx import TensorProto, helper, numpy_helper

WITHOUT = (
    "canonicalization,qdq_fusion,constant_folding,integer_matmul,qdq_tables,"
    "batch_norm_folding,layout_assignment,fake_quantize,epilogue_fusion"
)


def _model(
    rng, direction, batch, steps, size, hidden, per_channel, full_range, bias, states, zero_points
):
    dirs = 2 if direction == "bidirectional" else 1
    lo, hi = (-128, 128) if full_range else (-63, 64)
    w = rng.integers(lo, hi, (dirs, size, 4 * hidden)).astype(np.int8)
    r = rng.integers(lo, hi, (dirs, hidden, 4 * hidden)).astype(np.int8)
    scale_shape = (dirs, 4 * hidden) if per_channel else (dirs,)
    zp = lambda: (
        rng.integers(-3, 4, scale_shape) if zero_points else np.zeros(scale_shape)
    ).astype(np.int8)
    scale = 0.5 / (hidden * 40) if full_range else 1.0 / (hidden * 30)
    inits = [
        numpy_helper.from_array(w, "W"),
        numpy_helper.from_array(r, "R"),
        numpy_helper.from_array(rng.uniform(0.5, 1.5, scale_shape).astype(np.float32) * 0.05, "Ws"),
        numpy_helper.from_array(zp(), "Wz"),
        numpy_helper.from_array(
            rng.uniform(0.5, 1.5, scale_shape).astype(np.float32) * scale * 8, "Rs"
        ),
        numpy_helper.from_array(zp(), "Rz"),
    ]
    if bias:
        inits.append(
            numpy_helper.from_array(
                rng.standard_normal((dirs, 8 * hidden)).astype(np.float32) * 0.5, "B"
            )
        )
    f32 = TensorProto.FLOAT
    inputs = [helper.make_tensor_value_info("X", f32, [steps, batch, size])]
    if states:
        inputs += [
            helper.make_tensor_value_info("h0", f32, [dirs, batch, hidden]),
            helper.make_tensor_value_info("c0", f32, [dirs, batch, hidden]),
        ]
    node = helper.make_node(
        "DynamicQuantizeLSTM",
        [
            "X",
            "W",
            "R",
            "B" if bias else "",
            "",
            "h0" if states else "",
            "c0" if states else "",
            "",
            "Ws",
            "Wz",
            "Rs",
            "Rz",
        ],
        ["Y", "Yh", "Yc"],
        domain="com.microsoft",
        hidden_size=hidden,
        direction=direction,
    )
    graph = helper.make_graph(
        [node],
        "dq_lstm",
        inputs,
        [helper.make_tensor_value_info(n, f32, None) for n in ("Y", "Yh", "Yc")],
        inits,
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
    )
    feeds = {"X": rng.standard_normal((steps, batch, size)).astype(np.float32)}
    if states:
        feeds["h0"] = 0.5 * rng.standard_normal((dirs, batch, hidden)).astype(np.float32)
        feeds["c0"] = rng.standard_normal((dirs, batch, hidden)).astype(np.float32)
    return model.SerializeToString(), feeds


def _ours(data, feeds, backend="cpu", passes="all"):
    old = {k: os.environ.get(k) for k in ("WEBNN_PASSES",)}
    os.environ["WEBNN_PASSES"] = passes
    try:
        context = webnn.ML().create_context(accelerated=False, backend=backend)
        graph = wo.load(context, data)
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return context.compute(graph, feeds), graph.compile_stats


def _ort(data, feeds):
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in session.get_outputs()], session.run(None, feeds)))


def _random_case(seed):
    rng = np.random.default_rng(seed)
    direction = ["forward", "reverse", "bidirectional"][seed % 3]
    batch = int(rng.choice([1, 2, 3, 4, 5, 9]))
    hidden = int(rng.choice([5, 16, 20, 33, 64]))
    steps = int(rng.integers(3, 10))
    size = int(rng.integers(2, 40))
    args = {
        "direction": direction,
        "batch": batch,
        "steps": steps,
        "size": size,
        "hidden": hidden,
        "per_channel": bool(rng.integers(2)),
        "full_range": bool(seed % 2),
        "bias": bool(seed % 5),
        "states": seed % 4 != 1,
        "zero_points": seed % 7 == 3,
    }
    return rng, args


@pytest.mark.parametrize("seed", range(16))
def test_fused_equals_unfused_and_stays_near_reference(seed):
    rng, args = _random_case(seed)
    data, feeds = _model(rng, **args)
    fused, stats = _ours(data, feeds)
    dirs = 2 if args["direction"] == "bidirectional" else 1
    assert stats["passes"].get("dynamic_quant_lstm", 0) == dirs, (args, stats["passes"])
    # A bidirectional layer's two directions run as one node (one thread each).
    assert stats["ops_after"].get("lstm", 0) == 1, stats["ops_after"]
    unfused, stats0 = _ours(data, feeds, passes=WITHOUT)
    assert stats0["passes"].get("dynamic_quant_lstm", 0) == 0
    assert stats["nodes_after"] < stats0["nodes_after"]
    for name in ("Y", "Yh", "Yc"):
        assert fused[name].shape == unfused[name].shape
        np.testing.assert_array_equal(fused[name], unfused[name], err_msg=f"{name} {args}")
    # The reference backend (double sigmoid / tanh) and ONNX Runtime: the importer's bound
    # (tests/python/test_onnx_regressions.py test_dynamic_quantize_lstm).
    # ONNX Runtime requires zero weight zero points.
    wants = [_ours(data, feeds, backend="reference")[0]]
    # With WEBNN_ONNX_U8S8 forced (the rerun below) the importer follows the other machine
    # kind's arithmetic, which this machine's ORT does not.
    if not args["zero_points"] and not os.environ.get("WEBNN_ONNX_U8S8"):
        wants.append(_ort(data, feeds))
    for want in wants:
        for name in ("Y", "Yh", "Yc"):
            err = float(np.max(np.abs(fused[name] - want[name])))
            assert err <= 1e-3 * max(1.0, float(np.max(np.abs(want[name])))), (name, err, args)


def test_two_steps_fuse_and_one_step_does_not():
    rng = np.random.default_rng(5)
    base = {
        "direction": "forward",
        "batch": 2,
        "size": 4,
        "hidden": 8,
        "per_channel": False,
        "full_range": True,
        "bias": True,
        "states": True,
        "zero_points": False,
    }
    data, feeds = _model(rng, steps=2, **base)
    fused, stats = _ours(data, feeds)
    assert stats["passes"].get("dynamic_quant_lstm", 0) == 1
    unfused, _ = _ours(data, feeds, passes=WITHOUT)
    for name in fused:
        np.testing.assert_array_equal(fused[name], unfused[name])
    data, feeds = _model(rng, steps=1, **base)
    _, stats = _ours(data, feeds)
    assert stats["passes"].get("dynamic_quant_lstm", 0) == 0


def test_zero_state_and_saturating_values():
    # h all zero at a step (empty range: scale 1), and large inputs that saturate the gates.
    rng = np.random.default_rng(9)
    data, feeds = _model(rng, "bidirectional", 3, 6, 8, 24, True, True, True, True, False)
    feeds["h0"][:] = 0.0
    feeds["X"][2] *= 1e3
    fused, _ = _ours(data, feeds)
    unfused, _ = _ours(data, feeds, passes=WITHOUT)
    for name in fused:
        np.testing.assert_array_equal(fused[name], unfused[name])


@pytest.mark.skipif(rerun.nested(), reason="nested")
@rerun.each_cpu_setting
def test_other_isas_and_thread_counts(env):
    rerun.assert_file_passes(__file__, env)


# The importer's u8s8 arithmetic forced either way: "saturate" adds ORT's correction (on a
# VNNI machine too), which the kernel's pair-saturating tiles (AVX2, generic) then compute in
# place of the slots; "exact" leaves full-range weights with pairs that can saturate and no
# slots, which those tiles must decline (the int16 route or VNNI runs them).
@pytest.mark.skipif(rerun.nested(), reason="nested")
@pytest.mark.parametrize(
    "env",
    [
        {"WEBNN_ONNX_U8S8": "saturate", "WEBNN_CPU_ISA": "avx2"},
        {"WEBNN_ONNX_U8S8": "saturate", "WEBNN_CPU_ISA": "generic", "WEBNN_NUM_THREADS": "3"},
        {"WEBNN_ONNX_U8S8": "exact", "WEBNN_CPU_ISA": "avx2"},
    ],
    ids=lambda e: ",".join(f"{k}={v}" for k, v in e.items()),
)
def test_both_u8s8_arithmetics(env):
    rerun.assert_file_passes(__file__, env)


@pytest.mark.parametrize("row", [0, 2])
def test_nan_in_one_batch_row(row):
    # A NaN reaches h of one batch row: the graph's zero point of h is then NaN and every later
    # value NaN; the fused kernel must agree wherever the NaN starts.
    rng = np.random.default_rng(4)
    data, feeds = _model(rng, "forward", 3, 5, 6, 16, False, True, True, True, False)
    feeds["X"][1, row, 2] = np.nan
    fused, _ = _ours(data, feeds)
    unfused, _ = _ours(data, feeds, passes=WITHOUT)
    for name in fused:
        np.testing.assert_array_equal(fused[name], unfused[name])
