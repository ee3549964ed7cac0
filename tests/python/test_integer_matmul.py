"""The cpu backend's integer matmul (graph/passes/integer_matmul.cc): matmul(cast((u)int8 x),
constant integer weights) runs on the int8 GEMM and writes float32, with any element-wise
epilogue after it. It must give the same bits as the float matmul it replaces (WEBNN_PASSES
without integer_matmul) and as the reference backend (all sums are exact integers), including
the sign of zero sums, across shapes that cover the GEMM's row blocks (4, 64), column panels
(16) and task blocks (128 columns), odd K, rank-3 inputs and int8 inputs; outside its
exactness bound, with non-integer weights or below 16 rows, the pass leaves the matmul alone.
The last test reruns this file with the AVX2 and generic kernels and with 1 and 3 threads.
"""

import os

import numpy as np
import pytest
import rerun
import webnn

_WITHOUT = (
    "canonicalization,qdq_fusion,constant_folding,qdq_tables,batch_norm_folding,"
    "layout_assignment,epilogue_fusion"
)
_CONTEXTS = {}


def _context(backend):
    if backend not in _CONTEXTS:
        _CONTEXTS[backend] = webnn.ML().create_context(accelerated=False, backend=backend)
    return _CONTEXTS[backend]


def _run(backend, passes, x, w, epilogue):
    """cast(x) @ w, then (epilogue) - zp * colsum(w) and * scale as the ONNX importer states a
    dynamically quantized product; returns the output and the compile stats."""
    old = os.environ.get("WEBNN_PASSES")
    os.environ["WEBNN_PASSES"] = passes
    try:
        ctx = _context(backend)
        b = ctx.create_graph_builder()
        xq = b.input("x", list(x.shape), "uint8" if x.dtype == np.uint8 else "int8")
        y = b.matmul(b.cast(xq, "float32"), b.constant(w))
        if epilogue:
            zp = b.input("zp", [1], "float32")
            colsum = b.constant(w.astype(np.float64).sum(0).astype(np.float32))
            y = b.mul(b.sub(y, b.mul(zp, colsum)), b.constant(np.float32(0.0125)))
        graph = b.build({"y": y})
    finally:
        if old is None:
            os.environ.pop("WEBNN_PASSES", None)
        else:
            os.environ["WEBNN_PASSES"] = old
    feeds = {"x": x}
    if epilogue:
        feeds["zp"] = np.array([131.0], np.float32)
    return ctx.compute(graph, feeds)["y"], graph.compile_stats


def _case(shape, n, dtype, seed, w_bound=255):
    rng = np.random.default_rng(seed)
    lo, hi = (0, 256) if dtype == np.uint8 else (-128, 128)
    x = rng.integers(lo, hi, shape).astype(dtype)
    x.reshape(-1, shape[-1])[0] = 0  # a row of zeros: zero sums, whose sign must be +0
    # Weights within int8 (w_bound 128) take the u8s8 tiles on AVX-512 VNNI machines, and so do
    # uint8 weights minus a zero point (w_bound 0: [-119, 136], shifted into int8 there).
    if w_bound == 0:
        w = rng.integers(-119, 137, (shape[-1], n))
    else:
        w = rng.integers(-w_bound, w_bound + 1, (shape[-1], n)).clip(
            -128 if w_bound == 128 else None, 127 if w_bound == 128 else None
        )
    w = w.astype(np.float32)
    w[:, 0] = -np.abs(w[:, 0])  # column 0: all products of the zero row are -0
    return x, w


def _assert_same_bits(a, b):
    assert a.shape == b.shape and a.dtype == b.dtype == np.float32
    np.testing.assert_array_equal(a.view(np.uint32), b.view(np.uint32))


@pytest.mark.parametrize("epilogue", [False, True])
@pytest.mark.parametrize(
    "shape,n",
    [
        ([16, 256], 1024),
        ([17, 1], 1),
        ([20, 7], 17),
        ([48, 128], 130),
        ([70, 33], 16),
        ([3, 6, 9], 31),
    ],
)
@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
@pytest.mark.parametrize(
    "w_bound", [255, 128, 0], ids=["int16_weights", "int8_weights", "uint8_zp_weights"]
)
def test_integer_matmul_same_bits_as_float_and_reference(shape, n, dtype, epilogue, w_bound):
    x, w = _case(shape, n, dtype, seed=shape[-1] * 7 + n, w_bound=w_bound)
    got, stats = _run("cpu", "all", x, w, epilogue)
    assert stats["passes"]["integer_matmul"] == 1
    assert (stats["passes"]["epilogue_fusion"] > 0) == epilogue
    unfused, stats = _run("cpu", _WITHOUT, x, w, epilogue)
    assert stats["passes"].get("integer_matmul", 0) == 0
    _assert_same_bits(got, unfused)
    want, _ = _run("reference", "all", x, w, epilogue)
    _assert_same_bits(got, want)
    if not epilogue:  # the exact integer product, independently
        exact = x.astype(np.int64).reshape(-1, shape[-1]) @ w.astype(np.int64)
        np.testing.assert_array_equal(got.reshape(exact.shape), exact.astype(np.float32))


def test_integer_matmul_left_alone_for_few_rows():
    # Below 16 rows (an LSTM step's batch) the float GEMM measured faster in the model.
    x, w = _case([2, 256], 1024, np.uint8, seed=1)
    _, stats = _run("cpu", "all", x, w, True)
    assert stats["passes"].get("integer_matmul", 0) == 0


def test_integer_matmul_left_alone_outside_its_bound():
    # 255 * sum|w| >= 2^24 in column 3: the float GEMM could round, so it must stay float.
    rng = np.random.default_rng(5)
    x = rng.integers(0, 256, (16, 300)).astype(np.uint8)
    w = rng.integers(-5, 6, (300, 8)).astype(np.float32)
    w[:, 3] = 255.0
    _, stats = _run("cpu", "all", x, w, False)
    assert stats["passes"].get("integer_matmul", 0) == 0
    w[:, 3] = 1.0
    _, stats = _run("cpu", "all", x, w, False)
    assert stats["passes"]["integer_matmul"] == 1


def test_integer_matmul_left_alone_for_non_integer_or_large_weights():
    x = np.arange(64, dtype=np.uint8).reshape(16, 4)
    for bad in (0.5, 256.0, np.nan):
        w = np.ones((4, 5), np.float32)
        w[2, 1] = bad
        got, stats = _run("cpu", "all", x, w, False)
        assert stats["passes"].get("integer_matmul", 0) == 0
        want, _ = _run("reference", "all", x, w, False)
        np.testing.assert_array_equal(got, want)


@pytest.mark.skipif(rerun.nested(), reason="nested")
@rerun.each_cpu_setting
def test_other_isas_and_thread_counts(env):
    rerun.assert_file_passes(__file__, env)
