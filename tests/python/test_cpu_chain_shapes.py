"""Fused chains that the cpu epilogue computes in one pass (cpu/chain.inc): ONNX's decomposed
hardSwish, x * clip(x + c, lo, hi) / d, an affine step, x * s + b or x * s - b or x / s +- b
(s, b scalars or per-channel constants), and the two in a row, after every kind of head (NHWC conv: inside
the GEMM and depthwise kernels; NCHW conv: after it; an element-wise head: its own pass).
Every operand order, values the chain reads again after a fused run (which must then not be
fused), odd channel counts and block tails. The fused graph must give the same bits as the
unfused one (WEBNN_PASSES without epilogue_fusion), including at -0, +-inf, NaN and the
clamp's breakpoints, and match the reference within float32 tolerance on finite data. The last
test reruns this file with the AVX2 and generic kernels and with 1 and 3 threads.
"""

import numpy as np
import pytest
import rerun
from test_passes_random import UNFUSED, _run, _spec_from

# (add constant first, clamp result first in the mul, clamp bounds)
_HARD_SWISH = {
    "onnx": (False, False, (0.0, 6.0)),
    "swapped": (True, True, (0.0, 6.0)),
    "other_bounds": (False, True, (-1.0, 2.5)),
}

# After the hardSwish: None, or (constant kind of s, of b, s first, b first, add or sub, mul or
# div: attention scores are x / sqrt(d) + mask).
_AFFINE = {
    "none": None,
    "channel_add": ("channel", "channel", False, False, "add", "mul"),
    "scalar_sub": ("scalar", "scalar", True, True, "sub", "mul"),
    "mixed_sub": ("channel", "scalar", False, False, "sub", "mul"),
    "mixed_add": ("scalar", "channel", True, True, "add", "mul"),
    "div_add": ("scalar", "channel", False, False, "add", "div"),
    "div_sub_first": ("channel", "scalar", False, True, "sub", "div"),
}

# What else reads the chain's values: nothing, x after the group, the clamped temporary, the
# hardSwish result (also read by the affine step).
_EXTRA = ["none", "x_again", "temp_again", "hs_again"]


def _chain(b, y, shape, caxis, hs, affine, extra, rng):
    add_first, clamped_first, (lo, hi) = _HARD_SWISH[hs]
    three, six = b.constant(np.float32(3)), b.constant(np.float32(6))
    t = b.add(three, y) if add_first else b.add(y, three)
    t1 = b.clamp(t, min_value=lo, max_value=hi)
    v = b.div(b.mul(t1, y) if clamped_first else b.mul(y, t1), six)
    hs_value = v
    if _AFFINE[affine] is not None:
        s_kind, b_kind, s_first, b_first, op, scale_op = _AFFINE[affine]

        def const(kind):
            cshape = [1] * len(shape)
            if kind == "channel":
                cshape[caxis] = shape[caxis]
            return b.constant(rng.uniform(0.5, 1.5, cshape).astype(np.float32))

        s, o = const(s_kind), const(b_kind)
        scale = getattr(b, scale_op)
        m = scale(s, v) if s_first else scale(v, s)
        v = getattr(b, op)(*((o, m) if b_first else (m, o)))
    if extra == "x_again":
        v = b.sub(v, y)
    elif extra == "temp_again":
        v = b.add(v, t1)
    elif extra == "hs_again":
        v = b.max(v, hs_value)
    return v


