"""The cpu backend's convolution paths against the reference backend: register-blocked NHWC
depthwise rows (every filter size, strides 1 and 2 reusing inputs in registers, others
generic), the zero-padded few-channel implicit GEMM, the 3-vector GEMM tile for few output
channels, and the NHWC one-output-channel convTranspose2d. Shapes are chosen so every path meets full and partial channel vectors,
blocks of 8 / 4 / 1 pixels and border rows and columns. Tolerances as in test_cpu_backend.py
(the K * eps * sum(|x| * |w|) bound). Fused epilogues must give the same bits as the
unfused graph. The last test reruns this file with the AVX2 and generic kernels and with 1 and
3 threads.
"""

import numpy as np
import pytest
import rerun
import webnn
from test_cpu_backend import _check_conv, _data, _run


def _depthwise_case(rng, k, nhwc):
    c = int(rng.choice([1, 5, 8, 13, 16, 24, 37]))
    n = int(rng.integers(1, 3))
    kh, kw = k, int(rng.choice([k, max(1, k - 2), k + 1]))
    stride = [int(rng.integers(1, 3)), int(rng.integers(1, 3))]
    dilation = [int(rng.choice([1, 1, 2])), int(rng.choice([1, 1, 2]))]
    pads = [int(v) for v in rng.integers(0, k, size=4)]
    h = int(rng.integers((kh - 1) * dilation[0] + 1, 30))
    w = int(rng.integers((kw - 1) * dilation[1] + 1, 45))
    filt_layout = str(rng.choice(["oihw", "hwio", "ohwi", "ihwo"]))
    sizes = {"o": c, "i": 1, "h": kh, "w": kw}
    filt = _data(rng, [sizes[ch] for ch in filt_layout])
    x = _data(rng, [n, h, w, c] if nhwc else [n, c, h, w])
    bias = _data(rng, [c]) if rng.integers(2) else None
    options = {
        "strides": stride,
        "dilations": dilation,
        "padding": pads,
        "groups": c,
        "input_layout": "nhwc" if nhwc else "nchw",
        "filter_layout": filt_layout,
    }
    return x, filt, bias, options, kh * kw


def _conv_with_bias(g, o, options):
    return g.conv2d(o["x"], o["w"], bias=o["b"], **options)


def _assert_prepadded_gives_same_bits(x, filt, bias, options):
    """The NHWC conv on cpu equals the same conv on the input padded beforehand (every window
    then inside the image), bit for bit; returns the result."""
    pads = options["padding"]
    consts = {"w": filt, "b": bias}
    padded = np.pad(x, [(0, 0), (pads[0], pads[1]), (pads[2], pads[3]), (0, 0)])
    got = _run("cpu", lambda g, o: _conv_with_bias(g, o, options), {"x": x}, consts)
    unpadded = dict(options, padding=[0] * 4)
    want = _run("cpu", lambda g, o: _conv_with_bias(g, o, unpadded), {"x": padded}, consts)
    np.testing.assert_array_equal(got, want)
    return got


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5, 6, 7])
@pytest.mark.parametrize("seed", range(4))
def test_depthwise_random(k, seed):
    rng = np.random.default_rng(k * 100 + seed)
    x, filt, bias, options, taps = _depthwise_case(rng, k, nhwc=seed != 3)
    _check_conv(x, filt, bias, options, taps, constant_filter=seed != 2)


