"""Window geometry of the ONNX pools (MaxPool, AveragePool, LpPool): pads and output sizes
per spatial axis for every auto_pad and ceil_mode, as ONNX Runtime computes them, with the
dilated window for SAME_* as the ONNX specification says (docs/onnx.md, "Pools and auto_pad").

ONNX Runtime's arithmetic (pool_attributes.h), which real models depend on:
  numerator = size + pad_begin + pad_end - (kernel - 1) * dilation - 1
  floor mode: numerator / stride + 1 with C++ division, truncated toward zero, so a window
      longer than the padded input by less than a stride still gives one output over the
      elements that exist (VALID included);
  ceil mode: ceil(numerator / stride) + 1, minus one when the last window would start past
      the input and its begin padding (VALID included: ceil_mode applies to VALID too);
  SAME_*: out = ceil(size / stride) and pads of (out - 1) * stride + window - size in total,
      split with C++ division (SAME_UPPER: total / 2 at the begin, SAME_LOWER: (total + 1) / 2),
      so that a stride longer than the window gives negative pads (windows skip elements).
ONNX Runtime takes the undilated kernel for the SAME_* pads (the output then is not
ceil(size / stride)); the specification and onnx's shape inference take the dilated window,
and so does this module.
"""

from dataclasses import dataclass

import numpy as np

from .util import prod

AUTO_PADS = ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")

# Window taps over the whole output (batch x channels x outputs x kernel taps): beyond this a
# pool is refused at import instead of running for hours (a kernel of 2^20 x 2^20 over huge
# pads is a few bytes in a file).
MAX_POOL_TAPS = 1 << 32


def _cdiv(a, b):
    """C++ integer division of int64 values: truncated toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def auto_pad_attr(n):
    """The node's auto_pad ("" reads as NOTSET), refused when it is none of the four."""
    auto_pad = n.attr("auto_pad", "NOTSET") or "NOTSET"
    if auto_pad not in AUTO_PADS:
        n.fail(f"auto_pad {auto_pad!r} is not one of {', '.join(AUTO_PADS)}")
    return auto_pad


@dataclass
class PoolGeometry:
    """begin / end: the pads of each spatial axis, negative where SAME_* skips elements;
    outs: output sizes (at least 1)."""

    kernel: list
    strides: list
    dilations: list
    begin: list
    end: list
    outs: list

    def window(self, i):
        return (self.kernel[i] - 1) * self.dilations[i] + 1

    def padding_only(self, sizes):
        """A bool array of shape outs, true where a window holds no input element (only
        padding or the ceil-mode overhang), or None when there is none."""
        empty = []
        for i, size in enumerate(sizes):
            start = np.arange(self.outs[i]) * self.strides[i] - self.begin[i]
            taps = start[:, None] + np.arange(self.kernel[i])[None, :] * self.dilations[i]
            empty.append(~((taps >= 0) & (taps < size)).any(axis=1))
        if not any(e.any() for e in empty):
            return None
        mask = np.zeros(self.outs, bool)
        for i, e in enumerate(empty):
            shape = [1] * len(sizes)
            shape[i] = -1
            mask |= e.reshape(shape)
        return mask


def _ints(n, name, values, count, low):
    values = [int(v) for v in values]
    if len(values) != count or (values and min(values) < low):
        bound = "positive" if low == 1 else "non-negative"
        n.fail(f"{name} {values} must be {count} {bound} values")
    return values


