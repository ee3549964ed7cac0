"""A whole inverted-residual block (1x1 expansion -> depthwise -> 1x1 projection) runs as one
cpu node (graph/passes/depthwise_pointwise.cc, then expansion_fusion.cc: Node::expansion_input
of the depthwise stage): the expansion rows are computed band by band into a per-thread window
with the depthwise's halo rows, the depthwise rows from it, and the projection right after.
The fused graph must equal bit for bit the cpu graph without either pass and the graph with
depthwise_pointwise only, and the reference backend within float32 tolerance. Random blocks
reach: depthwise strides, dilations, paddings and filter sizes, channel counts that fill partial
vectors, expansion and depthwise steps (none, relu, hardSwish, clamp, several), projection
widths on both GEMM tiles and its epilogue (activation, residual add of the block input or of
another tensor), batch 2 and maps of several bands, and LCNet chains (the expansion is a 1x1
conv with a depthwise stage of its own: joined from 4 MiB, left as two pairs below). Strided
convolutions (stems, few input channels) join as the expansion too, from 4 MiB. Blocks whose expansion
must stay a node of its own (its value read twice, a graph output, a padded stride-1 1x1, a
non-finite filter) are checked too. Rerun with each instruction set and with 1 and 3 threads."""

import os

import numpy as np
import pytest
import rerun
import webnn

WITHOUT = "constant_folding,batch_norm_folding,layout_assignment,epilogue_fusion,matmul_transposes"
STEPS = [
    ["none"],
    ["relu"],
    ["hard_swish"],
    ["clamp"],
    ["hard_swish", "clamp"],
    ["clamp", "sigmoid"],
]


def _random_case(seed):
    rng = np.random.default_rng(seed)
    k = int(rng.choice([3, 3, 5, 1, 4]))
    dil = int(rng.choice([1, 1, 2])) if k > 1 else 1
    h, w = int(rng.integers(1, 30)), int(rng.integers(1, 40))
    pads = [int(rng.integers(0, (k - 1) * dil + 1)) for _ in range(4)]
    return {
        "seed": seed,
        "batch": int(rng.integers(1, 3)),
        "cin": int(rng.choice([3, 8, 16, 24, 33])),
        "ce": int(rng.choice([8, 16, 24, 33, 48, 64, 96])),
        "h": max(h, (k - 1) * dil + 1 - pads[0] - pads[1]),
        "w": max(w, (k - 1) * dil + 1 - pads[2] - pads[3]),
        "k": k,
        "stride": int(rng.choice([1, 1, 2])),
        "dil": dil,
        "pads": pads,
        "ex_bias": bool(rng.integers(0, 2)),
        "ex_steps": STEPS[int(rng.integers(0, len(STEPS)))],
        "dw_bias": bool(rng.integers(0, 2)),
        "dw_steps": STEPS[int(rng.integers(0, len(STEPS)))],
        "n": int(rng.choice([5, 12, 16, 24, 42, 48])),
        "pw_bias": bool(rng.integers(0, 2)),
        "pw_tail": ["none", "relu", "hard_swish", "add", "residual"][int(rng.integers(0, 5))],
    }


CASES = [_random_case(s) for s in range(28)]


def _steps(b, v, steps):
    for step in steps:
        if step == "relu":
            v = b.relu(v)
        elif step == "hard_swish":
            v = b.hard_swish(v)
        elif step == "clamp":
            v = b.clamp(v, min_value=0.0, max_value=6.0)
        elif step == "sigmoid":
            v = b.sigmoid(v)
    return v


