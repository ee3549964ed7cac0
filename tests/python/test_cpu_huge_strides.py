"""Window ops whose stride is far wider than the image (found by the ONNX fuzz target: an
AveragePool with strides [5, 2^62] and ceil rounding has two output columns 2^62 apart).
The cpu planar kernels copied each NCHW plane into stride_w column phases spanning every
column the windows reach: 2^62 phases, a hang (and an overflowed buffer size). They now
decline such a geometry (src/backends/cpu/plane.cc) and the reference kernel computes it.
Each case runs in a child process with a time limit, so a hang fails instead of hanging.
"""

import subprocess
import sys
import textwrap

import pytest

CHILD = textwrap.dedent(
    """
    import numpy as np, webnn
    op, layout, strides = {op!r}, {layout!r}, {strides!r}
    x = np.arange(1, 1 + 1 * 3 * 2 * 2, dtype=np.float32).reshape(1, 3, 2, 2)
    if layout == "nhwc":
        x = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
    out = {{}}
    for backend in ("cpu", "reference"):
        ctx = webnn.ML().create_context(accelerated=False, backend=backend)
        g = ctx.create_graph_builder()
        xo = g.input("x", list(x.shape), "float32")
        common = dict(strides=strides, padding=[1, 1, 1, 1])
        if op == "conv2d":
            w = g.constant(np.full([3, 1, 3, 3], 0.5, np.float32))
            y = g.conv2d(xo, w, groups=3, input_layout=layout, filter_layout="oihw", **common)
        else:
            y = getattr(g, op)(xo, window_dimensions=[3, 3], layout=layout,
                               output_shape_rounding="ceil", **common)
        out[backend] = ctx.compute(g.build({{"y": y}}), {{"x": x}})["y"]
    np.testing.assert_allclose(out["cpu"], out["reference"], rtol=1e-6, atol=1e-6)
    print("shape", list(out["cpu"].shape))
    """
)


POOL_STRIDES = [[5, 2**62], [2**62, 3], [2**40, 2**40], [2**63 - 1, 1]]
CONV_STRIDES = [[5, 2**31 - 1], [2**31 - 1, 3], [2**31 - 1, 2**31 - 1]]  # the builder's maximum
CASES = [(op, s) for op in ("average_pool2d", "max_pool2d") for s in POOL_STRIDES]
CASES += [("conv2d", s) for s in CONV_STRIDES]  # depthwise: the planar kernel for NCHW


@pytest.mark.parametrize("layout", ["nchw", "nhwc"])
@pytest.mark.parametrize("op,strides", CASES)
def test_stride_wider_than_the_image_matches_reference(op, strides, layout):
    code = CHILD.format(op=op, layout=layout, strides=strides)
    try:
        done = subprocess.run(
            [sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=120
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{op} {layout} strides {strides}: no result within 120 s (a hang)")
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("shape [1, ")
