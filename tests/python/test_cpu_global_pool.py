"""Global average pools on the cpu backend sum in double and divide once, as the reference
does, so their results equal the reference's on every instruction set and thread count (a
float32 sum's rounding depended on the vector width: on AVX-512 a QDQ-quantized PP-OCR
classifier's next quantizeLinear moved by one step). Global max pools are exact anyway."""

import numpy as np
import pytest
import rerun
import webnn

SHAPES = [(2, 8, 24, 96), (1, 104, 3, 12), (3, 5, 1, 1), (1, 16, 7, 9), (1, 3, 160, 160)]


def _pool(backend, op, x, layout, **options):
    context = webnn.ML().create_context(accelerated=False, backend=backend)
    b = context.create_graph_builder()
    inp = b.input("x", list(x.shape), "float32")
    y = getattr(b, op)(inp, layout=layout, **options)
    return context.compute(b.build({"y": y}), {"x": x})["y"]


def _data(shape, seed):
    rng = np.random.default_rng(seed)
    # Mixed signs and magnitudes: cancellation makes a float32 sum's rounding visible.
    x = rng.standard_normal(shape) * np.exp(rng.uniform(-4, 4, shape))
    return x.astype(np.float32)


@pytest.mark.parametrize("layout", ["nchw", "nhwc"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_global_average_pool_equals_reference(shape, layout):
    x = _data(shape, sum(shape))
    if layout == "nhwc":
        x = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
    ours = _pool("cpu", "global_average_pool", x, layout)
    want = _pool("reference", "global_average_pool", x, layout)
    np.testing.assert_array_equal(ours, want)
    # and the value is the mean (an independent check of the reference too)
    axes = (2, 3) if layout == "nchw" else (1, 2)
    mean = x.astype(np.float64).mean(axis=axes, keepdims=True)
    np.testing.assert_allclose(ours, mean, rtol=1e-6, atol=1e-6 * np.abs(x).max())


@pytest.mark.parametrize("layout", ["nchw", "nhwc"])
def test_whole_image_average_pool_equals_reference(layout):
    shape = (2, 24, 12, 48)
    x = _data(shape, 7)
    if layout == "nhwc":
        x = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
    window = [12, 48]
    ours = _pool("cpu", "average_pool2d", x, layout, window_dimensions=window)
    want = _pool("reference", "average_pool2d", x, layout, window_dimensions=window)
    np.testing.assert_array_equal(ours, want)


@pytest.mark.parametrize("layout", ["nchw", "nhwc"])
def test_global_max_pool_equals_reference(layout):
    x = _data((2, 8, 24, 96), 3)
    x[0, 1, 5, 7] = np.nan  # NaN sticks
    if layout == "nhwc":
        x = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
    ours = _pool("cpu", "global_max_pool", x, layout)
    want = _pool("reference", "global_max_pool", x, layout)
    np.testing.assert_array_equal(ours, want)


@pytest.mark.skipif(rerun.nested(), reason="already in a subprocess")
@rerun.each_isa_and_threads
def test_every_cpu_setting(env):
    rerun.assert_file_passes(__file__, env)
