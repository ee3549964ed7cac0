"""The cpu backend's Winograd F(4x4, 3x3) conv2d kernel (conv_winograd.cc) against the
reference backend: 3x3, stride 1, one group, NHWC, constant filter, 16 or more channels each
way (512 or more products of them) and outputs of at least 8x8 (the shapes it takes), random sizes, paddings and epilogues.

Bound: the one for any float32 sum of K products, K * eps * sum(|x| |w|) per element (the
transforms re-associate the sums; measured worst 48 eps * sum(|x| |w|) for K >= 144, see
docs/performance.md). Outputs that are not all finite are recomputed by the direct kernel:
those runs must give its bits. The last test reruns this file with the AVX2 and generic
kernels and with 1 and 3 threads.
"""

import numpy as np
import pytest
import rerun
from test_cpu_backend import EPS as _EPS
from test_cpu_backend import _data, _run, assert_within


def _case(rng):
    n = int(rng.integers(1, 3))
    h, w = int(rng.integers(10, 27)), int(rng.integers(10, 27))  # outputs of 8 or more
    cin, cout = int(rng.integers(16, 70)), int(rng.integers(32, 70))
    pads = [int(v) for v in rng.integers(0, 3, 4)]
    layout = str(rng.choice(["ohwi", "oihw", "hwio", "ihwo"]))
    sizes = {"o": cout, "i": cin, "h": 3, "w": 3}
    filt = _data(rng, [sizes[c] for c in layout])
    x = _data(rng, [n, h, w, cin])
    bias = _data(rng, [cout]) if rng.integers(2) else None
    options = {"padding": pads, "input_layout": "nhwc", "filter_layout": layout}
    return x, filt, bias, options


def _make(options, epilogue):
    def make(g, o):
        y = g.conv2d(o["x"], o["w"], bias=o.get("b"), **options)
        if epilogue == "relu":
            y = g.relu(y)
        elif epilogue == "clamp":
            y = g.clamp(y, min_value=-3.0, max_value=3.0)
        return y

    return make


def _constants(filt, bias):
    return {"w": filt, **({"b": bias} if bias is not None else {})}


def _direct(monkeypatch, make, inputs, constants):
    with monkeypatch.context() as m:
        m.setenv("WEBNN_CONV_WINOGRAD", "0")
        return _run("cpu", make, inputs, constants)


@pytest.mark.parametrize("seed", range(16))
def test_winograd_random(seed, monkeypatch):
    rng = np.random.default_rng(7000 + seed)
    x, filt, bias, options = _case(rng)
    make = _make(options, ["none", "relu", "clamp"][seed % 3])
    constants = _constants(filt, bias)
    got = _run("cpu", make, {"x": x}, constants)
    want = _run("reference", make, {"x": x}, constants)
    mag_constants = {k: np.abs(v) for k, v in constants.items()}
    magnitude = _run("reference", _make(options, "none"), {"x": np.abs(x)}, mag_constants)
    k = 9 * x.shape[3]
    assert_within(got, want, (k + 2) * _EPS * magnitude.astype(np.float64))
    # The case ran on the Winograd kernel: its sums differ from the direct kernel's somewhere.
    assert not np.array_equal(got, _direct(monkeypatch, make, {"x": x}, constants))


@pytest.mark.parametrize("kind", ["inf", "nan", "overflow"])
def test_winograd_non_finite_runs_use_the_direct_kernel(kind, monkeypatch):
    rng = np.random.default_rng(5)
    x, filt, bias, options = _case(rng)
    if kind == "inf":
        x[0, 3, 4, 0] = np.inf
    elif kind == "nan":
        x[-1, 5, 2, 7] = np.nan
    else:  # finite inputs whose transforms (x 4, x 5 ...) overflow float32
        x[0, 2, 2, :] = 3e38
    make = _make(options, "relu")
    constants = _constants(filt, bias)
    got = _run("cpu", make, {"x": x}, constants)
    direct = _direct(monkeypatch, make, {"x": x}, constants)
    np.testing.assert_array_equal(got, direct)
    if kind == "overflow":
        return  # float32 sums overflow where the reference's double sums need not
    want = _run("reference", make, {"x": x}, constants)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))


@pytest.mark.skipif(rerun.nested(), reason="nested")
@rerun.each_cpu_setting
def test_winograd_under_other_cpu_settings(env):
    rerun.assert_file_passes(__file__, env)


def test_winograd_bits_do_not_depend_on_the_thread_count(monkeypatch):
    # Few tile rows (20x20 outputs: 5), so the units are cut differently per thread count.
    import webnn

    rng = np.random.default_rng(11)
    x = _data(rng, [1, 20, 20, 24])
    filt = _data(rng, [40, 3, 3, 24])
    results = []
    for threads in (1, 2, 3):
        monkeypatch.setenv("WEBNN_NUM_THREADS", str(threads))
        context = webnn.ML().create_context(accelerated=False, backend="cpu")
        b = context.create_graph_builder()
        y = b.conv2d(
            b.input("x", list(x.shape), "float32"),
            b.constant(filt),
            padding=[1, 1, 1, 1],
            input_layout="nhwc",
            filter_layout="ohwi",
        )
        results.append(context.compute(b.build({"y": y}), {"x": x})["y"])
    np.testing.assert_array_equal(results[0], results[1])
    np.testing.assert_array_equal(results[0], results[2])
