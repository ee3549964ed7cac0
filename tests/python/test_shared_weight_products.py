"""The shared_weight_products pass (src/graph/passes/shared_weight_gemms.cc): gemms and 2-D
matmuls that multiply different rows by the same constant weights, none reading another's
result (an RNN unrolled into one Gemm per step), become one product over the concatenated
rows and a slice per node. Checked against the same graph compiled without the pass (bit for
bit: each element is the same sum in the same order) and against the reference backend;
chains whose rows depend on earlier products, different biases and pairs of groups that would
feed each other stay as they are."""

import os

import numpy as np
import pytest
import rerun
import webnn

WITHOUT = (
    "canonicalization,constant_folding,batch_norm_folding,layout_assignment,epilogue_fusion,"
    "matmul_transposes"
)


def _compile(backend, passes, build):
    old = os.environ.get("WEBNN_PASSES")
    os.environ["WEBNN_PASSES"] = passes
    try:
        ctx = webnn.ML().create_context(accelerated=False, backend=backend)
        graph = build(ctx.create_graph_builder())
    finally:
        if old is None:
            os.environ.pop("WEBNN_PASSES", None)
        else:
            os.environ["WEBNN_PASSES"] = old
    return ctx, graph


def _check(build, feeds, merges):
    ctx, graph = _compile("cpu", "all", build)
    got = ctx.compute(graph, feeds)
    assert graph.compile_stats["passes"].get("shared_weight_products", 0) == merges
    ctx2, plain = _compile("cpu", WITHOUT, build)
    unmerged = ctx2.compute(plain, feeds)
    ref_ctx, ref = _compile("reference", "all", build)
    want = ref_ctx.compute(ref, feeds)
    for name in want:
        np.testing.assert_array_equal(got[name], unmerged[name])
        scale = max(1.0, float(np.max(np.abs(want[name]))))
        assert float(np.max(np.abs(got[name] - want[name]))) <= 1e-5 * scale


RNG = np.random.default_rng(7)
W = RNG.standard_normal((64, 96)).astype(np.float32)  # [K, N]
BIAS = RNG.standard_normal(96).astype(np.float32)


@pytest.mark.parametrize("kind", ["gemm", "gemm_bt", "matmul"])
@pytest.mark.parametrize("rows", [1, 3])
def test_unrolled_steps_merge_into_one_product(kind, rows):
    steps = 12

    def build(b):
        x = b.input("x", [steps * rows, 64], "float32")
        w = b.constant(np.ascontiguousarray(W.T) if kind == "gemm_bt" else W)
        outs = {}
        for t in range(steps):
            xt = b.slice(x, [t * rows, 0], [rows, 64])
            if kind == "matmul":
                y = b.matmul(xt, w)
            else:
                # One bias constant per node, as the ONNX importer writes them.
                y = b.gemm(xt, w, c=b.constant(BIAS), b_transpose=kind == "gemm_bt")
            outs[f"y{t}"] = b.sigmoid(y)
        return b.build(outs)

    x = RNG.standard_normal((steps * rows, 64)).astype(np.float32)
    _check(build, {"x": x}, merges=1)


def test_a_recurrent_chain_and_different_biases_stay_apart():
    r = RNG.standard_normal((96, 96)).astype(np.float32) * 0.1

    def build(b):
        x = b.input("x", [4, 64], "float32")
        w, rc = b.constant(W), b.constant(r)
        h = b.gemm(b.slice(x, [0, 0], [1, 64]), w, c=b.constant(BIAS))
        outs = {}
        for t in range(1, 4):
            h = b.tanh(b.gemm(h, rc))  # reads the previous product: a chain
            outs[f"h{t}"] = h
        # The same weights with another bias: a group of its own (of one).
        outs["other"] = b.gemm(b.slice(x, [1, 0], [1, 64]), w, c=b.constant(BIAS + 1))
        return b.build(outs)

    _check(build, {"x": RNG.standard_normal((4, 64)).astype(np.float32)}, merges=0)


def test_two_groups_feeding_each_other_merge_only_as_far_as_no_cycle():
    # x1 -> y2's rows and y1 -> x2's rows: merging both groups would close a cycle.
    v = RNG.standard_normal((96, 64)).astype(np.float32)

    def build(b):
        a = b.input("a", [2, 64], "float32")
        wx, wy = b.constant(W), b.constant(v)
        x1 = b.matmul(b.slice(a, [0, 0], [1, 64]), wx)  # [1, 96]
        y1 = b.matmul(b.slice(b.concat([a, a], 1), [1, 0], [1, 96]), wy)  # [1, 64]
        x2 = b.matmul(b.relu(y1), wx)
        y2 = b.matmul(b.relu(x1), wy)
        return b.build({"x2": x2, "y2": y2})

    _check(build, {"a": RNG.standard_normal((2, 64)).astype(np.float32)}, merges=1)


@pytest.mark.skipif(rerun.nested(), reason="already in a subprocess")
@rerun.each_isa_and_threads
def test_every_cpu_setting(env):
    rerun.assert_file_passes(__file__, env)
