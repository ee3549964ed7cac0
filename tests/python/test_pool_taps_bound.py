"""The builder refuses pools whose windows visit more than 2^32 taps per channel plane.

A window of 2^62 dilated taps over 2^63 of padding is a few option values; both backends
visit every tap of every window, so such a pool ran for ever (issue 8). Each case runs in a
child process with a time limit, so that a regression fails instead of hanging.
"""

import subprocess
import sys

import numpy as np
import pytest
import webnn

CHILD = """
import sys, json
import webnn
window, padding, dilations, strides = json.loads(sys.argv[3])
ctx = webnn.ML().create_context(accelerated=False, backend=sys.argv[1])
b = ctx.create_graph_builder()
x = b.input("x", [1, 2, 3, 3], "float32")
try:
    getattr(b, sys.argv[2])(x, window_dimensions=window, padding=padding, dilations=dilations,
                            strides=strides)
    print("accepted")
except ValueError as exc:
    print(exc)
"""

H, M = 2**62, 2**63 - 1
HUGE = [
    # 2^62 dilated taps over 2^63 - 1 of padding: one output row of 3
    f"[[{H}, 1], [{M}, 0, 0, 0], [2, 1], [{H}, 1]]",
    # 2^31 - 1 squared taps, dilated by 2^31 - 1, over 2^62 of padding: 2 x 2 outputs
    f"[[2147483647, 2147483647], [{H}, {H}, {H}, {H}], [2147483647, 2147483647], [{H}, {H}]]",
    # 2^20 x 2^20 taps over half of it padded: 4 x 4 outputs (2^44 taps)
    "[[1048576, 1048576], [524288, 524288, 524288, 524288], [1, 1], [1, 1]]",
]


@pytest.mark.parametrize("backend", ["cpu", "reference"])
@pytest.mark.parametrize("op", ["max_pool2d", "average_pool2d", "l2_pool2d"])
@pytest.mark.parametrize("geometry", HUGE)
def test_pool_of_too_many_window_taps_is_refused(backend, op, geometry):
    run = subprocess.run(
        [sys.executable, "-c", CHILD, backend, op, geometry],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    out = run.stdout.strip()
    name = {"max_pool2d": "maxPool2d", "average_pool2d": "averagePool2d"}.get(op, "l2Pool2d")
    assert out.startswith(name + ": window_dimensions"), out + run.stderr
    assert "visit more than 2^32 window taps per channel" in out


@pytest.mark.parametrize("backend", ["cpu", "reference"])
def test_large_windows_within_the_bound_still_compute(backend):
    # 2^15 x 2^15 taps over 2^14 - 1 of padding each side: 2 x 2 outputs of 2^30 taps (2^32
    # in all: the bound itself), each window holding the whole 3 x 3 input.
    ctx = webnn.ML().create_context(accelerated=False, backend=backend)
    b = ctx.create_graph_builder()
    x = b.input("x", [1, 1, 3, 3], "float32")
    k, p = 1 << 15, (1 << 14) - 1
    y = b.max_pool2d(x, window_dimensions=[k, k], padding=[p, p, p, p])
    data = np.arange(9, dtype=np.float32).reshape(1, 1, 3, 3)
    got = ctx.compute(b.build({"y": y}), {"x": data})["y"]
    # Window (i, j) covers input rows i - p .. i - p + k - 1: all 3 rows and columns.
    assert got.shape == (1, 1, 2, 2)
    np.testing.assert_array_equal(got, np.full((1, 1, 2, 2), 8, np.float32))
