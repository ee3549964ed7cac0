"""NCHW <-> NHWC float32 transposes of the cpu backend (layout_transpose.cc, transpose_batch.h)
against numpy, in every split regime: fewer than 8 channels (interleaved planes), output rows
split by columns of the input (channels 8 to 1023, whole output rows per thread), long output
rows split by input rows (>= 1024), sizes that leave partial 8x8 blocks, several images; on
every instruction set and with 1 and 3 threads (a copy: the result must be exact)."""

from pathlib import Path

import numpy as np
import pytest
import webnn
from rerun import assert_file_passes, each_isa_and_threads, nested

CASES = [
    ([1, 48, 80, 80], [0, 2, 3, 1]),  # NCHW -> NHWC, 48 channels: 192-byte output rows
    ([1, 80, 80, 48], [0, 3, 1, 2]),  # NHWC -> NCHW: 6400-float output rows, split by rows
    ([2, 13, 7, 9], [0, 2, 3, 1]),  # partial blocks both ways, two images
    ([3, 5, 11, 13], [0, 3, 1, 2]),  # 13 channels back to NCHW
    ([1, 3, 33, 17], [0, 2, 3, 1]),  # RGB: fewer than 8 rows
    ([1, 1030, 3, 5], [0, 2, 3, 1]),  # > 1024 channels: split by rows
    ([2, 37, 41, 1030], [0, 3, 1, 2]),
    ([1, 16, 1, 1], [0, 2, 3, 1]),  # one pixel: a copy
]


@pytest.mark.parametrize("shape,perm", CASES)
def test_layout_transposes_match_numpy(shape, perm):
    ctx = webnn.ML().create_context(accelerated=False, backend="cpu")
    b = ctx.create_graph_builder()
    x = b.input("x", shape, "float32")
    graph = b.build({"y": b.transpose(x, perm)})
    a = np.random.default_rng(sum(shape)).standard_normal(shape).astype(np.float32)
    got = ctx.compute(graph, {"x": a})["y"]
    np.testing.assert_array_equal(got, a.transpose(perm))


@each_isa_and_threads
def test_every_isa_and_thread_count(env):
    if nested():
        pytest.skip("already inside a rerun")
    assert_file_passes(Path(__file__), env)


def test_one_thread():
    if nested():
        pytest.skip("already inside a rerun")
    assert_file_passes(Path(__file__), {"WEBNN_NUM_THREADS": "1"})
