"""gelu's erf form as ONNX exports decompose it, x * 0.5 * (1 + erf(x / sqrt 2)), which the cpu
epilogue computes in one pass (cpu/chain.inc erf_gelu_chain): the three ways two muls combine
x, 1 + erf(..) and 0.5, x / c or x * c (either order) before the erf, the add's and the muls'
operand orders, the half computed before the erf (as torch exports it), after a matmul (+ bias,
which the GEMM adds in its store) and after an element-wise head, with values of the group read
again afterwards (which must then not be fused away). The fused graph must give the same bits
as the unfused one (WEBNN_PASSES without epilogue_fusion), also at -0, +-inf and NaN, and match
the reference within float32 tolerance. The last test reruns this file with the AVX2 and generic
kernels and with 1 and 3 threads.
"""

import numpy as np
import pytest
import rerun
from test_passes_random import UNFUSED, _run, _spec_from

# (form, pre op, pre swapped, add swapped, first mul swapped, second mul swapped, half first)
_VARIANTS = {
    "bert": (0, "div", False, False, False, False, False),
    "bert_swapped": (0, "div", False, True, True, True, False),
    "mul_pre": (0, "mul", False, False, True, False, False),
    "mul_pre_swapped": (0, "mul", True, True, False, True, False),
    "half_first": (1, "mul", False, False, False, False, True),
    "half_first_swapped": (1, "mul", True, True, True, True, True),
    "half_after": (1, "div", False, False, False, True, False),
    "scaled_f": (2, "div", False, False, False, False, False),
    "scaled_f_swapped": (2, "mul", True, True, True, True, False),
}

# What else reads the group's values afterwards: nothing, x, the erf, the final product.
_EXTRA = ["none", "x_again", "erf_again", "y_twice"]


def _gelu(b, x, variant, extra):
    form, pre_op, pre_swap, add_swap, m1_swap, m2_swap, half_first = _VARIANTS[variant]

    def c(v):
        return b.constant(np.array(v, np.float32))

    def mul(p, q, swap):
        return b.mul(q, p) if swap else b.mul(p, q)

    half = None
    if half_first:
        half = mul(x, c(0.5), m1_swap)
    if pre_op == "div":
        t = b.div(x, c(1.4142135))
    else:
        t = mul(x, c(0.70710677), pre_swap)
    e = b.erf(t)
    f = b.add(c(1.0), e) if add_swap else b.add(e, c(1.0))
    if form == 0:
        y = mul(mul(x, f, m1_swap), c(0.5), m2_swap)
    elif form == 1:
        if half is None:
            half = mul(x, c(0.5), m1_swap)
        y = mul(half, f, m2_swap)
    else:
        y = mul(x, mul(f, c(0.5), m1_swap), m2_swap)
    if extra == "x_again":
        y = b.sub(y, x)
    elif extra == "erf_again":
        y = b.add(y, e)
    elif extra == "y_twice":
        y = b.mul(y, y)
    return y


def _spec(head, variant, extra, seed):
    rng = np.random.default_rng(seed)
    if head == "matmul":
        in_shape = [2, 37, 19]
        w = rng.uniform(-0.6, 0.6, [19, 45]).astype(np.float32)
        bias = rng.uniform(-1, 1, [45]).astype(np.float32)

        def head_fn(b, x):
            return b.add(b.matmul(x, b.constant(w)), b.constant(bias))

    else:  # an element-wise head reading the input: special values reach the chain as is
        in_shape = [3, 5, 67]
        k = rng.uniform(0.5, 1.5, [67]).astype(np.float32)

        def head_fn(b, x):
            return b.mul(x, b.constant(k))

    return _spec_from(in_shape, lambda b, x: _gelu(b, head_fn(b, x), variant, extra))


def _input(shape, seed, special):
    x = np.random.default_rng(seed).uniform(-6, 6, shape).astype(np.float32)
    if special:
        flat = x.reshape(-1)
        values = [-0.0, 0.0, np.inf, -np.inf, np.nan, 1e30, -1e30, 0.5, -0.5, 4.0, -4.0, 9.0]
        flat[: 3 * len(values)] = np.tile(np.array(values, np.float32), 3)
    return x


@pytest.mark.parametrize("extra", _EXTRA)
@pytest.mark.parametrize("variant", sorted(_VARIANTS))
@pytest.mark.parametrize("head", ["matmul", "elementwise"])
def test_erf_gelu_chain_bit_identical(head, variant, extra):
    seed = len(head) * 100 + len(variant) * 10 + len(extra)
    spec = _spec(head, variant, extra, seed)
    x = _input(spec.input_shape, seed, special=False)
    got, stats = _run(spec, "cpu", "all", "all", x)
    assert stats["passes"]["epilogue_fusion"] > 0
    want, _ = _run(spec, "reference", "all", "all", x)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * (1 + np.abs(want).max()))
    unfused, _ = _run(spec, "cpu", UNFUSED, "none", x)
    np.testing.assert_array_equal(got, unfused)
    if head == "elementwise":
        x = _input(spec.input_shape, seed, special=True)
        got, _ = _run(spec, "cpu", "all", "all", x)
        unfused, _ = _run(spec, "cpu", UNFUSED, "none", x)
        np.testing.assert_array_equal(got, unfused)  # NaN == NaN here
        assert np.array_equal(np.signbit(got), np.signbit(unfused))
        same_nan = np.isnan(got) == np.isnan(unfused)
        assert same_nan.all()
        # NaN payloads as well: the operand orders are kept.
        assert np.array_equal(got.view(np.uint32), unfused.view(np.uint32))


@pytest.mark.skipif(rerun.nested(), reason="nested")
@rerun.each_cpu_setting
def test_other_isas_and_thread_counts(env):
    rerun.assert_file_passes(__file__, env)
