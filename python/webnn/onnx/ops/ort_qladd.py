"""com.microsoft QLinearAdd as ONNX Runtime's x86 kernel (MLAS, AVX2) computes it.

ONNX Runtime does not dequantize, add and quantize: it folds the zero points into one float
constant and evaluates the sum with fused multiply-adds, rounding once per FMA:

    r_a = s_a / s_c, r_b = s_b / s_c                       (float32)
    fixed = zp_c - fma(r_a, zp_a, r_b * zp_b)
    same shapes:          y = rint(fma(a, r_a, fma(b, r_b, fixed)))
    b one value per span:  y = rint(fma(a, r_a, fixed + b * r_b))   (b scalar, or [.., C, 1, 1])
    a scalar:              y = rint(fma(b, r_b, fixed + a * r_a))

saturated to the output type. Near ties (which quantized models produce all the time: the
constant 3 of hard-swish quantized with scale 3/255, ...) this rounds differently from
dequantize-add-quantize in ~4% of the elements, one step each, and a deep QDQ network then
drifts by ten steps (PP-OCR's direction classifier, QDQ-quantized). WebNN has no fused
multiply-add, but the inputs are 8-bit: the result is a function of the pair (a, b), so the
converter evaluates it exactly in numpy for all 256 x 256 pairs (256 values when one input is
a constant) and gathers from that table at run time. The fma is computed in float64 (a product
of an 8-bit integer and a float32 is exact there) and rounded once to float32, which is the
single rounding of a float32 FMA.
"""

import numpy as np

from .quantization import FROM_QDQ

_F32 = np.float32


def _fma32(x, y, z):
    return (
        np.asarray(x, np.float64) * np.asarray(y, np.float64) + np.asarray(z, np.float64)
    ).astype(_F32)


def _table(params, lo, hi, mode):
    """[a - lo, b - lo] -> y for every pair of quantized values."""
    sa, za, sb, zb, sc, zc = params
    ra = _F32(_F32(sa) / _F32(sc))
    rb = _F32(_F32(sb) / _F32(sc))
    fixed = _F32(_F32(zc) - _fma32(ra, _F32(za), _F32(rb * _F32(zb))))
    values = np.arange(lo, hi + 1, dtype=_F32)
    a, b = np.meshgrid(values, values, indexing="ij")
    if mode == "full":
        r = _fma32(a, ra, _fma32(b, rb, fixed))
    elif mode == "scalar_b":
        r = _fma32(a, ra, _F32(fixed + _F32(b * rb)))
    else:
        r = _fma32(b, rb, _F32(fixed + _F32(a * ra)))
    return np.clip(np.rint(r), lo, hi)


def _mode(shape_a, shape_b):
    """Which kernel path ONNX Runtime's broadcasting takes (per inner span)."""
    size = lambda s: int(np.prod(s)) if s else 1
    if size(shape_b) == 1:
        return "scalar_b"
    if size(shape_a) == 1:
        return "scalar_a"
    rank = max(len(shape_a), len(shape_b))
    pa = [1] * (rank - len(shape_a)) + list(shape_a)
    pb = [1] * (rank - len(shape_b)) + list(shape_b)
    # b constant along the innermost span (per-channel [C, 1, 1] against [N, C, H, W]).
    if pb[-1] == 1 and pa[-1] > 1:
        return "scalar_b"
    # a broadcast along the innermost span: ONNX Runtime's result there is not pinned down
    # (neither formula reproduces it); the same-shape formula is used.
    return "full"


def qlinear_add_like_ort(n, dtype):
    """QLinearAdd of uint8/int8 inputs whose scales and zero points are known at import, or
    None when they are not (the caller then dequantizes, adds and quantizes)."""
    params = []
    for i in (1, 2, 4, 5, 6, 7):
        if not n.is_const(i) or np.asarray(n.value(i)).size != 1:
            return None
        params.append(np.asarray(n.value(i)).reshape(()))
    lo, hi = (0, 255) if dtype == "uint8" else (-128, 127)
    np_dtype = np.uint8 if dtype == "uint8" else np.int8
    shape_a, shape_b = n.shape(0), n.shape(3)
    if any(not isinstance(d, int) for d in list(shape_a) + list(shape_b)):
        return None
    mode = _mode(shape_a, shape_b)
    if dtype == "int8" and n.attr(FROM_QDQ, 0):
        # ONNX Runtime's optimizer runs int8 QDQ activations as uint8 (value and zero points
        # + 128) on x86: the same sums, rounded from other float values.
        sa, za, sb, zb, sc, zc = params
        shifted = (sa, int(za) + 128, sb, int(zb) + 128, sc, int(zc) + 128)
        table = (_table(shifted, 0, 255, mode) - 128).astype(np_dtype)
    else:
        table = _table(params, lo, hi, mode).astype(np_dtype)
    b = n.b

    def index(i):
        return b.sub(b.cast(n.x(i), "int32"), n.const(lo, "int32"))

    # One input a constant scalar (x + 3): a 256-entry table of the other.
    for var, const in ((0, 3), (3, 0)):
        if n.is_const(const) and np.asarray(n.value(const)).size == 1:
            c = int(np.asarray(n.value(const)).reshape(())) - lo
            column = table[:, c] if const == 3 else table[c, :]
            y = b.gather(n.const(np.ascontiguousarray(column), dtype), index(var))
            out_shape = list(np.broadcast_shapes(tuple(shape_a), tuple(shape_b)))
            return b.reshape(y, out_shape) if b.operand_shape(y) != out_shape else y
    flat = b.add(b.mul(index(0), n.const(hi - lo + 1, "int32")), index(3))
    return b.gather(n.const(table.reshape(-1), dtype), flat)
