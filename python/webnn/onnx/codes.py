"""ONNX element types WebNN lacks, held exactly as codes in types it has.

int2 / uint2 values are held as int8 / uint8 (the same integers). float8 (e4m3fn, e4m3fnuz,
e5m2, e5m2fnuz), float4e2m1 and float8e8m0 values are held as their uint8 bit codes, so that
nothing is rounded on the way; Cast / CastLike / QuantizeLinear / DequantizeLinear read and
make them, data movement passes them on (held.py says which operators). Decoding is a gather from the table of the exact values of the
256 (float4: 16) codes. Encoding a float32 x is done with comparisons: |x| >= t for the sorted
thresholds t where the result steps from one magnitude to the next (each threshold is the
smallest float32 that rounds to the larger one, so round-to-nearest-even ties, saturation
and the overflow to inf/NaN are all in where the thresholds lie), counted, then the code of
that magnitude for x's sign is gathered; a NaN gives the format's NaN code.

The thresholds come from ml_dtypes' conversion (which onnx's reference implementation uses
for float8/float4) and onnx.numpy_helper.to_float8e8m0 (the reference for e8m0), found by
bisection over float32 bit patterns; tests/python/test_onnx_codes.py checks the graph
against onnx's reference and ONNX Runtime over every float16 value and a dense float32
sample that includes every threshold and its neighbours.
"""

import functools

import ml_dtypes
import numpy as np

# ONNX TensorProto.DataType numbers.
FLOAT8E4M3FN, FLOAT8E4M3FNUZ, FLOAT8E5M2, FLOAT8E5M2FNUZ = 17, 18, 19, 20
FLOAT4E2M1, FLOAT8E8M0, UINT2, INT2 = 23, 24, 25, 26

# ONNX type -> (ml_dtypes type a session feeds and returns, the WebNN type holding it).
CODED = {
    FLOAT8E4M3FN: (ml_dtypes.float8_e4m3fn, "uint8"),
    FLOAT8E4M3FNUZ: (ml_dtypes.float8_e4m3fnuz, "uint8"),
    FLOAT8E5M2: (ml_dtypes.float8_e5m2, "uint8"),
    FLOAT8E5M2FNUZ: (ml_dtypes.float8_e5m2fnuz, "uint8"),
    FLOAT4E2M1: (ml_dtypes.float4_e2m1fn, "uint8"),
    FLOAT8E8M0: (ml_dtypes.float8_e8m0fnu, "uint8"),
    UINT2: (ml_dtypes.uint2, "uint8"),
    INT2: (ml_dtypes.int2, "int8"),
}
FLOAT_CODED = (FLOAT8E4M3FN, FLOAT8E4M3FNUZ, FLOAT8E5M2, FLOAT8E5M2FNUZ, FLOAT4E2M1, FLOAT8E8M0)
INT_RANGE = {UINT2: (0, 3), INT2: (-2, 1)}


@functools.cache
def decode_table(elem):
    """float32 value of every code (float4: 16 codes, the others 256): exact."""
    count = 16 if elem == FLOAT4E2M1 else 256
    return np.arange(count, dtype=np.uint8).view(CODED[elem][0]).astype(np.float32)


def _reference_cast(x, elem, saturate, round_mode):
    """onnx's reference for float32 -> elem codes (uint8), as its Cast does."""
    if elem == FLOAT8E8M0:
        from onnx import numpy_helper

        return numpy_helper.to_float8e8m0(x, saturate, round_mode).view(np.uint8)
    dtype = CODED[elem][0]
    if saturate and elem != FLOAT4E2M1:
        info = ml_dtypes.finfo(dtype)
        x = np.clip(x, np.float32(info.min), np.float32(info.max))
    return x.astype(dtype).view(np.uint8)


@functools.cache
def encode_tables(elem, saturate=True, round_mode="up"):
    """(thresholds float32[K], positive codes uint8[K+1], negative codes uint8[K+1], NaN
    code): a float32 x encodes as codes[count(|x| >= thresholds)] for its sign."""
    values = decode_table(elem).astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):

        def magnitude(bits):  # the value |x| rounds to, NaN (an overflow) above every number
            codes = _reference_cast(bits.view(np.float32), elem, saturate, round_mode)
            v = np.abs(values[codes])
            return np.where(np.isnan(v), 1e300, v)

        top = np.uint32(0x7F800000)  # +inf
        levels = np.unique(magnitude(np.arange(0, top + 1, 1 << 16, dtype=np.uint32)))
        # every level reached: bisect for the smallest bit pattern reaching each one
        lo = np.zeros(len(levels) - 1, dtype=np.int64)
        hi = np.full(len(levels) - 1, int(top), dtype=np.int64)
        want = levels[1:]
        while np.any(hi - lo > 1):
            mid = (lo + hi) // 2
            reached = magnitude(mid.astype(np.uint32)) >= want
            hi = np.where(reached, mid, hi)
            lo = np.where(reached, lo, mid)
        thresholds = hi.astype(np.uint32).view(np.float32)
        reps = np.concatenate([[np.float32(0)], thresholds]).astype(np.float32)
        positive = _reference_cast(reps, elem, saturate, round_mode)
        negative = _reference_cast(-reps, elem, saturate, round_mode)
        nan = _reference_cast(np.array([np.nan], np.float32), elem, saturate, round_mode)[0]
    return thresholds, positive, negative, int(nan)


def decode(n, codes, elem):
    """Coded operand (held type) -> float32 operand of the exact values."""
    b = n.b
    if elem in INT_RANGE:
        return b.cast(codes, "float32")
    table = n.importer.operand(decode_table(elem))
    return b.gather(table, b.cast(codes, "int32"))


def encode(n, x, elem, saturate=True, round_mode="up"):
    """float32 operand -> coded operand, as onnx's reference casts (bit-exact)."""
    b = n.b
    thresholds, positive, negative, nan = encode_tables(elem, bool(saturate), round_mode)
    shape = b.operand_shape(x)
    rank = len(shape)
    ax = b.abs(x)
    steps = b.greater_or_equal(
        b.reshape(ax, list(shape) + [1]),
        n.importer.operand(thresholds.reshape([1] * rank + [len(thresholds)])),
    )
    index = b.reduce_sum(b.cast(steps, "int32"), axes=[rank], keep_dimensions=False)
    code = b.gather(n.importer.operand(positive), index)
    if not np.array_equal(positive, negative):
        zero = n.const(0, "float32")
        # -0 is negative too: 1 / -0 is -inf
        sign = b.logical_or(b.lesser(x, zero), b.lesser(b.reciprocal(x), zero))
        code = b.where(sign, b.gather(n.importer.operand(negative), index), code)
    nan_code = n.importer.operand(np.full([1] * rank, nan, np.uint8))
    return b.where(b.is_nan(x), nan_code, code)
