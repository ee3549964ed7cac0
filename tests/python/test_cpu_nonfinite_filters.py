"""conv2d / convTranspose2d whose filter holds NaN or an infinity: cpu against the reference.

The definition sums x * w over the taps that land on the image; padded positions (and the
taps of a transposed convolution that fall outside the input) contribute nothing, so an
output element that sees only padding is its bias even when the filter tap there is inf,
not 0 * inf = NaN. The cpu fast kernels multiply zeros at those positions; with a non-finite
filter they must compute the definition instead (src/backends/cpu/conv_nonfinite_filter.cc,
docs/reliability.md). Every fast path is met: implicit GEMM, the zero-padded few-channel
rows, NHWC and NCHW depthwise, the phase GEMMs and planar kernel of convTranspose2d, a fused
epilogue, float16; with constant filters (checked once at compile) and filter inputs
(checked per run, the same graph also run with a finite filter).
"""

import numpy as np
import pytest
from test_cpu_backend import _both, _context, _data, assert_within

EPS = float(np.finfo(np.float32).eps)
# inf - inf in the error computation of assert_within (NaN there counts as equal).
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def _poison(filt, value, rng, every=7):
    """The filter with `value` at a few taps (the first one always on a border tap)."""
    out = filt.copy()
    flat = out.reshape(-1)
    flat[0] = value
    for i in rng.choice(flat.size, size=flat.size // every, replace=False):
        flat[i] = value
    return out


def _compare(op, x, filt, options, constant_filter, bias=None, then=None):
    inputs, constants = {"x": x}, {}
    (constants if constant_filter else inputs)["w"] = filt
    if bias is not None:
        constants["b"] = bias

    def make(g, o):
        extra = {"bias": o["b"]} if bias is not None else {}
        y = getattr(g, op)(o["x"], o["w"], **options, **extra)
        return then(g, y) if then else y

    got, want = _both(make, inputs, constants)
    # Finite parts within the sum-of-products bound (magnitudes of finite taps only).
    k = int(np.prod(filt.shape[1:])) * 4
    bound = k * EPS * (np.abs(x).max() * np.nan_to_num(np.abs(filt), posinf=0).max() * k + 4)
    assert_within(got, want, bound)
    return got, want


CONV_CASES = {
    # (x shape nchw, filter oihw, options): the path each one takes on cpu.
    "gemm": ([1, 16, 5, 6], [4, 16, 3, 3], {"padding": [1, 1, 1, 1]}),
    "gemm_groups": ([1, 8, 5, 5], [6, 4, 3, 3], {"padding": [2, 0, 1, 2], "groups": 2}),
    "padded_rows": ([1, 3, 7, 9], [5, 3, 3, 3], {"padding": [1, 2, 2, 1], "strides": [2, 1]}),
    "depthwise": ([1, 5, 6, 7], [5, 1, 3, 3], {"padding": [1, 1, 1, 1], "groups": 5}),
    "dilated": ([2, 4, 8, 8], [3, 4, 3, 2], {"padding": [3, 0, 0, 3], "dilations": [2, 2]}),
}


@pytest.mark.parametrize("value", [np.inf, -np.inf, np.nan])
@pytest.mark.parametrize("constant_filter", [True, False])
@pytest.mark.parametrize("nhwc", [False, True])
@pytest.mark.parametrize("case", list(CONV_CASES))
def test_conv2d_non_finite_filter_padding_adds_nothing(case, nhwc, constant_filter, value):
    rng = np.random.default_rng(len(case) * 10 + int(nhwc))
    xs, fs, options = CONV_CASES[case]
    x, filt = _data(rng, xs), _poison(_data(rng, fs), value, rng)
    options = dict(options)
    if nhwc:
        x = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
        options["input_layout"] = "nhwc"
    _compare("conv2d", x, filt, options, constant_filter)


@pytest.mark.parametrize("constant_filter", [True, False])
def test_conv2d_non_finite_filter_without_padding(constant_filter):
    # No padding: every tap meets the image, inf * x is inf or NaN in every output the tap
    # reaches, the same on both backends.
    rng = np.random.default_rng(3)
    x, filt = _data(rng, [1, 6, 5, 5]), _poison(_data(rng, [4, 6, 3, 3]), np.inf, rng)
    _, want = _compare("conv2d", x, filt, {}, constant_filter)
    assert not np.isfinite(want).all()


def test_conv2d_zero_padding_only_output_is_bias():
    # The fuzz finding: an output that sees only padding, against an inf tap, is the bias.
    x = np.ones([1, 1, 2, 2], np.float32)
    filt = np.full([1, 1, 3, 3], np.inf, np.float32)
    filt[0, 0, 2, 2] = 1.0  # the only tap that reaches the image from output (0, 0)
    bias = np.array([0.25], np.float32)
    options = {"padding": [2, 2, 2, 2]}
    for constant in (True, False):
        got, want = _compare("conv2d", x, filt, options, constant, bias=bias)
        assert got[0, 0, 0, 0] == np.float32(1.25) and want[0, 0, 0, 0] == np.float32(1.25)


TRANSPOSE_CASES = {
    "phases": ([1, 3, 4, 5], [3, 4, 3, 3], {"strides": [2, 2], "padding": [1, 0, 0, 1]}),
    "merged": ([1, 2, 3, 4], [2, 3, 2, 2], {"strides": [2, 2]}),
    "groups": (
        [1, 4, 3, 3],
        [4, 2, 3, 3],
        {"strides": [2, 1], "groups": 2, "padding": [0, 1, 1, 0]},
    ),
    "planar": ([1, 2, 4, 4], [2, 1, 2, 2], {"strides": [3, 3], "padding": [1, 1, 1, 1]}),
    "output_padding": ([1, 2, 3, 3], [2, 2, 3, 3], {"strides": [2, 2], "output_padding": [1, 1]}),
}


@pytest.mark.parametrize("value", [np.inf, np.nan])
@pytest.mark.parametrize("constant_filter", [True, False])
@pytest.mark.parametrize("nhwc", [False, True])
@pytest.mark.parametrize("case", list(TRANSPOSE_CASES))
def test_conv_transpose2d_non_finite_filter_missing_taps_add_nothing(
    case, nhwc, constant_filter, value
):
    rng = np.random.default_rng(len(case) * 10 + int(nhwc) + 1)
    xs, fs, options = TRANSPOSE_CASES[case]
    x, filt = _data(rng, xs), _poison(_data(rng, fs), value, rng)
    options = dict(options)
    if nhwc:
        x = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
        options["input_layout"] = "nhwc"
    _compare("conv_transpose2d", x, filt, options, constant_filter)


def test_conv_transpose2d_fuzz_finding_log_filter():
    # out = convTranspose2d(log(x), log(x)) on [2, 2, 2, 2]: log of negatives is NaN, of zero
    # -inf; the reference gives finite outputs where only missing taps meet them.
    x = np.array([0.0, -1.0, 2.0, 3.0, 0.5, 4.0, -2.0, 1.5] * 2, np.float32).reshape(2, 2, 2, 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = np.log(x)
    for constant in (True, False):
        _, want = _compare("conv_transpose2d", logs, logs, {}, constant)
        assert np.isfinite(want).any() and np.isnan(want).any()


@pytest.mark.parametrize("constant_filter", [True, False])
def test_fused_epilogue_applies_on_the_direct_path(constant_filter):
    # conv + clamp is fused on cpu (the epilogue runs inside the conv kernel for NHWC).
    rng = np.random.default_rng(11)
    x = _data(rng, [1, 6, 7, 16])
    filt = _poison(_data(rng, [8, 16, 3, 3]), np.inf, rng, every=10**6)  # one corner tap
    options = {"padding": [1, 1, 1, 1], "input_layout": "nhwc"}
    got, want = _compare(
        "conv2d", x, filt, options, constant_filter, bias=_data(rng, [8]),
        then=lambda g, y: g.clamp(g.relu(y), min_value=0.0, max_value=1.5),
    )  # fmt: skip
    assert np.nanmax(got) <= 1.5 and np.isfinite(want).any()


def test_filter_input_switches_between_finite_and_non_finite():
    # One compiled graph, the filter an input: a finite filter, then a poisoned one, then the
    # finite one again; each run equals the reference.
    rng = np.random.default_rng(5)
    x = _data(rng, [1, 3, 6, 6])
    finite = _data(rng, [4, 3, 3, 3])
    poisoned = _poison(finite, np.inf, rng, every=10**6)  # the corner tap of filter 0
    ctxs = {b: _context(b) for b in ("cpu", "reference")}
    results = {}
    for backend, ctx in ctxs.items():
        g = ctx.create_graph_builder()
        xo = g.input("x", [1, 3, 6, 6], "float32")
        wo = g.input("w", [4, 3, 3, 3], "float32")
        graph = g.build({"y": g.conv2d(xo, wo, padding=[1, 1, 1, 1])})
        results[backend] = [
            ctx.compute(graph, {"x": x, "w": w})["y"] for w in (finite, poisoned, finite)
        ]
    for got, want in zip(results["cpu"], results["reference"]):
        same = (got == want) | (np.isnan(got) & np.isnan(want))
        close = np.abs(got.astype(np.float64) - want) <= 1e-4 * (1 + np.abs(want))
        assert (same | close).all()
    # Output (0, 0) of channel 0 meets the inf tap only through padding.
    assert np.isfinite(results["cpu"][1][0, 0, 0, 0]) and not np.isfinite(results["cpu"][1]).all()


@pytest.mark.parametrize("op", ["conv2d", "conv_transpose2d"])
@pytest.mark.parametrize("constant_filter", [True, False])
def test_float16_non_finite_filter(op, constant_filter):
    rng = np.random.default_rng(7)
    x = _data(rng, [1, 3, 4, 4]).astype(np.float16)
    fshape = [4, 3, 3, 3] if op == "conv2d" else [3, 4, 3, 3]
    filt = _poison(_data(rng, fshape), np.inf, rng).astype(np.float16)
    options = {"padding": [2, 1, 1, 2]}
    out = {}
    for backend in ("cpu", "reference"):
        ctx = _context(backend)
        g = ctx.create_graph_builder()
        xo = g.input("x", list(x.shape), "float16")
        wo = g.constant(filt) if constant_filter else g.input("w", list(filt.shape), "float16")
        graph = g.build({"y": getattr(g, op)(xo, wo, **options)})
        feeds = {"x": x} if constant_filter else {"x": x, "w": filt}
        out[backend] = ctx.compute(graph, feeds)["y"].astype(np.float32)
    got, want = out["cpu"], out["reference"]
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    close = np.abs(got - want) <= 1e-2 * (1 + np.abs(want))
    assert (same | close).all()
    assert np.isfinite(want).any()
