"""A depthwise conv2d read only by a 1x1 conv2d runs inside it (graph/passes/depthwise_pointwise.cc:
the depthwise rows are computed band by band into a cache-resident buffer and multiplied at
once). The fused graph must equal the cpu graph without the pass bit for bit, and the reference
backend within float32 tolerance. Random cases reach: depthwise strides, dilations, paddings and
filter widths, channel counts that fill partial vectors, depthwise steps (none, relu, hardSwish,
clamp, several), 1x1 output widths that pick either GEMM tile, and the 1x1 conv's own epilogue
(activation, residual add, bias or none). Graphs the pass must leave alone (the depthwise value
read twice, a graph output, a non-finite filter, a strided 1x1) are checked too. Rerun with each
instruction set and thread count."""

import os

import numpy as np
import pytest
import rerun
import webnn

WITHOUT = "constant_folding,batch_norm_folding,layout_assignment,epilogue_fusion,matmul_transposes"


def _random_case(seed):
    rng = np.random.default_rng(seed)
    c = int(rng.choice([3, 8, 16, 24, 33, 48, 64]))
    k = int(rng.choice([3, 3, 5, 1, 4]))
    stride = int(rng.choice([1, 1, 2]))
    dil = int(rng.choice([1, 1, 2])) if k > 1 else 1
    h, w = int(rng.integers(1, 24)), int(rng.integers(1, 40))
    pads = [int(rng.integers(0, (k - 1) * dil + 1)) for _ in range(4)]
    return {
        "seed": seed,
        "batch": int(rng.integers(1, 3)),
        "c": c,
        "h": max(h, (k - 1) * dil + 1 - pads[0] - pads[1]),
        "w": max(w, (k - 1) * dil + 1 - pads[2] - pads[3]),
        "k": k,
        "stride": stride,
        "dil": dil,
        "pads": pads,
        "dw_bias": bool(rng.integers(0, 2)),
        "dw_steps": [
            ["none"],
            ["relu"],
            ["hard_swish"],
            ["clamp"],
            ["hard_swish", "clamp"],
            ["clamp", "sigmoid"],
        ][int(rng.integers(0, 6))],
        "n": int(rng.choice([5, 12, 16, 24, 42, 48, 100])),
        "pw_bias": bool(rng.integers(0, 2)),
        "pw_tail": ["none", "relu", "hard_swish", "add", "add_relu"][int(rng.integers(0, 5))],
        "filter_layout": ["ohwi", "ihwo", "oihw", "hwio"][int(rng.integers(0, 4))],
    }


CASES = [_random_case(s) for s in range(24)]


def _filter(b, rng, o, i, k, layout):
    w = rng.uniform(-0.5, 0.5, (o, k, k, i)).astype(np.float32)  # ohwi
    perm = {"ohwi": (0, 1, 2, 3), "ihwo": (3, 1, 2, 0), "oihw": (0, 3, 1, 2), "hwio": (1, 2, 3, 0)}
    return b.constant(np.ascontiguousarray(w.transpose(perm[layout])))


def _build(ctx, case, variant="fused"):
    rng = np.random.default_rng(case["seed"] + 1000)
    c, n, k = case["c"], case["n"], case["k"]
    b = ctx.create_graph_builder()
    x = b.input("x", [case["batch"], case["h"], case["w"], c], "float32")
    dw_layout = case["filter_layout"]
    dw_bias = b.constant(rng.uniform(-1, 1, c).astype(np.float32)) if case["dw_bias"] else None
    dw_w = rng.uniform(-0.5, 0.5, (c, k, k, 1)).astype(np.float32)
    if variant == "nonfinite":
        dw_w[0, 0, 0, 0] = np.inf
    perm = {"ohwi": (0, 1, 2, 3), "ihwo": (3, 1, 2, 0), "oihw": (0, 3, 1, 2), "hwio": (1, 2, 3, 0)}
    d = b.conv2d(
        x, b.constant(np.ascontiguousarray(dw_w.transpose(perm[dw_layout]))), bias=dw_bias,
        padding=case["pads"], strides=[case["stride"]] * 2, dilations=[case["dil"]] * 2,
        groups=c, input_layout="nhwc", filter_layout=dw_layout,
    )  # fmt: skip
    for step in case["dw_steps"]:
        if step == "relu":
            d = b.relu(d)
        elif step == "hard_swish":
            d = b.hard_swish(d)
        elif step == "clamp":
            d = b.clamp(d, min_value=0.0, max_value=6.0)
        elif step == "sigmoid":
            d = b.sigmoid(d)
    pw_bias = b.constant(rng.uniform(-1, 1, n).astype(np.float32)) if case["pw_bias"] else None
    y = b.conv2d(
        d, _filter(b, rng, n, c, 1, "ohwi"), bias=pw_bias, input_layout="nhwc",
        filter_layout="ohwi", strides=[2, 2] if variant == "strided" else None,
    )  # fmt: skip
    tail = case["pw_tail"]
    if tail == "relu":
        y = b.relu(y)
    elif tail == "hard_swish":
        y = b.hard_swish(y)
    elif tail in ("add", "add_relu"):
        # A residual input of the output's shape (the 1x1 conv's store adds it per block).
        y = b.add(y, b.input("r", _out_shape(case), "float32"))
        if tail == "add_relu":
            y = b.relu(y)
    outs = {"y": y}
    if variant == "twice":
        outs["d"] = b.mul(d, d)
    elif variant == "output":
        outs["d"] = d
    return b.build(outs)


