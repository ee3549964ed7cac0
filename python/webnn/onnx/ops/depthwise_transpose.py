"""Depthwise ConvTranspose (group = input channels, one output channel each) as a depthwise
convolution over the input with zeros interleaved for the stride.

A transposed convolution scatters every input value times the kernel to stride-spaced output
positions; with one channel per group that is the correlation of the zero-upsampled input
(x[i] at i * stride, zeros between) with the flipped kernel, padded by kernel - 1 - pad. The
same products summed in another order: float32 rounding only. The cpu backend's
convTranspose2d runs the depthwise form at ~0.1 GFLOP/s (DeepFilterNet3's ERB decoder: group
64, kernel 1x3, stride 1x2, 10.9 of its 12 ms), its depthwise conv2d several times faster.
"""

import numpy as np


def depthwise_transpose_as_conv(n, x, wshape, strides, dilations, begin, end, sizes, group, bias):
    """The ConvTranspose of 4-D x by the constant weight n.c(1) ([C, 1, kh, kw], maybe reshaped
    from 1-D) as conv2d, or None when it is not that form."""
    bl = n.b
    shape = bl.operand_shape(x)
    if len(shape) != 4 or any(not isinstance(d, int) for d in shape) or not n.is_const(1):
        return None
    _, channels, height, width = shape
    if group != channels or group < 2 or wshape[0] != channels or wshape[1] != 1:
        return None
    if any(d != 1 for d in dilations) or n.dtype(0) != "float32":
        return None
    w = n.c(1).astype(np.float32)
    if w.ndim == 3:  # a 1-D ConvTranspose's weight [C, 1, k]
        w = w.reshape(channels, 1, 1, -1)
    kernel = list(w.shape[2:])
    pads = []
    for axis in range(2):
        inner = strides[axis] * ([height, width][axis] - 1) + 1
        left = kernel[axis] - 1 - begin[axis]
        right = sizes[axis] + kernel[axis] - 1 - inner - left
        if left < 0 or right < 0:
            return None
        pads += [left, right]
    up = x
    for axis, (size, stride) in enumerate(zip([height, width], strides)):
        if stride == 1:
            continue
        current = bl.operand_shape(up)
        rank_axis = 2 + axis
        grown = current[: rank_axis + 1] + [1] + current[rank_axis + 1 :]
        zeros_after = [0] * len(grown)
        zeros_after[rank_axis + 1] = stride - 1
        spread = bl.pad(bl.reshape(up, grown), [0] * len(grown), zeros_after, mode="constant",
                        value=0.0)  # fmt: skip
        flat = list(current)
        flat[rank_axis] = size * stride
        spread = bl.reshape(spread, flat)
        ends = list(flat)
        ends[rank_axis] = stride * (size - 1) + 1
        up = bl.slice(spread, [0, 0, 0, 0], ends)
    flipped = np.ascontiguousarray(w[:, :, ::-1, ::-1])
    return bl.conv2d(up, n.importer.operand(flipped), padding=pads, groups=channels, bias=bias)
