"""Conv, ConvTranspose, pools, and normalizations."""

import math

import numpy as np

from .fourier_conv import fourier_conv
from .pool_geometry import (
    auto_pad_attr,
    fill_padding_only,
    overhang,
    pool_geometry,
    trim_negative_pads,
)
from .registry import op
from .util import norm_axis, prod, window_attributes


def _spatial_1d_to_2d(n, x, rank):
    """1-D conv/pool input [N, C, L] runs as 2-D [N, C, 1, L]."""
    if rank == 3:
        s = n.b.operand_shape(x)
        return n.b.reshape(x, [s[0], s[1], 1, s[2]])
    return x


def _auto_pads(n, in_sizes, kernel, strides, dilations, auto_pad, out_sizes=None):
    pads_b, pads_e = [], []
    for i, size in enumerate(in_sizes):
        eff = (kernel[i] - 1) * dilations[i] + 1
        if auto_pad == "VALID":
            pads_b.append(0)
            pads_e.append(0)
            continue
        out = -(-size // strides[i])
        total = max(0, (out - 1) * strides[i] + eff - size)
        if auto_pad == "SAME_LOWER":
            pads_b.append(total - total // 2)
            pads_e.append(total // 2)
        else:
            pads_b.append(total // 2)
            pads_e.append(total - total // 2)
    return pads_b, pads_e


def _conv_geometry(n, spatial, kernel):
    k = len(kernel)
    strides = list(n.attr("strides", [1] * k))
    dilations = list(n.attr("dilations", [1] * k))
    auto_pad = auto_pad_attr(n)
    if auto_pad in ("", "NOTSET"):
        pads = list(n.attr("pads", [0] * (2 * k)))
        begin, end = pads[:k], pads[k:]
    else:
        begin, end = _auto_pads(n, spatial, kernel, strides, dilations, auto_pad)
    return strides, dilations, begin, end


def _webnn_padding(begin, end):
    out = []
    for b, e in zip(begin, end):
        out += [b, e]
    return out


@op("Conv")
def conv(n):
    bias = n.x(2) if n.has(2) else None
    if n.is_const(1) and n.has(0) and n.rank(0) in (3, 4):
        y = _fourier_bank_conv(n, bias)
        if y is not None:
            return y
    return conv_operands(n, n.x(0), n.x(1), bias)


def _fourier_bank_conv(n, bias):
    """A Conv whose constant filter is a windowed Fourier basis (an STFT written as Conv1d)
    in the radix-2 form (fourier_conv.py), or None."""
    spatial, weight = n.shape(0)[2:], n.c(1)
    if any(not isinstance(d, int) for d in spatial) or weight.ndim != len(spatial) + 2:
        return None
    kernel = list(n.attr("kernel_shape", list(weight.shape[2:])))
    if kernel != list(weight.shape[2:]):
        return None
    strides, dilations, begin, end = _conv_geometry(n, spatial, kernel)
    group = int(n.attr("group", 1))
    return fourier_conv(n, n.x(0), weight, strides, dilations, begin, end, group, bias)


def conv_operands(n, x, w, bias):
    """ONNX Conv (1-D or 2-D) on operands x, w, bias with the node's attributes."""
    bl = n.b
    xshape, wshape = bl.operand_shape(x), bl.operand_shape(w)
    rank = len(xshape)
    if rank == 5:
        return conv3d(n, x, w, bias)
    if rank not in (3, 4):
        n.fail(f"Conv of rank {rank} (only 1-D, 2-D and 3-D convolutions are supported)")
    for d in xshape[1:] + wshape:
        if not isinstance(d, int):
            n.fail("Conv with dynamic channel or spatial dimensions")
    x = _spatial_1d_to_2d(n, x, rank)
    w = _spatial_1d_to_2d(n, w, rank)
    kernel = list(n.attr("kernel_shape", wshape[2:]))
    spatial = xshape[2:]
    strides, dilations, begin, end = _conv_geometry(n, spatial, kernel)
    if rank == 3:
        strides, dilations = [1] + strides, [1] + dilations
        begin, end = [0] + begin, [0] + end
    y = bl.conv2d(
        x,
        w,
        strides=strides,
        dilations=dilations,
        padding=_webnn_padding(begin, end),
        groups=int(n.attr("group", 1)),
        bias=bias,
    )
    if rank == 3:
        s = bl.operand_shape(y)
        y = bl.reshape(y, [s[0], s[1], s[3]])
    return y


def conv_transpose3d(n):
    """3-D ConvTranspose over WebNN's 2-D one: the depth slices of x go into the batch, each
    kernel depth tap kd is a 2-D transposed convolution of them, whose results are spread to
    output depths id * stride + kd * dilation (interleaving zeros for the stride) and summed;
    then the depth padding is cropped and the bias added once."""
    bl = n.b
    batch, channels, depth, height, width = n.static_shape(0)
    wshape = n.static_shape(1)
    kernel = list(n.attr("kernel_shape", wshape[2:]))
    if kernel != list(wshape[2:]) or min(kernel) < 1:
        n.fail(f"kernel_shape {kernel} does not match the weight's spatial shape {wshape[2:]}")
    strides, dilations, begin, end, out_pad, sizes = _conv_transpose_geometry(
        n, [depth, height, width], kernel
    )
    group = int(n.attr("group", 1))
    out_channels = wshape[1] * group
    sd, dd = strides[0], dilations[0]
    full = sd * (depth - 1) + (kernel[0] - 1) * dd + 1 + out_pad[0]
    xb = bl.reshape(bl.transpose(n.x(0), [0, 2, 1, 3, 4]), [batch * depth, channels, height, width])
    w = n.x(1)
    span = (depth - 1) * sd + 1
    acc = None
    for kd in range(kernel[0]):
        wk = bl.reshape(
            bl.slice(w, [0, 0, kd, 0, 0], [wshape[0], wshape[1], 1, wshape[3], wshape[4]]),
            [wshape[0], wshape[1], wshape[3], wshape[4]],
        )
        yk = bl.conv_transpose2d(
            xb,
            wk,
            strides=strides[1:],
            dilations=dilations[1:],
            padding=_webnn_padding(begin[1:], end[1:]),
            output_sizes=sizes[1:],
            groups=group,
        )
        plane = out_channels * sizes[1] * sizes[2]
        if sd > 1:
            yk = bl.reshape(yk, [batch, depth, 1, plane])
            yk = bl.pad(yk, [0, 0, 0, 0], [0, 0, sd - 1, 0], mode="constant", value=0)
            yk = bl.slice(
                bl.reshape(yk, [batch, depth * sd, plane]), [0, 0, 0], [batch, span, plane]
            )
        else:
            yk = bl.reshape(yk, [batch, depth, plane])
        yk = bl.pad(yk, [0, kd * dd, 0], [0, full - kd * dd - span, 0], mode="constant", value=0)
        acc = yk if acc is None else bl.add(acc, yk)
    if begin[0] < 0 or begin[0] + sizes[0] > full:
        n.fail("ConvTranspose 3-D with negative depth padding is not supported")
    acc = bl.slice(acc, [0, begin[0], 0], [batch, sizes[0], plane])
    y = bl.reshape(acc, [batch, sizes[0], out_channels, sizes[1], sizes[2]])
    y = bl.transpose(y, [0, 2, 1, 3, 4])
    if n.has(2):
        y = bl.add(y, bl.reshape(n.x(2), [1, out_channels, 1, 1, 1]))
    return y


def _conv_transpose_geometry(n, spatial, kernel):
    """strides, dilations, begin / end pads, output padding and output sizes of an ONNX
    ConvTranspose (explicit pads, auto_pad, or output_shape)."""
    k = len(kernel)
    strides = list(n.attr("strides", [1] * k))
    dilations = list(n.attr("dilations", [1] * k))
    out_pad = list(n.attr("output_padding", [0] * k))
    auto_pad = auto_pad_attr(n)
    output_shape = n.attr("output_shape", None)
    eff = [(kernel[i] - 1) * dilations[i] + 1 for i in range(k)]
    if output_shape is not None:
        output_shape = list(output_shape)[-k:]
        begin, end = [], []
        for i in range(k):
            total = strides[i] * (spatial[i] - 1) + out_pad[i] + eff[i] - output_shape[i]
            total = max(total, 0)
            if auto_pad == "SAME_UPPER" or auto_pad in ("NOTSET", ""):
                begin.append(total // 2)
                end.append(total - total // 2)
            else:
                begin.append(total - total // 2)
                end.append(total // 2)
        if auto_pad in ("NOTSET", "") and n.attr("pads") is not None:
            pads = list(n.attr("pads"))
            begin, end = pads[:k], pads[k:]
    elif auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        begin, end = [], []
        for i in range(k):
            target = spatial[i] * strides[i]
            total = max(0, strides[i] * (spatial[i] - 1) + out_pad[i] + eff[i] - target)
            if auto_pad == "SAME_UPPER":
                begin.append(total // 2)
                end.append(total - total // 2)
            else:
                begin.append(total - total // 2)
                end.append(total // 2)
    elif auto_pad == "VALID":
        begin, end = [0] * k, [0] * k
    else:
        pads = list(n.attr("pads", [0] * (2 * k)))
        begin, end = pads[:k], pads[k:]
    sizes = [
        strides[i] * (spatial[i] - 1) + out_pad[i] + eff[i] - begin[i] - end[i] for i in range(k)
    ]
    if output_shape is not None:
        sizes = output_shape
    return strides, dilations, begin, end, out_pad, sizes


@op("ConvTranspose")
def conv_transpose(n):
    rank = n.rank(0)
    if rank == 5:
        return conv_transpose3d(n)
    if rank not in (3, 4):
        n.fail(f"ConvTranspose of rank {rank} (only 1-D, 2-D and 3-D are supported)")
    x = _spatial_1d_to_2d(n, n.x(0), rank)
    w = _spatial_1d_to_2d(n, n.x(1), rank)
    wshape = n.static_shape(1)
    kernel = list(n.attr("kernel_shape", wshape[2:]))
    spatial = n.static_shape(0)[2:]
    strides, dilations, begin, end, out_pad, sizes = _conv_transpose_geometry(n, spatial, kernel)
    group = int(n.attr("group", 1))
    if rank == 3:
        strides, dilations = [1] + strides, [1] + dilations
        begin, end, out_pad, sizes = [0] + begin, [0] + end, [0] + out_pad, [1] + sizes
    bias = n.x(2) if n.has(2) else None
    from .depthwise_transpose import depthwise_transpose_as_conv

    y = depthwise_transpose_as_conv(
        n, x, wshape, strides, dilations, begin, end, sizes, group, bias
    )
    if y is not None:
        if rank == 3:
            s = n.b.operand_shape(y)
            y = n.b.reshape(y, [s[0], s[1], s[3]])
        return y
    y = n.b.conv_transpose2d(
        x,
        w,
        strides=strides,
        dilations=dilations,
        padding=_webnn_padding(begin, end),
        output_sizes=sizes,
        groups=group,
        bias=bias,
    )
    if rank == 3:
        s = n.b.operand_shape(y)
        y = n.b.reshape(y, [s[0], s[1], s[3]])
    return y


def _pool_out_size(size, k, s, d, b, e, ceil_mode):
    eff = (k - 1) * d + 1
    span = size + b + e - eff
    if ceil_mode:
        out = -(-span // s) + 1
        # The last window must start inside the input or the left padding (ONNX/PyTorch).
        if (out - 1) * s >= size + b:
            out -= 1
    else:
        # Truncated toward zero, as ONNX Runtime's integer arithmetic does: a window longer
        # than the padded input by less than a stride still gives one output, over the
        # elements that exist (a 1-row feature map pooled 2x2 in the PP-OCR classifier fed a
        # 32-pixel-high line); floor would give none, which WebNN cannot build.
        out = (span // s if span >= 0 else -(-span // s)) + 1
    return out


def _pool(kind):
    def convert(n):
        rank = n.rank(0)
        if rank == 5:
            return pool3d(n, kind)
        if rank not in (3, 4):
            n.fail(f"{n.node.op_type} of rank {rank} (only 1-D, 2-D and 3-D pools are supported)")
        want_indices = len(n.node.output) > 1 and bool(n.node.output[1])
        shape = n.static_shape(0)
        spatial = shape[2:]
        geometry = pool_geometry(n, spatial, shape[0] * shape[1])
        empty = geometry.padding_only(spatial)
        x, spatial, dropped = trim_negative_pads(n, n.x(0), geometry, spatial, 2)
        x = _spatial_1d_to_2d(n, x, rank)
        kernel, strides, dilations = geometry.kernel, geometry.strides, geometry.dilations
        begin, end, outs = geometry.begin, list(geometry.end), geometry.outs
        # Extra end padding so that every output window exists in WebNN's floor arithmetic.
        extra = overhang(geometry, spatial)
        bl = n.b
        if kind == "avg" and n.attr("count_include_pad", 0) and any(begin + end):
            # WebNN averages over the valid elements only: the declared pads become zeros of
            # the input; the ceil-mode overhang past them stays padding, not counted, as in
            # ONNX Runtime.
            lead = [0, 0] + ([0] if rank == 3 else [])
            x = bl.pad(x, lead + begin, lead + end, mode="constant", value=0)
            begin, end = [0] * len(begin), [0] * len(end)
        end = [e + o for e, o in zip(end, extra)]
        if rank == 3:
            kernel, strides, dilations = [1] + kernel, [1] + strides, [1] + dilations
            begin, end, outs = [0] + begin, [0] + end, [1] + outs
        padding = _webnn_padding(begin, end)
        if kind == "max":
            y = bl.max_pool2d(x, kernel, strides, dilations, padding, output_sizes=outs)
            if want_indices:
                indices = _max_pool_indices(
                    n, x, y, kernel, strides, dilations, padding, outs,
                    ([0] if rank == 3 else []) + dropped, shape[2:],
                )  # fmt: skip
                if rank == 3:
                    s = bl.operand_shape(indices)
                    indices = bl.reshape(indices, [s[0], s[1], s[3]])
        elif kind == "avg":
            y = bl.average_pool2d(x, kernel, strides, dilations, padding, output_sizes=outs)
        else:
            p = int(n.attr("p", 2))
            if p == 2:
                y = bl.l2_pool2d(x, kernel, strides, dilations, padding, output_sizes=outs)
            else:
                # (sum |x|^p over the window)^(1/p): zero-pad, average, times the window size
                dtype = bl.operand_data_type(x)
                powered = bl.pow(bl.abs(x), n.const(float(p), dtype))
                pb, pe = padding[0::2], padding[1::2]
                powered = bl.pad(powered, [0, 0] + pb, [0, 0] + pe, mode="constant", value=0)
                mean = bl.average_pool2d(powered, kernel, strides, dilations, [0, 0, 0, 0],
                                         output_sizes=outs)  # fmt: skip
                area = n.const(float(kernel[0] * kernel[1]), dtype)
                y = bl.pow(bl.mul(mean, area), n.const(1.0 / p, dtype))
        if rank == 3:
            s = bl.operand_shape(y)
            y = bl.reshape(y, [s[0], s[1], s[3]])
        y = fill_padding_only(n, y, empty, kind, bl.operand_data_type(y))
        return [y, indices] if kind == "max" and want_indices else y

    return convert


# MaxPool's Indices output is unrolled over the kernel taps (a few ops each).
MAX_INDEX_TAPS = 1 << 14


def _check_index_taps(n, kernel):
    if prod(kernel) > MAX_INDEX_TAPS:
        n.fail(f"MaxPool Indices of a {kernel} kernel (unrolled per tap; at most "
               f"{MAX_INDEX_TAPS} taps)")  # fmt: skip


def _max_pool_indices(n, x, y, kernel, strides, dilations, padding, outs, dropped, full):
    """MaxPool's Indices output: the flat index into x of each window's first maximum (row-major
    scan, as ONNX Runtime), storage_order 1 counting w before h. Each kernel tap is a strided
    slice of the input padded with -inf; taps are visited last to first, each overwriting the
    index where it equals the maximum, so the first matching tap wins. x may be the node's
    input with `dropped` leading elements of each axis sliced off (trim_negative_pads);
    indices count in the node's input of spatial sizes `full`."""
    bl = n.b
    batch, channels = n.b.operand_shape(x)[:2]
    height, width = ([1] + list(full))[-2:]
    off_h, off_w = ([0] + list(dropped))[-2:]
    pt, pb, pl, pr = padding
    oh, ow = outs
    xp = bl.pad(x, [0, 0, pt, pl], [0, 0, pb, pr], mode="constant", value=float("-inf"))
    column_major = int(n.attr("storage_order", 0)) == 1
    total = batch * channels * height * width
    if total >= 2**31:
        n.fail("MaxPool Indices for an input of 2**31 elements or more")
    _check_index_taps(n, kernel)
    plane = np.arange(batch * channels, dtype=np.int32).reshape(batch, channels, 1, 1)
    plane_offset = n.importer.operand(plane * np.int32(height * width))
    rows = np.arange(oh, dtype=np.int32).reshape(oh, 1) * strides[0]
    cols = np.arange(ow, dtype=np.int32).reshape(1, ow) * strides[1]
    result = None
    taps = [(i, j) for i in range(kernel[0]) for j in range(kernel[1])]
    for i, j in reversed(taps):
        h_in = rows + i * dilations[0] - pt + off_h
        w_in = cols + j * dilations[1] - pl + off_w
        flat = w_in * height + h_in if column_major else h_in * width + w_in
        idx = bl.add(plane_offset, n.importer.operand(flat.astype(np.int32).reshape(1, 1, oh, ow)))
        x_t = bl.slice(
            xp,
            [0, 0, i * dilations[0], j * dilations[1]],
            [batch, channels, (oh - 1) * strides[0] + 1, (ow - 1) * strides[1] + 1],
            strides=[1, 1, strides[0], strides[1]],
        )
        hit = bl.equal(x_t, y)
        result = idx if result is None else bl.where(hit, idx, result)
    return bl.cast(result, "int64")


op("MaxPool")(_pool("max"))
op("AveragePool")(_pool("avg"))
op("LpPool")(_pool("lp"))


def _global(method):
    def convert(n):
        rank = n.rank(0)
        x = n.x(0)
        if rank == 4 and method in ("global_average_pool", "global_max_pool"):
            return getattr(n.b, method)(x)
        axes = list(range(2, rank))
        if method == "global_average_pool":
            return n.b.reduce_mean(x, axes, True)
        if method == "global_max_pool":
            return n.b.reduce_max(x, axes, True)
        p = int(n.attr("p", 2))
        if p == 2:
            return n.b.reduce_l2(x, axes, True)
        if p == 1:
            return n.b.reduce_l1(x, axes, True)
        n.fail(f"GlobalLpPool with p={p}")

    return convert


op("GlobalAveragePool")(_global("global_average_pool"))
op("GlobalMaxPool")(_global("global_max_pool"))
op("GlobalLpPool")(_global("lp"))


@op("BatchNormalization")
def batch_norm(n):
    if n.attr("training_mode", 0):
        return _batch_norm_training(n)
    if len(n.node.output) > 1 and any(n.node.output[1:]):
        n.fail("the running-statistics outputs exist only with training_mode=1")
    eps = float(n.attr("epsilon", 1e-5))
    x = n.x(0)
    rank = n.rank(0)
    if rank == 1:
        n.fail("BatchNormalization of a 1-D input")
    return n.b.batch_normalization(
        x, n.x(3), n.x(4), scale=n.x(1), bias=n.x(2), epsilon=eps, axis=1
    )


def _batch_norm_training(n):
    """training_mode=1: normalize with the batch's own statistics and output the updated
    running mean and variance (momentum-weighted; the batch variance is the population one)."""
    bl = n.b
    x = n.x(0)
    rank = n.rank(0)
    dtype = n.dtype(0)
    axes = [0] + list(range(2, rank))
    eps = float(n.attr("epsilon", 1e-5))
    momentum = float(n.attr("momentum", 0.9))
    mean = bl.reduce_mean(x, axes, True)
    centered = bl.sub(x, mean)
    var = bl.reduce_mean(bl.mul(centered, centered), axes, True)
    pshape = [1, n.static_shape(0)[1]] + [1] * (rank - 2)
    y = bl.div(centered, bl.sqrt(bl.add(var, n.const(eps, dtype))))
    y = bl.add(bl.mul(y, bl.reshape(n.x(1), pshape)), bl.reshape(n.x(2), pshape))
    channels = [n.static_shape(0)[1]]
    m, one_minus = n.const(momentum, dtype), n.const(1.0 - momentum, dtype)
    run_mean = bl.add(bl.mul(n.x(3), m), bl.mul(bl.reshape(mean, channels), one_minus))
    run_var = bl.add(bl.mul(n.x(4), m), bl.mul(bl.reshape(var, channels), one_minus))
    return [y, run_mean, run_var]


@op("InstanceNormalization")
def instance_norm(n):
    eps = float(n.attr("epsilon", 1e-5))
    rank = n.rank(0)
    x = n.x(0)
    if rank == 4:
        return n.b.instance_normalization(x, n.x(1), n.x(2), epsilon=eps)
    # other ranks: normalize over the spatial axes, then scale/bias per channel
    bl = n.b
    axes = list(range(2, rank))
    y = bl.layer_normalization(x, None, None, epsilon=eps, axes=axes)
    shape = [1, n.static_shape(0)[1]] + [1] * (rank - 2)
    return bl.add(bl.mul(y, bl.reshape(n.x(1), shape)), bl.reshape(n.x(2), shape))


def _layer_norm_attrs(n):
    """The first normalized axis, the axes (it to the last) and epsilon of LayerNormalization
    and RMSNormalization."""
    rank = n.rank(0)
    axis = norm_axis(n, int(n.attr("axis", -1)), rank)
    return axis, list(range(axis, rank)), float(n.attr("epsilon", 1e-5))


@op("LayerNormalization")
def layer_norm(n):
    if len(n.node.output) > 1 and any(n.node.output[1:]):
        return _layer_norm_with_statistics(n)
    axis, axes, eps = _layer_norm_attrs(n)
    bl = n.b
    x = n.x(0)
    norm_shape = n.shape(0)[axis:]
    scale, bias = n.x(1), n.x(2) if n.has(2) else None
    if n.shape(1) != norm_shape:
        scale = bl.expand(
            bl.reshape(scale, [1] * (len(norm_shape) - n.rank(1)) + n.shape(1)), norm_shape
        )
    if bias is not None and n.shape(2) != norm_shape:
        bias = bl.expand(
            bl.reshape(bias, [1] * (len(norm_shape) - n.rank(2)) + n.shape(2)), norm_shape
        )
    return bl.layer_normalization(x, scale, bias, epsilon=eps, axes=axes)


def _layer_norm_with_statistics(n):
    """LayerNormalization with its Mean and InvStdDev outputs, decomposed."""
    _, axes, eps = _layer_norm_attrs(n)
    bl = n.b
    x = n.x(0)
    dtype = n.dtype(0)
    mean = bl.reduce_mean(x, axes, True)
    centered = bl.sub(x, mean)
    var = bl.reduce_mean(bl.mul(centered, centered), axes, True)
    inv = bl.reciprocal(bl.sqrt(bl.add(var, n.const(eps, dtype))))
    y = bl.mul(bl.mul(centered, inv), n.x(1))
    if n.has(2):
        y = bl.add(y, n.x(2))
    return [y, mean, inv]


@op("RMSNormalization")
def rms_norm(n):
    _, axes, eps = _layer_norm_attrs(n)
    bl = n.b
    x = n.x(0)
    dtype = n.dtype(0)
    ms = bl.reduce_mean(bl.mul(x, x), axes, True)
    y = bl.div(x, bl.sqrt(bl.add(ms, n.const(eps, dtype))))
    return bl.mul(y, n.x(1))


@op("GroupNormalization")
def group_norm(n):
    shape = n.static_shape(0)
    N, C = shape[0], shape[1]
    G = int(n.attr("num_groups"))
    eps = float(n.attr("epsilon", 1e-5))
    bl = n.b
    x = bl.reshape(n.x(0), [N, G, C // G * prod(shape[2:])])
    y = bl.layer_normalization(x, None, None, epsilon=eps, axes=[2])
    y = bl.reshape(y, shape)
    pshape = [1, C] + [1] * (len(shape) - 2)
    scale, bias = n.x(1), n.x(2)
    if n.opset < 21 and n.static_shape(1)[0] == G and G != C:
        # opset 18: scale and bias are per group
        scale = bl.reshape(bl.expand(bl.reshape(scale, [G, 1]), [G, C // G]), [C])
        bias = bl.reshape(bl.expand(bl.reshape(bias, [G, 1]), [G, C // G]), [C])
    return bl.add(bl.mul(y, bl.reshape(scale, pshape)), bl.reshape(bias, pshape))


@op("LpNormalization")
def lp_norm(n):
    rank = n.rank(0)
    axis = norm_axis(n, int(n.attr("axis", -1)), rank)
    p = int(n.attr("p", 2))
    bl = n.b
    x = n.x(0)
    if p == 2:
        norm = bl.reduce_l2(x, [axis], True)
    elif p == 1:
        norm = bl.reduce_l1(x, [axis], True)
    else:
        n.fail(f"LpNormalization with p={p}")
    zero = n.const(0, n.dtype(0))
    return bl.where(bl.equal(norm, zero), zero, bl.div(x, norm))


@op("MeanVarianceNormalization")
def mvn(n):
    axes = list(n.attr("axes", [0, 2, 3]))
    rank = n.rank(0)
    axes = [a + rank if a < 0 else a for a in axes]
    return n.b.layer_normalization(n.x(0), None, None, epsilon=1e-9, axes=sorted(axes))


@op("LRN")
def lrn(n):
    size = int(n.attr("size"))
    alpha, beta, bias = (
        float(n.attr("alpha", 1e-4)),
        float(n.attr("beta", 0.75)),
        float(n.attr("bias", 1.0)),
    )
    shape = n.static_shape(0)
    N, C = shape[0], shape[1]
    rest = prod(shape[2:])
    bl = n.b
    x = n.x(0)
    dtype = n.dtype(0)
    sq = bl.reshape(bl.mul(x, x), [N, 1, C, rest])
    lo, hi = (size - 1) // 2, math.ceil((size - 1) / 2)
    padded = bl.pad(sq, [0, 0, lo, 0], [0, 0, hi, 0], mode="constant", value=0)
    s = bl.average_pool2d(padded, [size, 1], [1, 1])
    s = bl.reshape(s, shape)  # mean over the window = sum / size
    base = bl.add(bl.mul(s, n.const(alpha, dtype)), n.const(bias, dtype))
    return bl.div(x, bl.pow(base, n.const(beta, dtype)))


# ---- 3-D convolution and pooling, decomposed over the depth axis into 2-D operations ----


def _to_depth_batches(bl, x):
    """[N, C, D, H, W] -> ([N, D, C, H, W] operand, shape)."""
    return bl.transpose(x, [0, 2, 1, 3, 4])


def conv3d(n, x, w, bias):
    bl = n.b
    N, C, D, H, W = bl.operand_shape(x)
    M, Cg, KD, KH, KW = bl.operand_shape(w)
    kernel = [KD, KH, KW]
    strides, dilations, begin, end = _conv_geometry(n, [D, H, W], kernel)
    if begin[0] or end[0]:
        x = bl.pad(x, [0, 0, begin[0], 0, 0], [0, 0, end[0], 0, 0], mode="constant", value=0)
    Dp = D + begin[0] + end[0]
    Do = (Dp - ((KD - 1) * dilations[0] + 1)) // strides[0] + 1
    xd = _to_depth_batches(bl, x)  # [N, Dp, C, H, W]
    out = None
    for k in range(KD):
        start = k * dilations[0]
        extent = (Do - 1) * strides[0] + 1
        part = bl.slice(xd, [0, start, 0, 0, 0], [N, extent, C, H, W], [1, strides[0], 1, 1, 1])
        part = bl.reshape(part, [N * Do, C, H, W])
        wk = bl.reshape(bl.slice(w, [0, 0, k, 0, 0], [M, Cg, 1, KH, KW]), [M, Cg, KH, KW])
        y = bl.conv2d(part, wk, strides=strides[1:], dilations=dilations[1:],
                      padding=[begin[1], end[1], begin[2], end[2]],
                      groups=int(n.attr("group", 1)))  # fmt: skip
        out = y if out is None else bl.add(out, y)
    _, _, Ho, Wo = bl.operand_shape(out)
    out = bl.transpose(bl.reshape(out, [N, Do, M, Ho, Wo]), [0, 2, 1, 3, 4])
    if bias is not None:
        out = bl.add(out, bl.reshape(bias, [1, M, 1, 1, 1]))
    return out


MAX_DEPTH_SLICES = 100_000  # slices of an unrolled 3-D pool (output frames x depth taps)


def pool3d(n, kind):
    bl = n.b
    N, C, D, H, W = n.static_shape(0)
    geometry = pool_geometry(n, [D, H, W], N * C)
    kernel, strides, dilations, outs = (
        geometry.kernel, geometry.strides, geometry.dilations, geometry.outs
    )  # fmt: skip
    # The depth axis is unrolled below (a slice per output frame and tap): a kernel_shape of
    # -2^63 made that loop endless (found by the fuzzer).
    if outs[0] * kernel[0] > MAX_DEPTH_SLICES:
        n.fail(f"output sizes {outs} with a depth kernel of {kernel[0]} are not supported")
    empty = geometry.padding_only([D, H, W])
    want_indices = kind == "max" and len(n.node.output) > 1 and bool(n.node.output[1])
    source, source_begin = n.x(0), list(geometry.begin)
    x, sizes, _ = trim_negative_pads(n, n.x(0), geometry, [D, H, W], 2)
    begin, end = geometry.begin, list(geometry.end)
    extra = overhang(geometry, sizes)
    dtype = n.dtype(0)
    if kind == "lp":
        # (sum over the window of |x|^p)^(1/p): zero padding adds nothing, so pad explicitly
        # (also the ceil-mode overhang) and sum plain windows.
        p = int(n.attr("p", 2))
        x = bl.mul(x, x) if p == 2 else bl.pow(bl.abs(x), n.const(float(p), dtype))
        x = bl.pad(x, [0, 0] + begin, [0, 0] + [e + o for e, o in zip(end, extra)],
                   mode="constant", value=0)  # fmt: skip
        begin, end, extra = [0, 0, 0], [0, 0, 0], [0, 0, 0]
    elif kind == "avg" and n.attr("count_include_pad", 0) and any(begin + end):
        # The declared pads count: zeros of the input. The ceil-mode overhang past them does
        # not (it stays padding below, as in ONNX Runtime).
        x = bl.pad(x, [0, 0] + begin, [0, 0] + end, mode="constant", value=0)
        begin, end = [0, 0, 0], [0, 0, 0]
    N, C, D, H, W = bl.operand_shape(x)
    # 2-D pooling of every depth slice over H, W
    end = [e + o for e, o in zip(end, extra)]
    slices = bl.reshape(_to_depth_batches(bl, x), [N * D, C, H, W])
    padding = [begin[1], end[1], begin[2], end[2]]
    pool = bl.max_pool2d if kind == "max" else bl.average_pool2d
    p2 = pool(slices, kernel[1:], strides[1:], dilations[1:], padding, output_sizes=outs[1:])
    if kind == "lp":
        p2 = bl.mul(p2, n.const(float(kernel[1] * kernel[2]), dtype))
    p2 = bl.reshape(p2, [N, D, C, outs[1], outs[2]])
    frames = []
    for zo in range(outs[0]):
        taps = [zo * strides[0] - begin[0] + k * dilations[0] for k in range(kernel[0])]
        taps = [z for z in taps if 0 <= z < D]
        acc = None
        for z in taps:
            part = bl.slice(p2, [0, z, 0, 0, 0], [N, 1, C, outs[1], outs[2]])
            acc = (
                part if acc is None else (bl.max(acc, part) if kind == "max" else bl.add(acc, part))
            )
        if acc is None:
            # Only padding in depth: a placeholder, replaced by fill_padding_only below.
            acc = bl.expand(n.const(0, dtype), [N, 1, C, outs[1], outs[2]])
        elif kind == "avg" and len(taps) > 1:
            acc = bl.div(acc, n.const(float(len(taps)), dtype))
        frames.append(acc)
    y = bl.concat(frames, 1) if len(frames) > 1 else frames[0]
    y = bl.transpose(y, [0, 2, 1, 3, 4])
    if kind == "lp":
        y = bl.sqrt(y) if p == 2 else bl.pow(y, n.const(1.0 / p, dtype))
    y = fill_padding_only(n, y, empty, kind, dtype)
    if want_indices:
        return [y, _max_pool3d_indices(n, source, y, kernel, strides, dilations, source_begin,
                                       outs)]  # fmt: skip
    return y


def _max_pool3d_indices(n, x, y, kernel, strides, dilations, begin, outs):
    """The Indices output of a 3-D MaxPool, as _max_pool_indices for 2-D: every kernel tap is a
    strided slice of x padded with -inf, visited last to first so that the first maximum in
    row-major order wins; storage_order 1 counts the last axis slowest."""
    bl = n.b
    batch, channels, *spatial = bl.operand_shape(x)
    total = batch * channels * int(np.prod(spatial))
    if total >= 2**31:
        n.fail("MaxPool Indices for an input of 2**31 elements or more")
    _check_index_taps(n, kernel)
    # Negative (SAME_*) begin pads: the elements no window reads are sliced off first.
    lead = [max(0, -b) for b in begin]
    pads = [max(0, b) for b in begin]
    if any(lead):
        x = bl.slice(x, [0, 0] + lead, [batch, channels] + [s - a for s, a in zip(spatial, lead)])
    ends = [
        max(
            0,
            (outs[i] - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1
            - (spatial[i] - lead[i]) - pads[i],
        )
        for i in range(3)
    ]  # fmt: skip
    xp = bl.pad(x, [0, 0] + pads, [0, 0] + ends, mode="constant", value=float("-inf"))
    column_major = int(n.attr("storage_order", 0)) == 1
    volume = int(np.prod(spatial))
    plane = np.arange(batch * channels, dtype=np.int32).reshape(batch, channels, 1, 1, 1)
    plane_offset = n.importer.operand(plane * np.int32(volume))
    grids = np.meshgrid(*[np.arange(o) * s for o, s in zip(outs, strides)], indexing="ij")
    if column_major:
        weights = [1, spatial[0], spatial[0] * spatial[1]]
    else:
        weights = [spatial[1] * spatial[2], spatial[2], 1]
    result = None
    taps = [(a, b, c) for a in range(kernel[0]) for b in range(kernel[1]) for c in range(kernel[2])]
    for tap in reversed(taps):
        flat = sum((g + t * d - b) * w
                   for g, t, d, b, w in zip(grids, tap, dilations, begin, weights))  # fmt: skip
        idx = bl.add(plane_offset, n.importer.operand(flat.astype(np.int32).reshape([1, 1] + outs)))
        x_t = bl.slice(
            xp,
            [0, 0] + [t * d for t, d in zip(tap, dilations)],
            [batch, channels] + [(o - 1) * s + 1 for o, s in zip(outs, strides)],
            strides=[1, 1] + list(strides),
        )
        hit = bl.equal(x_t, y)
        result = idx if result is None else bl.where(hit, idx, result)
    return bl.cast(result, "int64")


@op("MaxUnpool")
def max_unpool(n):
    """Zeros of the unpooled shape with X's values scattered to Indices (MaxPool's flat indices
    into the whole output tensor). The shape is output_shape (input 2, needed at import) or
    (in - 1) * stride + kernel - pads per spatial axis. Windows that picked the same input
    element scatter the same value twice, so replacing is exact."""
    bl = n.b
    shape = n.static_shape(0)
    rank = len(shape)
    k = rank - 2
    kernel = [int(v) for v in n.attr("kernel_shape")]
    strides = [int(v) for v in n.attr("strides", [1] * k)]
    pads = [int(v) for v in n.attr("pads", [0] * (2 * k))]
    if n.has(2):
        out_shape = [int(v) for v in n.c(2, what="output_shape").reshape(-1)]
        if out_shape[:2] != shape[:2] or len(out_shape) != rank:
            n.fail(f"output_shape {out_shape} does not fit an input of shape {shape}")
    else:
        out_shape = shape[:2] + [
            (shape[2 + i] - 1) * strides[i] + kernel[i] - pads[i] - pads[k + i] for i in range(k)
        ]
    total = int(np.prod(out_shape))
    if total >= 2**31:
        n.fail("MaxUnpool outputs of 2**31 elements or more")
    count = int(np.prod(shape))
    index = bl.reshape(bl.cast(n.x(1), "int32"), [count])
    values = bl.reshape(n.x(0), [count])
    # A scalar zero expanded in the graph: a constant of the output's size would be allocated
    # here for any declared shape (found by review: 4 GiB for 2^30 declared elements).
    zeros = bl.expand(n.const(0, n.dtype(0)), [total])
    return bl.reshape(bl.scatter_elements(zeros, index, values, 0), out_shape)


# The one-hot filters and the depth routing matrix of Col2Im are constants the importer makes.
MAX_COL2IM_CONSTANT = 1 << 24


@op("Col2Im")
def col2im(n):
    """Blocks [N, C * prod(block), L] summed back into an image [N, C, *image] (1-D, 2-D, 3-D):
    in 2-D a grouped transposed convolution whose filter routes each of a channel's kh * kw
    block positions to its kernel tap (one-hot), with the node's strides, dilations and pads;
    1-D is 2-D of height 1; 3-D sums the 2-D images of every (depth tap, depth block) pair into
    their depth row with a 0/1 matrix product (WebNN has no 3-D transposed convolution)."""
    image = [int(v) for v in n.c(1, what="image_shape").reshape(-1)]
    block = [int(v) for v in n.c(2, what="block_shape").reshape(-1)]
    k = len(image)
    if k not in (1, 2, 3) or len(block) != k:
        n.fail(f"Col2Im of {k} spatial dimensions and a block of {len(block)} (1-D to 3-D)")
    strides, dilations, pads = window_attributes(n, k)
    if min(image + block) < 1:
        n.fail(f"image {image} and block {block} must be positive")
    batch, ck, length = n.static_shape(0)
    taps = int(np.prod(block))
    if ck % taps:
        n.fail(f"input channels {ck} are not a multiple of the block size {taps}")
    channels = ck // taps
    blocks = [
        (image[i] + pads[i] + pads[k + i] - dilations[i] * (block[i] - 1) - 1) // strides[i] + 1
        for i in range(k)
    ]
    if min(blocks) < 1 or int(np.prod(blocks)) != length:
        n.fail(f"{length} blocks do not tile an image of {image} with these blocks and strides")
    if ck * taps > MAX_COL2IM_CONSTANT or (k == 3 and image[0] * block[0] * blocks[0]
                                            > MAX_COL2IM_CONSTANT):  # fmt: skip
        n.fail(f"{ck} channels of blocks {block} need too large a routing constant")
    if k == 1:
        y = _col2im_2d(n, n.x(0), [1] + image, [1] + block, [1] + blocks, [1] + strides,
                       [1] + dilations, [0, pads[0], 0, pads[1]])  # fmt: skip
        return n.b.reshape(y, [batch, channels] + image)
    if k == 2:
        return _col2im_2d(n, n.x(0), image, block, blocks, strides, dilations, pads)
    return _col2im_3d(n, image, block, blocks, strides, dilations, pads)


def _col2im_2d(n, x, image, block, blocks, strides, dilations, pads):
    """2-D Col2Im of x [batch, C * kh * kw, Lh * Lw]; pads [top, left, bottom, right]."""
    bl = n.b
    batch, ck = bl.operand_shape(x)[:2]
    taps = block[0] * block[1]
    one_hot = np.zeros([ck, 1] + block, np.float32)
    for t in range(taps):
        one_hot[t::taps, 0, t // block[1], t % block[1]] = 1.0
    return bl.conv_transpose2d(
        bl.reshape(x, [batch, ck] + blocks),
        n.importer.operand(one_hot.astype(n.np_dtype(0))),
        strides=strides,
        dilations=dilations,
        padding=[pads[0], pads[2], pads[1], pads[3]],
        output_sizes=image,
        groups=ck // taps,
    )


def _col2im_3d(n, image, block, blocks, strides, dilations, pads):
    """3-D Col2Im: the (depth tap, depth block) pairs become the batch of a 2-D Col2Im, whose
    images a 0/1 matrix then adds into the depth rows they land on."""
    bl = n.b
    batch, ck, _ = n.static_shape(0)
    (D, H, W), (kd, kh, kw), (ld, lh, lw) = image, block, blocks
    channels = ck // (kd * kh * kw)
    x = bl.reshape(n.x(0), [batch, channels, kd, kh * kw, ld, lh * lw])
    x = bl.transpose(x, [0, 2, 4, 1, 3, 5])  # [N, kd, ld, C, kh * kw, lh * lw]
    x = bl.reshape(x, [batch * kd * ld, channels * kh * kw, lh * lw])
    planes = _col2im_2d(n, x, [H, W], [kh, kw], [lh, lw], strides[1:], dilations[1:],
                        [pads[1], pads[2], pads[4], pads[5]])  # fmt: skip
    planes = bl.reshape(planes, [batch, kd * ld, channels * H * W])
    # Depth row of depth tap i and depth block j (row-major pairs, as the batch above).
    row = (np.arange(ld) * strides[0] + np.arange(kd)[:, None] * dilations[0] - pads[0]).ravel()
    route = (np.arange(D)[:, None] == row[None, :]).astype(np.float32).reshape(1, D, kd * ld)
    y = bl.matmul(n.importer.operand(route.astype(n.np_dtype(0))), planes)  # [N, D, C * H * W]
    y = bl.reshape(y, [batch, D, channels, H, W])
    return bl.transpose(y, [0, 2, 1, 3, 4])