def _run(backend, passes, case, variant, feeds):
    old = os.environ.get("WEBNN_PASSES")
    os.environ["WEBNN_PASSES"] = passes
    try:
        ctx = webnn.ML().create_context(accelerated=False, backend=backend)
        graph = _build(ctx, case, variant)
    finally:
        if old is None:
            os.environ.pop("WEBNN_PASSES", None)
        else:
            os.environ["WEBNN_PASSES"] = old
    return ctx.compute(graph, feeds), graph.compile_stats


def _out_shape(case):
    k, dil, s, p = case["k"], case["dil"], case["stride"], case["pads"]
    oh = (case["h"] + p[0] + p[1] - dil * (k - 1) - 1) // s + 1
    ow = (case["w"] + p[2] + p[3] - dil * (k - 1) - 1) // s + 1
    return [case["batch"], oh, ow, case["n"]]


def _feeds(case):
    rng = np.random.default_rng(case["seed"])
    x = rng.uniform(-4, 4, (case["batch"], case["h"], case["w"], case["c"])).astype(np.float32)
    feeds = {"x": x}
    if case["pw_tail"] in ("add", "add_relu"):
        feeds["r"] = rng.uniform(-1, 1, _out_shape(case)).astype(np.float32)
    return feeds


def _check(case, variant, expect_fused):
    feeds = _feeds(case)
    fused, stats = _run("cpu", "all", case, variant, feeds)
    assert (stats["passes"].get("depthwise_pointwise", 0) >= 1) == expect_fused, stats
    unfused, _ = _run("cpu", WITHOUT, case, variant, feeds)
    want, _ = _run("reference", "all", case, variant, feeds)
    for name in want:
        np.testing.assert_array_equal(fused[name], unfused[name])
        scale = 1 + np.abs(want[name][np.isfinite(want[name])]).max(initial=0)
        np.testing.assert_allclose(fused[name], want[name], rtol=1e-5, atol=2e-5 * scale)


@pytest.mark.parametrize(
    "case", CASES, ids=lambda c: "seed{seed}_c{c}_k{k}_s{stride}_n{n}".format(**c)
)
def test_fused_equals_unfused_and_reference(case):
    _check(case, "fused", True)


@pytest.mark.parametrize("variant", ["twice", "output", "nonfinite", "strided"])
def test_left_alone(variant):
    case = dict(CASES[0], pads=[1, 1, 1, 1], k=3, dil=1, stride=1, h=9, w=11, pw_tail="none")
    _check(case, variant, False)


def test_large_map_bands():
    # A map wider than one band (rows of 192 x 48 floats): band edges inside the image.
    case = dict(CASES[0], batch=2, c=48, h=40, w=192, k=3, stride=1, dil=1, pads=[1, 1, 1, 1],
                dw_steps=["hard_swish"], n=24, pw_tail="add", seed=3)  # fmt: skip
    _check(case, "fused", True)


@pytest.mark.skipif(rerun.nested(), reason="already in a subprocess")
@rerun.each_isa_and_threads
def test_every_cpu_setting(env):
    rerun.assert_file_passes(__file__, env)