@pytest.mark.parametrize("rows", [11, 2])
@pytest.mark.parametrize("k,stride", [(3, 1), (3, 2), (5, 1), (5, 2), (7, 1), (7, 2)])
def test_depthwise_register_reuse_rows(k, stride, rows):
    # Rows wide enough for several 8-pixel blocks plus 4- and 1-pixel tails, channels one full
    # vector and a partial one past it; the det / rec padding (k // 2).
    rng = np.random.default_rng(k * 10 + stride)
    c, w = 21, 8 * 5 + 4 + 3
    x = _data(rng, [1 if rows < 4 else 2, rows, w * stride, c])  # few rows: row segments
    filt = _data(rng, [c, 1, k, k])
    options = {
        "strides": [stride, stride],
        "padding": [k // 2] * 4,
        "groups": c,
        "input_layout": "nhwc",
    }
    _check_conv(x, filt, _data(rng, [c]), options, k * k)


@pytest.mark.parametrize(
    "c,kh,kw,stride,dilation,pads",
    [
        (107, 5, 5, 1, 1, [2, 2, 2, 2]),  # 8 + 4 + 1 vectors and a partial one (AVX2)
        (72, 3, 3, 2, 1, [1, 0, 0, 1]),
        (40, 7, 3, 1, 2, [3, 1, 2, 4]),
        (200, 5, 3, 2, 2, [4, 4, 1, 3]),
        (53, 3, 3, 1, 1, [1, 1, 1, 1]),  # 4 + 2 vectors and a partial one
    ],
)
def test_depthwise_wide_channel_borders(c, kh, kw, stride, dilation, pads):
    # Border pixels (taps in the padding) of many channels go several vectors at a time. A tap
    # in the padding adds nothing, so the same convolution on the input zero-padded beforehand
    # (every pixel then interior) must give the same bits.
    rng = np.random.default_rng(c)
    x = _data(rng, [1, 13, 29, c])
    filt = _data(rng, [c, 1, kh, kw])
    bias = _data(rng, [c])
    options = {
        "strides": [stride, stride],
        "dilations": [dilation, dilation],
        "padding": pads,
        "groups": c,
        "input_layout": "nhwc",
    }
    _check_conv(x, filt, bias, options, kh * kw)

    _assert_prepadded_gives_same_bits(x, filt, bias, options)


@pytest.mark.parametrize(
    "cin,k,stride,pads,dilation",
    [
        (3, 3, 2, [1, 1, 1, 1], 1),  # the det / rec stem
        (1, 5, 1, [2, 2, 2, 2], 1),
        (4, 3, 1, [0, 2, 1, 0], 2),  # dilated rows: filter rows apart, taps along a row adjacent
        (7, 2, 3, [1, 0, 0, 1], 1),
        (15, 7, 2, [3, 3, 3, 3], 1),
    ],
)
@pytest.mark.parametrize("nhwc", [False, True])
def test_conv2d_few_channels_padded_rows(cin, k, stride, pads, dilation, nhwc):
    rng = np.random.default_rng(cin * 7 + k)
    x = _data(rng, [2, 19, 23, cin] if nhwc else [2, cin, 19, 23])
    filt = _data(rng, [k, k, cin, 17])
    options = {
        "strides": [stride, stride],
        "dilations": [dilation, 1],
        "padding": pads,
        "input_layout": "nhwc" if nhwc else "nchw",
        "filter_layout": "hwio",
    }
    _check_conv(x, filt, _data(rng, [17]), options, cin * k * k)


@pytest.mark.parametrize(
    "cin,k,stride,pads,width",
    [
        (3, 7, 2, [3, 3, 3, 3], 23),  # a ResNet-style stem: two border columns left, one right
        (2, 5, 1, [4, 1, 4, 1], 3),  # an image narrower than the filter: every column a border
        (5, 3, 3, [0, 2, 0, 2], 10),
    ],
)
def test_conv2d_few_channels_border_patches(cin, k, stride, pads, width):
    # Few-channel windows read the input in place; border columns read zero-padded patches.
    # Padding the input beforehand (every window then inside) must give the same bits, and a
    # graph dispatched on two input tensors in turn must read each one's own pixels.
    rng = np.random.default_rng(cin + k)
    x = _data(rng, [2, 11, width, cin])
    filt = _data(rng, [9, k, k, cin])
    bias = _data(rng, [9])
    options = {
        "strides": [stride, stride],
        "padding": pads,
        "input_layout": "nhwc",
        "filter_layout": "ohwi",
    }
    _check_conv(x, filt, bias, options, cin * k * k)

    got = _assert_prepadded_gives_same_bits(x, filt, bias, options)
    consts = {"w": filt, "b": bias}

    ctx = webnn.ML().create_context(accelerated=False, backend="cpu")
    b = ctx.create_graph_builder()
    ops = {"x": b.input("x", list(x.shape), "float32")}
    ops.update({k: b.constant(v) for k, v in consts.items()})
    graph = b.build({"y": _conv_with_bias(b, ops, options)})
    x2 = _data(rng, x.shape)
    tensors = []
    for v in (x, x2):
        t = ctx.create_tensor(list(x.shape), "float32", writable=True)
        ctx.write_tensor(t, v)
        tensors.append(t)
    y = ctx.create_tensor(list(got.shape), "float32", readable=True)
    for t, v in [(tensors[0], x), (tensors[1], x2), (tensors[0], x)]:
        ctx.dispatch(graph, {"x": t}, {"y": y})
        np.testing.assert_array_equal(ctx.read_tensor(y), ctx.compute(graph, {"x": v})["y"])


def test_conv2d_few_channels_runtime_filter_and_rerun():
    # The padded copy is zeroed once: a second run with other data must not see the first's.
    rng = np.random.default_rng(3)
    x = _data(rng, [1, 9, 10, 3])
    filt = _data(rng, [5, 3, 3, 3])
    options = {"padding": [1, 1, 1, 1], "input_layout": "nhwc"}
    _check_conv(x, filt, None, options, 27, constant_filter=False)
    _check_conv(x * -2.0, filt, None, options, 27, constant_filter=False)


@pytest.mark.parametrize("cout", [18, 24, 70])
@pytest.mark.parametrize("k,groups,cin", [(1, 1, 40), (3, 1, 96), (3, 2, 20), (3, 1, 3)])
def test_conv2d_three_vector_tile(cout, k, groups, cin):
    # Output channels (per group) that pad to fewer columns on the 3-vector micro-kernel (24 on
    # AVX2) than on the main one: 18 and 24 take it, 70 on AVX2 too (72 < 80); pixel counts
    # that leave partial row tiles; the padded few-channel path with it (cin 3).
    rng = np.random.default_rng(cout * 10 + k + cin)
    x = _data(rng, [2, 9, 11, cin])
    filt = _data(rng, [cout * groups, cin // groups, k, k])
    options = {"padding": [k // 2] * 4, "groups": groups, "input_layout": "nhwc"}
    _check_conv(x, filt, _data(rng, [cout * groups]), options, cin // groups * k * k)


@pytest.mark.parametrize("h,w,cin", [(17, 13, 24), (40, 37, 5), (3, 300, 24)])
def test_conv_transpose2d_nhwc_one_channel(h, w, cin):
    # det's last layer: 2x2 stride 2 to one channel; pixel counts that are not multiples of the
    # GEMM panel, and rows long enough for several bands.
    rng = np.random.default_rng(h + w)
    x = _data(rng, [2, h, w, cin])
    filt = _data(rng, [cin, 1, 2, 2])
    options = {"strides": [2, 2], "input_layout": "nhwc"}
    _check_conv(x, filt, _data(rng, [1]), options, cin, op="conv_transpose2d")


# Convolutions whose GEMM rows go in several chunks per task (every K pass and the fused
# epilogue run on a chunk before the next): K = 864 in two passes (det's 3x3 96 -> 24, on the
# 3-vector tile, and 96 -> 40 on the main one), K = 40 in one pass; pixel counts that leave a
# partial chunk and a partial row tile.
_CHUNKED = {
    "3x3_96_24": ([1, 23, 29, 96], [24, 96, 3, 3], 1),
    "3x3_96_40": ([2, 13, 27, 96], [40, 96, 3, 3], 1),
    "1x1_40_12": ([1, 37, 41, 40], [12, 40, 1, 1], 0),
}


@pytest.mark.parametrize("name", sorted(_CHUNKED))
def test_conv2d_row_chunks(name):
    x_shape, w_shape, pad = _CHUNKED[name]
    rng = np.random.default_rng(len(name))
    options = {"padding": [pad] * 4, "input_layout": "nhwc"}
    k = w_shape[1] * w_shape[2] * w_shape[3]
    _check_conv(_data(rng, x_shape), _data(rng, w_shape), _data(rng, [w_shape[0]]), options, k)


# convTranspose2d shapes per kernel path: NCHW 2x2 stride 2 (the planar kernel, taps tiling
# the output: det's 24 -> 24), NHWC 2x2 stride 2 with several channels (the phase GEMM with
# merged column phases), NHWC 3x3 stride 2 with padding and output padding (one GEMM per
# phase, phases of different sizes), NCHW 3x3 stride 2 (transposed around the phase GEMMs).
_CONV_T = {
    "planar_nchw": ([2, 24, 9, 11], [24, 24, 2, 2], {"strides": [2, 2]}),
    "merged_nhwc": ([1, 9, 11, 24], [24, 20, 2, 2], {"strides": [2, 2], "input_layout": "nhwc"}),
    "phases_nhwc": (
        [2, 7, 10, 12],
        [12, 18, 3, 3],
        {
            "strides": [2, 2],
            "padding": [1, 1, 1, 1],
            "output_padding": [1, 0],
            "input_layout": "nhwc",
        },
    ),
    "phases_nchw": ([1, 12, 7, 8], [12, 9, 3, 3], {"strides": [2, 2], "padding": [1, 0, 0, 1]}),
}


@pytest.mark.parametrize("name", sorted(_CONV_T))
def test_conv_transpose2d_paths(name):
    x_shape, w_shape, options = _CONV_T[name]
    rng = np.random.default_rng(len(name) + 7)
    _check_conv(
        _data(rng, x_shape),
        _data(rng, w_shape),
        _data(rng, [w_shape[1]]),
        options,
        w_shape[0] * 4,
        op="conv_transpose2d",
    )


@pytest.mark.parametrize("shape", [[2, 2, 37, 41], [1, 3, 160, 161], [1, 4, 9, 7], [3, 7, 5, 3]])
def test_layout_transpose_few_channels(shape):
    # NCHW -> NHWC of an image with fewer than 8 channels (the stem's input transpose): its
    # planes interleaved over column chunks (several for the 160 x 161 image) instead of
    # 8 x 8 blocks.
    x = _data(np.random.default_rng(shape[1]), shape)
    got = _run("cpu", lambda g, o: g.transpose(o["x"], permutation=[0, 2, 3, 1]), {"x": x}, {})
    np.testing.assert_array_equal(got, x.transpose(0, 2, 3, 1))


_EPILOGUE_KINDS = ["depthwise5", "depthwise_short", "stem", "convT"]
_EPILOGUE_KINDS += [f"chunked_{k}" for k in sorted(_CHUNKED)]
_EPILOGUE_KINDS += [f"convT_{k}" for k in sorted(_CONV_T)]


@pytest.mark.parametrize("kind", _EPILOGUE_KINDS)
@pytest.mark.parametrize("act", ["relu", "clamp", "hard_swish"])
def test_fused_epilogue_bit_identical(kind, act):
    # conv -> activation in one graph (the activation runs in the conv's epilogue) against the
    # same conv and the activation as two cpu graphs.
    rng = np.random.default_rng(len(kind) * 10 + len(act))
    if kind.startswith("chunked_"):
        x_shape, w_shape, pad = _CHUNKED[kind[len("chunked_") :]]
        x, filt = _data(rng, x_shape), _data(rng, w_shape)
        options = {"padding": [pad] * 4, "input_layout": "nhwc"}
        op = "conv2d"
    elif kind.startswith("convT_"):
        x_shape, w_shape, options = _CONV_T[kind[len("convT_") :]]
        x, filt = _data(rng, x_shape), _data(rng, w_shape)
        op = "conv_transpose2d"
    elif kind == "depthwise5":
        x, filt = _data(rng, [1, 12, 20, 24]), _data(rng, [24, 1, 5, 5])
        options = {"padding": [2] * 4, "groups": 24, "input_layout": "nhwc"}
        op = "conv2d"
    elif kind == "depthwise_short":  # 3 rows: with several threads they go in row segments
        x, filt = _data(rng, [1, 3, 61, 24]), _data(rng, [24, 1, 5, 5])
        options = {"padding": [2] * 4, "groups": 24, "input_layout": "nhwc"}
        op = "conv2d"
    elif kind == "stem":
        x, filt = _data(rng, [1, 20, 22, 3]), _data(rng, [16, 3, 3, 3])
        options = {"strides": [2, 2], "padding": [1] * 4, "input_layout": "nhwc"}
        op = "conv2d"
    else:
        x, filt = _data(rng, [1, 9, 11, 24]), _data(rng, [24, 1, 2, 2])
        options = {"strides": [2, 2], "input_layout": "nhwc"}
        op = "conv_transpose2d"
    bias = _data(rng, [filt.shape[0] if op == "conv2d" else filt.shape[1]])

    def activation(g, v):
        if act == "clamp":
            return g.clamp(v, min_value=-0.5, max_value=0.5)
        return getattr(g, act)(v)

    def conv(g, o):
        return getattr(g, op)(o["x"], o["w"], bias=o["b"], **options)

    constants = {"w": filt, "b": bias}
    fused = _run("cpu", lambda g, o: activation(g, conv(g, o)), {"x": x}, constants)
    plain = _run("cpu", conv, {"x": x}, constants)
    unfused = _run("cpu", lambda g, o: activation(g, o["y"]), {"y": plain})
    np.testing.assert_array_equal(fused, unfused)


@pytest.mark.skipif(rerun.nested(), reason="nested")
@rerun.each_cpu_setting
def test_other_isas_and_thread_counts(env):
    rerun.assert_file_passes(__file__, env)