def pool_geometry(n, sizes, batch_channels):
    """PoolGeometry of the node for an input of spatial `sizes`; batch_channels is N * C
    (for the bound on the work)."""
    k = len(sizes)
    kernel = _ints(n, "kernel_shape", n.attr("kernel_shape", []), k, 1)
    strides = _ints(n, "strides", n.attr("strides", [1] * k), k, 1)
    dilations = _ints(n, "dilations", n.attr("dilations", [1] * k), k, 1)
    auto_pad = auto_pad_attr(n)
    ceil_mode = int(n.attr("ceil_mode", 0))
    if ceil_mode not in (0, 1):
        n.fail(f"ceil_mode {ceil_mode} must be 0 or 1")
    if auto_pad == "NOTSET":
        pads = _ints(n, "pads", n.attr("pads", [0] * (2 * k)), 2 * k, 0)
    else:
        pads = [0] * (2 * k)  # ONNX Runtime ignores pads next to an auto_pad, and so do we
    begin, end, outs = [], [], []
    for i, size in enumerate(sizes):
        s, window = strides[i], (kernel[i] - 1) * dilations[i] + 1
        b, e = pads[i], pads[k + i]
        if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            target = -(-size // s)
            total = (target - 1) * s + window - size
            b = _cdiv(total + 1, 2) if auto_pad == "SAME_LOWER" else _cdiv(total, 2)
            e = total - b
        numerator = size + b + e - window
        out = _cdiv(numerator, s) + 1
        if ceil_mode:
            out = -(-numerator // s) + 1
            if (out - 1) * s >= size + b:
                out -= 1
        if out < 1:
            what = "negative" if out < 0 else "0: the output would be empty"
            n.fail(f"the output size of spatial axis {i} is {what} (input {size}, kernel "
                   f"{kernel[i]}, stride {s}, dilation {dilations[i]}, pads {b} and {e}, "
                   f"auto_pad {auto_pad}, ceil_mode {ceil_mode}); WebNN has no 0-sized "
                   "tensors")  # fmt: skip
        begin.append(b)
        end.append(e)
        outs.append(out)
    taps = batch_channels * prod(outs) * prod(kernel)
    if taps > MAX_POOL_TAPS:
        n.fail(f"kernel {kernel} over outputs {outs} is {taps} window taps (at most "
               f"{MAX_POOL_TAPS})")  # fmt: skip
    return PoolGeometry(kernel, strides, dilations, begin, end, outs)


def trim_negative_pads(n, x, geometry, sizes, first_axis):
    """Negative pads (SAME_* with a stride past the window) drop input elements no window
    reads: x is sliced there and the pads become 0. Returns x, its new spatial sizes and the
    number of elements dropped at the front of each axis."""
    starts = [max(0, -b) for b in geometry.begin]
    stops = [size - max(0, -e) for size, e in zip(sizes, geometry.end)]
    if not any(starts) and stops == list(sizes):
        return x, list(sizes), starts
    shape = n.b.operand_shape(x)
    begin = [0] * first_axis + starts
    size = shape[:first_axis] + [b - a for a, b in zip(starts, stops)]
    x = n.b.slice(x, begin, size)
    geometry.begin = [max(0, b) for b in geometry.begin]
    geometry.end = [max(0, e) for e in geometry.end]
    return x, size[first_axis:], starts


def overhang(geometry, sizes):
    """Per axis, how far the last window reaches past the input and its end pads (the ceil
    mode and truncated windows); WebNN's floor arithmetic needs it as extra end padding."""
    return [
        max(0, (geometry.outs[i] - 1) * geometry.strides[i] + geometry.window(i)
            - (size + geometry.begin[i] + geometry.end[i]))
        for i, size in enumerate(sizes)
    ]  # fmt: skip


def fill_padding_only(n, y, mask, kind, dtype):
    """Windows without an input element give what ONNX Runtime gives: the lowest finite
    value for MaxPool, 0 for AveragePool and LpPool (mask: padding_only's array, broadcast
    over batch and channels)."""
    if mask is None:
        return y
    np_dtype = np.dtype(n.importer.webnn_numpy(dtype))
    fill = np.finfo(np_dtype).min if kind == "max" else 0
    rank = len(n.b.operand_shape(y))
    cond = n.importer.operand(mask.reshape([1] * (rank - mask.ndim) + list(mask.shape)))
    return n.b.where(cond, n.const(fill, dtype), y)
