"""ONNX Runtime's uint8 x int8 integer products on x86 CPUs without VNNI.

ONNX defines MatMulInteger & co. as exact integer sums. ONNX Runtime's u8s8 GEMM kernels on x86
CPUs without VNNI (AVX2, AVX-512BW) multiply with vpmaddubsw, which adds each pair of adjacent
products along the reduction axis (k = 2j, 2j + 1) into a saturated int16 before the exact int32
sum: sum_j sat16(a[2j] * b[2j] + a[2j+1] * b[2j+1]), on the raw (not zero-point shifted) uint8
a and int8 b, zero points corrected exactly afterwards. With full-range int8 weights (what
quantize_dynamic and quantize_static make without reduce_range) a pair can exceed 32767, and
ORT's result then differs from ONNX's by up to ~10%. Models quantized that way were validated
against exactly those results, so where the machine is such a CPU (or WEBNN_ONNX_U8S8=saturate)
the importer adds the same saturation to the exact product (WEBNN_ONNX_U8S8=exact turns it off).
uint8 x uint8 and int8 x int8 products have no such step (checked against ORT).

Only pairs that can saturate matter: with a in [0, 255], sat16 clips a pair only where both
weights have one sign and |b[2j] + b[2j+1]| > 128. For a constant B those pairs are known at
import; the correction gathers them per output column (padded to the largest count) and adds
sum(clamp(p) - p), exact in float32.
"""

import functools
import os

import numpy as np

_I16_MIN, _I16_MAX = -32768.0, 32767.0


@functools.lru_cache(maxsize=1)
def saturating_machine():
    """Whether ONNX Runtime's u8s8 kernels saturate pairs on this machine."""
    mode = os.environ.get("WEBNN_ONNX_U8S8", "").strip().lower()
    if mode in ("saturate", "exact"):
        return mode == "saturate"
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="ignore") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    vnni = {"avx512_vnni", "avx_vnni", "amx_int8"} & flags
                    return "avx2" in flags and not vnni
    except OSError:
        pass
    return False  # not x86 Linux: ARM's dot-product kernels are exact


def _pair_tables(b):
    """For int8 weights b [K, N]: per column n, the pairs that can saturate, as index and
    weight tables [N, C] (padded with weight 0), or None when no pair can."""
    k, n_cols = b.shape
    w = b.astype(np.int64)
    if k % 2:
        w = np.concatenate([w, np.zeros((1, n_cols), np.int64)])
    b0, b1 = w[0::2], w[1::2]  # [K/2, N]
    pos = np.maximum(b0, 0) + np.maximum(b1, 0)
    neg = np.minimum(b0, 0) + np.minimum(b1, 0)
    risky = (255 * pos > _I16_MAX) | (255 * neg < _I16_MIN)
    if not risky.any():
        return None
    per_col = risky.sum(0)
    c = int(per_col.max())
    idx0 = np.zeros((n_cols, c), np.int64)
    idx1 = np.zeros((n_cols, c), np.int64)
    w0 = np.zeros((n_cols, c), np.float32)
    w1 = np.zeros((n_cols, c), np.float32)
    for col in np.nonzero(per_col)[0]:
        pairs = np.nonzero(risky[:, col])[0]
        m = len(pairs)
        idx0[col, :m] = 2 * pairs
        second = 2 * pairs + 1
        has_second = second < k
        idx1[col, :m] = np.where(has_second, second, 0)
        w0[col, :m] = b0[pairs, col]
        w1[col, :m] = np.where(has_second, b1[pairs, col], 0)
    return idx0, idx1, w0, w1


