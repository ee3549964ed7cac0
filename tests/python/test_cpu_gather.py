"""The cpu gather kernel (cpu/gather.cc) against the reference backend: random shapes, axes,
element types and index types, negative and out-of-range indices (counted from the end, then
clamped, as the reference does), indices as constants and as graph inputs, 1 and 2 threads."""

import numpy as np
import pytest
import webnn

TYPES = ["float32", "float16", "int8", "uint8", "int32", "int64"]


def _gather(backend, x, idx, axis, constant_indices):
    context = webnn.ML().create_context(accelerated=False, backend=backend)
    b = context.create_graph_builder()
    xi = b.input("x", list(x.shape), str(x.dtype))
    feeds = {"x": x}
    if constant_indices:
        ind = b.constant(idx, shape=list(idx.shape), data_type=str(idx.dtype))
    else:
        ind = b.input("i", list(idx.shape), str(idx.dtype))
        feeds["i"] = idx
    graph = b.build({"y": b.gather(xi, ind, axis=axis)})
    return context.compute(graph, feeds)["y"]


@pytest.mark.parametrize("threads", [1, 2])
def test_cpu_gather_matches_reference(monkeypatch, threads):
    monkeypatch.setenv("WEBNN_NUM_THREADS", str(threads))
    rng = np.random.default_rng(17)
    for case in range(40):
        rank = int(rng.integers(1, 5))
        shape = [int(d) for d in rng.integers(1, 9, rank)]
        axis = int(rng.integers(0, rank))
        if case % 5 == 0:  # a large last-axis gather (several tasks)
            shape, rank, axis = [2, 3000], 2, 1
        dtype = TYPES[case % len(TYPES)]
        x = (rng.standard_normal(shape) * 50).astype(dtype)
        n = shape[axis]
        idx_shape = [int(d) for d in rng.integers(1, 6, int(rng.integers(0, 3)))]
        if case % 5 == 0:
            idx_shape = [9000]  # 18000 outputs: two tasks
        idx = rng.integers(-n - 3, n + 3, idx_shape)
        idx_type = ["int32", "int64", "uint32"][case % 3]
        if idx_type == "uint32":
            idx = np.abs(idx)
        idx = idx.astype(idx_type)
        for constant in (True, False):
            got = _gather("cpu", x, idx, axis, constant)
            want = _gather("reference", x, idx, axis, constant)
            assert got.shape == want.shape
            np.testing.assert_array_equal(
                got.reshape(-1).view(np.uint8), want.reshape(-1).view(np.uint8), err_msg=str(case)
            )


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", ["float32", "uint8", "float16", "int64"])
def test_constant_indices_in_runs_match_reference(monkeypatch, threads, dtype):
    """Constant indices that continue each other (a block swap i ^ j, a slice as a gather,
    runs broken by a negative or out-of-range index) are copied run by run: the same bytes."""
    monkeypatch.setenv("WEBNN_NUM_THREADS", str(threads))
    rng = np.random.default_rng(29)
    lane = np.arange(256)
    cases = [
        ([3, 256], lane ^ 32, 1),  # blocks of 32 swapped
        ([2, 256, 3], lane ^ 8, 1),  # runs of rows of 3 elements
        ([256, 5], np.r_[lane[100:180], lane[:60]], 0),  # two runs along axis 0
        ([4, 256], np.r_[lane[:40] - 256, [300, -1000], lane[50:90]], 1),  # negative, clamped
        ([2, 256], lane ^ 1, 1),  # runs of 1: the element loop
    ]
    for shape, idx, axis in cases:
        x = (rng.standard_normal(shape) * 50).astype(dtype)
        for idx_type in ("int32", "int64"):
            ind = np.asarray(idx).astype(idx_type)
            got = _gather("cpu", x, ind, axis, True)
            want = _gather("reference", x, ind, axis, True)
            np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


@pytest.mark.parametrize("threads", [1, 2])
def test_cpu_float_gather_by_runtime_int32_indices(monkeypatch, threads):
    """Float32 by run-time int32 indices (the last-axis loop normalizing each index):
    QLinearSoftmax's 256-entry table over many indices (ops/quantization.py), and rows of a
    2-D input (outer > 1), with negative and out-of-range indices; bit-identical to the
    reference. (vgatherdps for this loop measured no faster on Zen 4: 1.4-1.5 ms vs 1.2-1.7
    for 1.9M indices.)"""
    monkeypatch.setenv("WEBNN_NUM_THREADS", str(threads))
    rng = np.random.default_rng(23)
    table = rng.standard_normal(256).astype(np.float32)
    idx = rng.integers(-300, 300, (2, 3, 41, 403)).astype(np.int32)
    for x, axis in ((table, 0), (rng.standard_normal((5, 77)).astype(np.float32), 1)):
        got = _gather("cpu", x, idx, axis, False)
        want = _gather("reference", x, idx, axis, False)
        np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