def _head_spec(head, hs, affine, extra, seed):
    rng = np.random.default_rng(seed)
    if head == "conv_nhwc":
        shape, caxis = [1, 7, 9, 13], 3
        w = rng.uniform(-0.5, 0.5, [13, 3, 3, 5]).astype(np.float32)
        in_shape = [1, 7, 9, 5]

        def head_fn(b, x):
            return b.conv2d(
                x,
                b.constant(w),
                padding=[1, 1, 1, 1],
                input_layout="nhwc",
                filter_layout="ohwi",
            )

    elif head == "dw_nhwc":
        shape, caxis = [1, 6, 11, 21], 3
        w = rng.uniform(-0.5, 0.5, [21, 1, 3, 3]).astype(np.float32)
        in_shape = shape

        def head_fn(b, x):
            return b.conv2d(x, b.constant(w), padding=[1] * 4, groups=21, input_layout="nhwc")

    elif head == "conv_nchw":
        shape, caxis = [1, 11, 6, 7], 1
        w = rng.uniform(-0.5, 0.5, [11, 4, 1, 1]).astype(np.float32)
        in_shape = [1, 4, 6, 7]

        def head_fn(b, x):
            return b.conv2d(x, b.constant(w))

    else:  # an element-wise head, reading the input: special values reach the chain as is
        shape, caxis = [1, 5, 37, 3], 3
        in_shape = shape
        k = rng.uniform(0.5, 1.5, [3]).astype(np.float32)

        def head_fn(b, x):
            return b.mul(x, b.constant(k))

    def fn(b, x):
        # A fresh generator per build: every backend and pass setting gets the same constants.
        consts = np.random.default_rng(seed + 1)
        return _chain(b, head_fn(b, x), shape, caxis, hs, affine, extra, consts)

    return _spec_from(in_shape, fn)


def _input(shape, seed, special):
    x = np.random.default_rng(seed).uniform(-5, 5, shape).astype(np.float32)
    if special:
        flat = x.reshape(-1)
        values = [-3.0, 3.0, -0.0, 0.0, np.inf, -np.inf, np.nan, 1e30, -1e30, 6.0, -6.0, 2.5]
        flat[: 4 * len(values)] = np.tile(np.array(values, np.float32), 4)
    return x


@pytest.mark.parametrize("extra", _EXTRA)
@pytest.mark.parametrize("affine", sorted(_AFFINE))
@pytest.mark.parametrize("hs", sorted(_HARD_SWISH))
@pytest.mark.parametrize("head", ["conv_nhwc", "dw_nhwc", "conv_nchw", "elementwise"])
def test_fused_chain_shapes_bit_identical(head, hs, affine, extra):
    seed = len(head) * 100 + len(hs) * 10 + len(affine) + len(extra)
    spec = _head_spec(head, hs, affine, extra, seed)
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
        np.testing.assert_array_equal(got, unfused)  # NaN == NaN here, -0 != +0 is not checked
        assert np.array_equal(np.signbit(got), np.signbit(unfused))


@pytest.mark.parametrize("shape", [[2, 256], [5, 37, 3], [3, 7], [2, 1500]])
def test_small_chain_with_full_size_and_short_period_operands(shape):
    """An element-wise chain over fewer values than one block (an LSTM cell's gates): an operand
    of the chain's own shape is read in place, one repeating along the last axis is tiled (its
    period need not divide the tile); fused and unfused give the same bits."""
    rng = np.random.default_rng(len(shape) * 1000 + shape[-1])
    full = rng.uniform(-2, 2, shape).astype(np.float32)
    per_col = rng.uniform(0.5, 1.5, shape[-1:]).astype(np.float32)

    def fn(b, x):
        v = b.mul(b.sigmoid(x), b.constant(full))
        v = b.add(b.constant(per_col), b.mul(v, x))
        return b.sub(b.tanh(v), b.constant(full))

    spec = _spec_from(shape, fn)
    x = rng.uniform(-4, 4, shape).astype(np.float32)
    got, stats = _run(spec, "cpu", "all", "all", x)
    assert stats["passes"]["epilogue_fusion"] > 0
    want, _ = _run(spec, "reference", "all", "all", x)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    unfused, _ = _run(spec, "cpu", UNFUSED, "none", x)
    np.testing.assert_array_equal(got, unfused)


@pytest.mark.skipif(rerun.nested(), reason="nested")
@rerun.each_cpu_setting
def test_other_isas_and_thread_counts(env):
    rerun.assert_file_passes(__file__, env)