def correction(n, a_raw, b):
    """What to add to the exact product a_raw @ b for ONNX Runtime's saturating u8s8 kernel:
    a_raw is the uint8 input as a float32 operand [..., M, K] (raw values, zero point not
    subtracted), b the int8 weights as a numpy array [K, N]. None when nothing can saturate
    (or the machine's ORT kernels do not saturate)."""
    if not saturating_machine() or b.dtype != np.int8 or b.ndim != 2:
        return None
    tables = _pair_tables(b)
    if tables is None:
        return None
    idx0, idx1, w0, w1 = tables
    bl = n.b
    shape = bl.operand_shape(a_raw)
    lead = list(shape[:-1])
    n_cols, c = idx0.shape
    rank = len(shape)
    op = n.importer.operand

    # The pairs laid out [C, N] (C slots of every column): the sum over C then reduces a middle
    # axis whose rows are whole columns (one vector pass each), and with C == 1 it is only a
    # reshape. Every value is an integer far below 2^24, so the order of the sum is exact.
    def pick(idx):
        g = bl.gather(a_raw, op(idx.T.reshape(-1).astype(np.int32)), axis=rank - 1)
        return bl.reshape(g, lead + [c, n_cols])

    lead_ones = [1] * len(lead)
    p = bl.add(
        bl.mul(pick(idx0), op(np.ascontiguousarray(w0.T).reshape(lead_ones + [c, n_cols]))),
        bl.mul(pick(idx1), op(np.ascontiguousarray(w1.T).reshape(lead_ones + [c, n_cols]))),
    )
    clipped = bl.clamp(p, min_value=_I16_MIN, max_value=_I16_MAX)
    fix = bl.sub(clipped, p)
    if c == 1:
        return bl.reshape(fix, lead + [n_cols])
    return bl.reduce_sum(fix, [rank - 1], False)


def add_correction(n, acc, a_raw, b):
    """acc (the exact product, float32) plus ORT's saturation correction, if any."""
    fix = correction(n, a_raw, b)
    return acc if fix is None else n.b.add(acc, fix)


def conv_correction(n, x_shifted, x_zero, w):
    """The same correction for ONNX Runtime's QLinearConv (uint8 x, int8 w [O, C/group, k...]),
    whose reduction runs over (kernel position..., input channel) in that order: each pair that
    can saturate becomes a filter with its two weights, so one convolution of the shifted input
    (plus x_zero times the pair's weights, as ORT pads with the zero point) gives every pair's
    sum p, and sum(clamp(p) - p) per output channel is added. None when nothing can saturate.
    ONNX Runtime's ConvInteger and its depthwise QLinearConv kernel are exact (checked against
    ORT): no correction there."""
    from .nn import conv_operands

    if not saturating_machine() or w.dtype != np.int8 or w.ndim not in (3, 4):
        return None
    o_count, c_group = w.shape[:2]
    if c_group == 1 and int(n.attr("group", 1)) > 1:
        return None  # depthwise: ORT's own depthwise kernel is exact
    spatial = w.shape[2:]
    flat = np.moveaxis(w, 1, -1).reshape(o_count, -1)  # [O, K], K = (taps..., channel)
    tables = _pair_tables(flat.T)
    if tables is None:
        return None
    idx0, idx1, w0, w1 = tables
    c = idx0.shape[1]
    filters = np.zeros((o_count * c, c_group) + tuple(spatial), np.float32)
    for o in range(o_count):
        for e in range(c):
            for idx, weight in ((idx0[o, e], w0[o, e]), (idx1[o, e], w1[o, e])):
                if weight:
                    tap, channel = divmod(int(idx), c_group)
                    filters[(o * c + e, channel) + np.unravel_index(tap, spatial)] += weight
    sums = filters.reshape(o_count * c, -1).sum(1) * np.float32(x_zero)
    op = n.importer.operand
    bl = n.b
    p = conv_operands(n, x_shifted, op(filters), op(sums.astype(np.float32)))
    shape = bl.operand_shape(p)
    p = bl.reshape(p, [shape[0], o_count, c] + list(shape[2:]))
    clipped = bl.clamp(p, min_value=_I16_MIN, max_value=_I16_MAX)
    return bl.reduce_sum(bl.sub(clipped, p), [2], False)
