"""The cpu backend's reverse kernel (a strided copy with negative strides, movement.cc) against
the reference backend and numpy, bit for bit, over random shapes, axis sets (none, some, all,
axes absent) and data types. The last test reruns this file with the AVX2 and generic kernels
and with 1 and 3 threads (the copy is split over the pool).
"""

import numpy as np
import pytest
import rerun
from test_cpu_backend import _context

DTYPES = ["float32", "float16", "int64", "uint8", "int8", "int32", "uint32", "uint64"]


def _run(backend, x, axes):
    builder = _context(backend).create_graph_builder()
    op = builder.input("x", list(x.shape), str(x.dtype))
    y = builder.reverse(op) if axes is None else builder.reverse(op, axes=axes)
    graph = builder.build({"y": y})
    return _context(backend).compute(graph, {"x": x})["y"]


def _data(rng, shape, dtype):
    # Raw random bits: every pattern (NaN payloads, subnormals, -0) must come through as is.
    n = int(np.prod(shape)) * np.dtype(dtype).itemsize
    return np.frombuffer(rng.bytes(n), dtype=dtype).reshape(shape).copy()


def _check(x, axes):
    got = _run("cpu", x, axes)
    want = np.flip(x, axis=tuple(range(x.ndim)) if axes is None else tuple(axes))
    assert got.dtype == x.dtype and got.shape == x.shape
    assert got.tobytes() == _run("reference", x, axes).tobytes()
    assert got.tobytes() == np.ascontiguousarray(want).tobytes()


@pytest.mark.parametrize("seed", range(48))
def test_reverse_random(seed):
    rng = np.random.default_rng(9100 + seed)
    rank = int(rng.integers(1, 6))
    shape = [int(rng.integers(1, 7)) for _ in range(rank)]
    shape[int(rng.integers(rank))] = int(rng.integers(40, 300))  # past the small-tensor cutoff
    choice = seed % 4
    if choice == 0:
        axes = None  # every axis
    elif choice == 1:
        axes = []  # none: a copy
    else:
        axes = [int(a) for a in np.flatnonzero(rng.integers(0, 2, rank))]
    _check(_data(rng, shape, DTYPES[seed % len(DTYPES)]), axes)


@pytest.mark.parametrize("dtype", ["float32", "float16", "int64", "uint8"])
@pytest.mark.parametrize(
    "shape,axes",
    [
        ([20, 1, 4096], [0]),  # a bidirectional LSTM's time flip: whole rows, memcpy
        ([20, 1, 4096], [2]),  # innermost reversed
        ([3, 40, 50, 7], [1, 2]),  # adjacent reversed axes merge into one
        ([3, 40, 50, 7], [0, 3]),
        ([5, 300], None),
        ([100003], [0]),  # several tasks of one row
    ],
)
def test_reverse_shapes(dtype, shape, axes):
    _check(_data(np.random.default_rng(len(shape)), shape, dtype), axes)


@pytest.mark.skipif(rerun.nested(), reason="nested")
@rerun.each_cpu_setting
def test_other_isas_and_thread_counts(env):
    rerun.assert_file_passes(__file__, env)
