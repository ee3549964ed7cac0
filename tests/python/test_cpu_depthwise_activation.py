"""A relu or hardSwish right after an NHWC depthwise conv2d runs in the depthwise kernel's
stores (Kernel::take_activation), with the stand-alone kernel's function: the fused graph
equals the unfused cpu graph bit for bit, and the reference within float32 tolerance. The
cases reach every store path: border pixels, register blocks of 8 and 4 pixels, single
pixels, strides 1 and 2, dilations, filter widths 3/5/7/other, partial channel vectors, and
an epilogue step after the activation. Rerun with each instruction set and thread count."""

import os

import numpy as np
import pytest
import rerun
import webnn

UNFUSED = "constant_folding,batch_norm_folding,layout_assignment"

CASES = [
    # channels, h, w, k, stride, dilation
    (48, 20, 37, 3, 1, 1),
    (16, 19, 40, 3, 2, 1),
    (24, 9, 13, 5, 1, 1),
    (5, 11, 26, 5, 2, 1),
    (33, 8, 21, 7, 1, 1),
    (70, 7, 18, 3, 1, 2),
    (17, 10, 15, 4, 1, 1),
    (131, 6, 9, 3, 2, 1),
]


def _graph(ctx, case, act, tail):
    c, h, w, k, stride, dil = case
    rng = np.random.default_rng(c * 1000 + k)
    b = ctx.create_graph_builder()
    x = b.input("x", [2, h, w, c], "float32")
    filt = b.constant(rng.uniform(-0.5, 0.5, (1, k, k, c)).astype(np.float32))
    pad = (k - 1) * dil // 2
    y = b.conv2d(
        x, filt, bias=b.constant(rng.uniform(-1, 1, c).astype(np.float32)),
        padding=[pad] * 4, strides=[stride] * 2, dilations=[dil] * 2, groups=c,
        input_layout="nhwc", filter_layout="ihwo",
    )  # fmt: skip
    y = b.relu(y) if act == "relu" else b.hard_swish(y)
    if tail:
        y = b.mul(y, b.constant(rng.uniform(0.5, 2, c).astype(np.float32)))
    return b.build({"y": y})


def _run(backend, passes, case, act, tail, x):
    old = os.environ.get("WEBNN_PASSES")
    os.environ["WEBNN_PASSES"] = passes
    try:
        ctx = webnn.ML().create_context(accelerated=False, backend=backend)
        graph = _graph(ctx, case, act, tail)
    finally:
        if old is None:
            os.environ.pop("WEBNN_PASSES", None)
        else:
            os.environ["WEBNN_PASSES"] = old
    return ctx.compute(graph, {"x": x})["y"], graph.compile_stats


@pytest.mark.parametrize("tail", [False, True], ids=["alone", "then_mul"])
@pytest.mark.parametrize("act", ["relu", "hard_swish"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: "c{}_{}x{}_k{}_s{}_d{}".format(*c))
def test_depthwise_activation_fused_equals_unfused(case, act, tail):
    c, h, w = case[:3]
    x = np.random.default_rng(h * w).uniform(-4, 4, (2, h, w, c)).astype(np.float32)
    fused, stats = _run("cpu", "all", case, act, tail, x)
    assert stats["fused_steps"] >= 1
    unfused, _ = _run("cpu", UNFUSED, case, act, tail, x)
    np.testing.assert_array_equal(fused, unfused)
    want, _ = _run("reference", "all", case, act, tail, x)
    np.testing.assert_allclose(fused, want, rtol=1e-5, atol=1e-5 * (1 + np.abs(want).max()))


@pytest.mark.skipif(rerun.nested(), reason="already in a subprocess")
@rerun.each_isa_and_threads
def test_every_cpu_setting(env):
    rerun.assert_file_passes(__file__, env)
