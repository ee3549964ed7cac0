"""The cpu backend's float32 lstm / lstmCell / gru / gruCell kernel (recurrent_f32.cc) against
the reference backend, which evaluates the ops in double and rounds once.

The float32 kernel is not bit-identical to the reference: its products are float32 GEMMs and
its gates the SIMD sigmoid / tanh. docs/performance.md states the rule that picks it (sigmoid /
tanh activations, at least 2^16 multiply-adds per run) and the bound checked here, element by
element: |cpu - reference| <= BOUND * max(1, |reference|). The cases cover every option
(directions, layouts, activation orders, reset_after, optional biases / peepholes / initial
states as constants or graph inputs, return_sequence, batch > 1), sizes that split a step over
threads and end in vector tails; WEBNN_RECURRENT_KERNEL=float32 forces the kernel on cases
below the size rule. The last test reruns the file with the AVX2 and generic kernels and with
1 and 3 threads.
"""

import numpy as np
import pytest
import rerun
from test_cpu_backend import _context, assert_ulp
from test_cpu_recurrent import _compute, random_case
from wpt_runner import check_case, load_cases

BOUND = 3e-5
BOUNDED = ["sigmoid", "tanh"]


def _case(rng, op, hid_range=(1, 80), inp_range=(1, 80), steps_range=(1, 6)):
    # Weights scaled so that the gates' inputs are of order one (neither saturated nor tiny).
    return random_case(
        rng, op, (inp_range, hid_range, steps_range), lambda fan_in: 1.5 / np.sqrt(fan_in), BOUNDED
    )


def _assert_within_bound(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == np.float32
        g64, w64 = g.astype(np.float64), w.astype(np.float64)
        assert np.array_equal(np.isnan(g64), np.isnan(w64))
        finite = np.isfinite(w64)
        assert np.array_equal(g64[~finite & ~np.isnan(w64)], w64[~finite & ~np.isnan(w64)])
        err = np.abs(g64[finite] - w64[finite]) / np.maximum(1.0, np.abs(w64[finite]))
        assert err.size == 0 or err.max() <= BOUND, f"max scaled error {err.max():.3g}"


@pytest.mark.parametrize("op", ["lstm", "gru", "lstm_cell", "gru_cell"])
@pytest.mark.parametrize("seed", range(10))
def test_float32_kernel_within_bound(op, seed, monkeypatch):
    monkeypatch.setenv("WEBNN_RECURRENT_KERNEL", "float32")
    rng = np.random.default_rng(seed * 11 + len(op))
    wide = seed >= 7  # gate columns over several GEMM tasks per thread
    args, options, arrays, as_input = _case(
        rng, op, hid_range=(120, 300) if wide else (1, 80), inp_range=(1, 200)
    )
    got = _compute("cpu", op, args, options, arrays, as_input)
    want = _compute("reference", op, args, options, arrays, as_input)
    _assert_within_bound(got, want)


def test_long_bidirectional_lstm_within_bound():
    # The shape class of an OCR recogniser (ddddocr: 32 steps, hidden 512), smaller: picked by
    # the size rule without forcing.
    rng = np.random.default_rng(3)
    steps, hid, inp = 24, 192, 160
    arrays = {
        "x": rng.standard_normal((steps, 2, inp)).astype(np.float32),
        "w": (rng.standard_normal((2, 4 * hid, inp)) / np.sqrt(inp)).astype(np.float32),
        "r": (rng.standard_normal((2, 4 * hid, hid)) / np.sqrt(hid)).astype(np.float32),
        "b": rng.standard_normal((2, 4 * hid)).astype(np.float32),
    }
    options = {"bias": "b", "direction": "both", "return_sequence": True, "layout": "iofg"}
    args = ["x", "w", "r", steps, hid]
    got = _compute("cpu", "lstm", args, options, arrays, {"x"})
    want = _compute("reference", "lstm", args, options, arrays, {"x"})
    _assert_within_bound(got, want)
    # The size rule picked the float32 kernel: the double one gives the reference's bits.
    assert any(not np.array_equal(g, w) for g, w in zip(got, want))


@pytest.mark.parametrize("activations", [["relu", "tanh", "tanh"], ["sigmoid", "tanh", "relu"]])
def test_relu_keeps_the_double_kernel(activations):
    rng = np.random.default_rng(4)
    steps, hid, inp = 8, 160, 160
    arrays = {
        "x": rng.standard_normal((steps, 2, inp)).astype(np.float32),
        "w": (rng.standard_normal((1, 4 * hid, inp)) * 0.1).astype(np.float32),
        "r": (rng.standard_normal((1, 4 * hid, hid)) * 0.1).astype(np.float32),
    }
    options = {"activations": activations, "return_sequence": True}
    args = ["x", "w", "r", steps, hid]
    got = _compute("cpu", "lstm", args, options, arrays, {"x", "w"})
    want = _compute("reference", "lstm", args, options, arrays, {"x", "w"})
    for g, w in zip(got, want):
        assert_ulp(g, w, 0)


def test_nan_and_inf_propagate_as_in_reference(monkeypatch):
    monkeypatch.setenv("WEBNN_RECURRENT_KERNEL", "float32")
    rng = np.random.default_rng(6)
    for op in ["lstm", "gru"]:
        args, options, arrays, as_input = _case(rng, op, steps_range=(3, 6))
        arrays["x"][1].flat[0] = np.nan
        arrays["x"][-1].flat[-1] = np.inf
        got = _compute("cpu", op, args, options, arrays, as_input)
        want = _compute("reference", op, args, options, arrays, as_input)
        _assert_within_bound(got, want)


def test_wpt_recurrent_cases_on_the_float32_kernel(monkeypatch):
    monkeypatch.setenv("WEBNN_RECURRENT_KERNEL", "float32")
    cases = [c for op, _, c in load_cases() if op in ("lstm", "lstmCell", "gru", "gruCell")]
    assert len(cases) > 20
    failures = {c["name"]: p for c in cases if (p := check_case(_context("cpu"), c))}
    assert not failures


@pytest.mark.skipif(rerun.nested(), reason="nested")
@rerun.each_cpu_setting
def test_other_isas_and_thread_counts(env):
    rerun.assert_file_passes(__file__, env)
