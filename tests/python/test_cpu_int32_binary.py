"""The cpu backend's int32 add / sub / mul / max / min (elementwise.cc BinaryKernel, int32 rows)
against numpy's wrapping int32 arithmetic and the reference backend, bit for bit: broadcast
shapes (a per-channel bias as after an ONNX ConvInteger, scalars, leading axes, both operand
orders), values over the whole int32 range so that sums and products wrap. The last test reruns
the file with 1 and 3 threads and the other kernel sets."""

import numpy as np
import pytest
import rerun
from test_cpu_backend import _context

OPS = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "max": np.maximum,
    "min": np.minimum,
}
SHAPES = [
    ([1, 96, 16, 64], [96, 1, 1]),
    ([96, 1, 1], [1, 96, 16, 64]),
    ([3, 5, 7], [3, 5, 7]),
    ([3, 5, 7], []),
    ([1], [4, 1, 6]),
    ([2, 1, 9], [1, 8, 1]),
    ([40000], [40000]),
]


def _compute(backend, op, a, b, b_constant):
    builder = _context(backend).create_graph_builder()
    x = builder.input("a", list(a.shape), "int32")
    y = builder.constant(b) if b_constant else builder.input("b", list(b.shape), "int32")
    graph = builder.build({"y": getattr(builder, op)(x, y)})
    feeds = {"a": a} if b_constant else {"a": a, "b": b}
    return _context(backend).compute(graph, feeds)["y"]


@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_int32_binary_matches_numpy_and_reference(op, shapes):
    rng = np.random.default_rng(len(op) * 31 + len(str(shapes)))
    info = np.iinfo(np.int32)
    a = rng.integers(info.min, info.max, shapes[0], dtype=np.int64, endpoint=True)
    b = rng.integers(info.min, info.max, shapes[1], dtype=np.int64, endpoint=True)
    a, b = a.astype(np.int32), b.astype(np.int32)
    want = OPS[op](a, b)
    for b_constant in (False, True):
        got = _compute("cpu", op, a, b, b_constant)
        assert got.dtype == np.int32 and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(got, _compute("reference", op, a, b, b_constant))


@pytest.mark.skipif(rerun.nested(), reason="nested")
@rerun.each_cpu_setting
def test_other_isas_and_thread_counts(env):
    rerun.assert_file_passes(__file__, env)