def _expansion_hw(case):
    if case.get("stem"):
        k, st, p = case["stem"]["k"], case["stem"]["stride"], case["stem"]["pads"]
        return ((case["h"] + p[0] + p[1] - k) // st + 1, (case["w"] + p[2] + p[3] - k) // st + 1)
    # A chain's first depthwise (3x3, padding 1) may halve the map.
    s0 = case["chain"]["stride"] if case.get("chain") else 1
    return (case["h"] - 1) // s0 + 1, (case["w"] - 1) // s0 + 1


def _out_shape(case):
    k, dil, s, p = case["k"], case["dil"], case["stride"], case["pads"]
    h, w = _expansion_hw(case)
    oh = (h + p[0] + p[1] - dil * (k - 1) - 1) // s + 1
    ow = (w + p[2] + p[3] - dil * (k - 1) - 1) // s + 1
    return [case["batch"], oh, ow, case["n"]]


def _residual_of_input(case):
    # The block input joins the projection only when the shapes agree.
    shape = [case["batch"], case["h"], case["w"], case["cin"]]
    return case["pw_tail"] == "residual" and _out_shape(case) == shape


def _build(ctx, case, variant="fused"):
    rng = np.random.default_rng(case["seed"] + 1000)
    cin, ce, n, k = case["cin"], case["ce"], case["n"], case["k"]
    b = ctx.create_graph_builder()
    x = b.input("x", [case["batch"], case["h"], case["w"], cin], "float32")
    stem = case.get("stem")
    ek = stem["k"] if stem else 1
    ex_w = rng.uniform(-0.5, 0.5, (ce, ek, ek, cin)).astype(np.float32)
    if variant == "nonfinite":
        ex_w[0, 0, 0, 0] = np.nan
    ex_bias = b.constant(rng.uniform(-1, 1, ce).astype(np.float32)) if case["ex_bias"] else None
    e_in = x
    if case.get("chain"):
        # An LCNet chain: the expansion reads a depthwise layer of its own.
        w0 = rng.uniform(-0.5, 0.5, (cin, 3, 3, 1)).astype(np.float32)
        s0 = case["chain"]["stride"]
        e_in = b.conv2d(
            x, b.constant(w0), padding=[1, 1, 1, 1], strides=[s0, s0], groups=cin,
            input_layout="nhwc", filter_layout="ohwi",
        )  # fmt: skip
        e_in = _steps(b, e_in, case["chain"]["steps"])
    e = b.conv2d(
        e_in, b.constant(ex_w), bias=ex_bias, input_layout="nhwc", filter_layout="ohwi",
        strides=[2, 2] if variant == "strided" else [stem["stride"]] * 2 if stem else None,
        padding=[1, 0, 0, 1] if variant == "padded" else stem["pads"] if stem else None,
    )  # fmt: skip
    e = _steps(b, e, case["ex_steps"])
    dw_w = rng.uniform(-0.5, 0.5, (ce, k, k, 1)).astype(np.float32)
    dw_bias = b.constant(rng.uniform(-1, 1, ce).astype(np.float32)) if case["dw_bias"] else None
    d = b.conv2d(
        e, b.constant(dw_w), bias=dw_bias, padding=case["pads"], strides=[case["stride"]] * 2,
        dilations=[case["dil"]] * 2, groups=ce, input_layout="nhwc", filter_layout="ohwi",
    )  # fmt: skip
    d = _steps(b, d, case["dw_steps"])
    pw_w = rng.uniform(-0.5, 0.5, (n, 1, 1, ce)).astype(np.float32)
    pw_bias = b.constant(rng.uniform(-1, 1, n).astype(np.float32)) if case["pw_bias"] else None
    y = b.conv2d(d, b.constant(pw_w), bias=pw_bias, input_layout="nhwc", filter_layout="ohwi")
    tail = case["pw_tail"]
    if tail == "relu":
        y = b.relu(y)
    elif tail == "hard_swish":
        y = b.hard_swish(y)
    elif tail == "add" or (tail == "residual" and not _residual_of_input(case)):
        y = b.add(y, b.input("r", _out_shape(case), "float32"))
    elif tail == "residual":
        y = b.add(y, x)
    outs = {"y": y}
    if variant == "twice":
        outs["e"] = b.mul(e, e)
    elif variant == "output":
        outs["e"] = e
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


def _feeds(case):
    rng = np.random.default_rng(case["seed"])
    shape = (case["batch"], case["h"], case["w"], case["cin"])
    feeds = {"x": rng.uniform(-4, 4, shape).astype(np.float32)}
    if case["pw_tail"] == "add" or (case["pw_tail"] == "residual" and not _residual_of_input(case)):
        feeds["r"] = rng.uniform(-1, 1, _out_shape(case)).astype(np.float32)
    return feeds


def _check(case, variant, expect_expansion_fused):
    feeds = _feeds(case)
    chain = 1 if case.get("chain") else 0
    fused, stats = _run("cpu", "all", case, variant, feeds)
    assert stats["passes"].get("depthwise_pointwise", 0) == 1 + chain, stats
    assert stats["passes"].get("expansion_fusion", 0) == int(expect_expansion_fused), stats
    # All convolutions in one node, or the expansion left as a node of its own.
    conv_nodes = 1 if expect_expansion_fused else 2
    assert stats["ops_after"].get("conv2d", 0) == conv_nodes, stats
    unfused, unfused_stats = _run("cpu", WITHOUT, case, variant, feeds)
    assert unfused_stats["ops_after"].get("conv2d", 0) == 3 + chain, unfused_stats
    pair, pair_stats = _run("cpu", WITHOUT + ",depthwise_pointwise", case, variant, feeds)
    assert pair_stats["ops_after"].get("conv2d", 0) == 2, pair_stats
    want, _ = _run("reference", "all", case, variant, feeds)
    for name in want:
        np.testing.assert_array_equal(fused[name], unfused[name])
        np.testing.assert_array_equal(pair[name], unfused[name])
        finite = want[name][np.isfinite(want[name])]
        scale = 1 + np.abs(finite).max(initial=0)
        np.testing.assert_allclose(fused[name], want[name], rtol=1e-5, atol=2e-5 * scale)


@pytest.mark.parametrize(
    "case", CASES, ids=lambda c: "seed{seed}_e{cin}to{ce}_k{k}_s{stride}_n{n}".format(**c)
)
def test_block_equals_unfused_and_reference(case):
    _check(case, "fused", True)


@pytest.mark.parametrize(
    "case",
    [
        dict(c, chain={"stride": 1 + c["seed"] % 2, "steps": STEPS[c["seed"] % 6]})
        for c in CASES[:12]
    ],
    ids=lambda c: "seed{seed}_e{cin}to{ce}_k{k}_s{stride}_n{n}".format(**c),
)
def test_small_chain_left_as_pairs(case):
    # depthwise -> 1x1 -> depthwise -> 1x1 (LCNet) on a map that stays in cache (< 4 MiB):
    # two fused pairs, the chain is not joined.
    _check(case, "fused", False)


def _stem_case(seed):
    rng = np.random.default_rng(seed + 500)
    k = int(rng.choice([2, 3, 3, 5]))
    pads = [int(rng.integers(0, k)) for _ in range(4)]
    case = dict(CASES[seed % len(CASES)], cin=int(rng.choice([1, 1, 3, 8, 24])))
    case["h"] = max(case["h"], k) + 6
    case["w"] = max(case["w"], k) + 6
    case["stem"] = {"k": k, "stride": 2, "pads": pads}
    return case


@pytest.mark.parametrize(
    "case",
    [_stem_case(s) for s in range(8)],
    ids=lambda c: "seed{seed}_stem{cin}to{ce}_k{k}_s{stride}".format(**c),
)
def test_small_strided_stem_left_alone(case):
    # A strided conv (a stem) whose value stays in cache (< 4 MiB) stays a node of its own.
    _check(case, "fused", False)


@pytest.mark.parametrize(
    ("cin", "sk", "spads", "stride", "batch"),
    [
        (1, 3, [1, 1, 1, 1], 2, 2),
        (3, 2, [0, 0, 0, 0], 1, 2),
        (8, 5, [2, 1, 0, 2], 2, 1),
        (16, 3, [1, 0, 1, 0], 1, 1),  # 16 channels: one pointer per tap, no padded rows
    ],
)  # fmt: skip
def test_strided_stem_on_large_map_joins(cin, sk, spads, stride, batch):
    # A strided conv (a stem, few input channels through the padded-row tables) as the
    # expansion, its value >= 4 MiB: its rows come from the implicit GEMM's tables, from any
    # first pixel.
    case = dict(
        CASES[0], batch=batch, cin=cin, ce=24 * (3 - batch), h=258, w=512, k=3, stride=stride,
        dil=1, pads=[1, 1, 1, 1], ex_steps=["hard_swish"], dw_steps=["hard_swish"], n=24,
        pw_tail="hard_swish", seed=7 + cin, stem={"k": sk, "stride": 2, "pads": spads},
    )  # fmt: skip
    _check(case, "fused", True)


@pytest.mark.parametrize("variant", ["twice", "output", "nonfinite", "padded"])
def test_expansion_left_alone(variant):
    # A padded 1x1 at stride 1 is neither a pointwise expansion nor a strided conv.
    case = dict(CASES[0], pads=[1, 1, 1, 1], k=3, dil=1, stride=1, h=9, w=11, pw_tail="none")
    _check(case, variant, False)


def test_small_strided_1x1_expansion_left_alone():
    # A strided 1x1 is a strided conv: below 4 MiB it stays. The depthwise reads a 5x6 map.
    case = dict(CASES[0], pads=[1, 1, 1, 1], k=3, dil=1, stride=1, h=10, w=12, pw_tail="none")
    _check(case, "strided", False)


@pytest.mark.parametrize(
    ("stride", "dil", "batch", "chain"),
    [(1, 1, 2, 0), (2, 1, 2, 0), (1, 2, 1, 0), (2, 2, 2, 0), (1, 1, 2, 1), (2, 1, 2, 2)],
)  # fmt: skip
def test_large_map_bands(stride, dil, batch, chain):
    # Rows of 192 x 48 floats: one band per output row, window moves inside every task, a
    # task boundary inside the image with more than one thread. A chain's first depthwise
    # (stride `chain`) computes the expansion's input rows band by band too; its expansion
    # value is 4.5 MiB (chains join from 4 MiB).
    h, w = (41, 192) if not chain else (60 * chain, 192 * chain)
    case = dict(
        CASES[0], batch=batch, cin=24, ce=48, h=h + 1, w=w, k=3, stride=stride, dil=dil,
        pads=[dil, dil, dil, dil], ex_bias=True, ex_steps=["hard_swish"], dw_bias=True,
        dw_steps=["hard_swish"], n=24, pw_tail="residual" if stride == 1 else "none", seed=3,
        chain={"stride": chain, "steps": ["hard_swish"]} if chain else None,
    )  # fmt: skip
    _check(case, "fused", True)


def test_wide_expansion_few_rows():
    # A narrow, deep map (rec-like: 3 rows of 80 x 96 floats): bands of several rows.
    case = dict(
        CASES[1], batch=2, cin=16, ce=96, h=3, w=80, k=5, stride=1, dil=1, pads=[2, 2, 2, 2],
        ex_steps=["relu"], dw_steps=["relu"], n=33, pw_tail="add", seed=5,
    )  # fmt: skip
    _check(case, "fused", True)


@pytest.mark.skipif(rerun.nested(), reason="already in a subprocess")
@pytest.mark.parametrize(
    "env",
    [
        {"WEBNN_CPU_ISA": "avx512"},
        {"WEBNN_CPU_ISA": "avx2"},
        {"WEBNN_CPU_ISA": "generic"},
        {"WEBNN_NUM_THREADS": "1"},
        {"WEBNN_NUM_THREADS": "3"},
    ],
    ids=lambda e: ",".join(f"{k}={v}" for k, v in e.items()),
)
def test_every_cpu_setting(env):
    rerun.assert_file_passes(__file__, env)
