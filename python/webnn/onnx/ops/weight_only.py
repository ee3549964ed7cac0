"""com.microsoft MatMulNBits: weight-only quantized MatMul (what ONNX Runtime's
matmul_nbits_quantizer makes of the MatMuls of a transformer or an LLM).

B holds, per output column n and block b of `block_size` rows of K, `bits`-bit integers packed
low bits first into bytes; w[k, n] = (q - zero_point) * scale[n, b], the zero point 2^(bits-1)
unless given (packed the same way, or as floats). The weights are constants, so they are
dequantized once at import into a float32 [K, N] matrix; the product runs as a float MatMul, as
ONNX Runtime computes it at accuracy_level 0 (the default; higher levels quantize A to int8 in
ORT, a speed trade-off whose rounding is not reproduced).
"""

import numpy as np

from .linalg import matmul_nd
from .registry import op


def _unpack(packed, bits, count):
    """uint8 bytes -> `count` unsigned `bits`-bit values per row, low bits first."""
    per_byte = 8 // bits
    shifts = (np.arange(per_byte, dtype=np.uint8) * bits).astype(np.uint8)
    values = (packed[..., None] >> shifts) & np.uint8((1 << bits) - 1)
    return values.reshape(packed.shape[:-1] + (-1,))[..., :count]


def dequantize_nbits(n, b, scales, zero_points, k, n_cols, bits, block_size):
    if bits not in (2, 4, 8):
        n.fail(f"MatMulNBits with bits={bits} (2, 4 and 8 are supported)")
    blocks = -(-k // block_size)
    if b.dtype != np.uint8 or b.size != n_cols * blocks * block_size * bits // 8:
        n.fail(f"B of shape {list(b.shape)} does not hold N={n_cols} x {blocks} blocks of "
               f"{block_size} {bits}-bit values")  # fmt: skip
    q = _unpack(b.reshape(n_cols, blocks, -1), bits, block_size).astype(np.float32)
    scale = scales.astype(np.float32).reshape(n_cols, blocks, 1)
    if zero_points is None:
        zp = np.float32(1 << (bits - 1))
    elif zero_points.dtype == np.uint8:
        zp = _unpack(zero_points.reshape(n_cols, -1), bits, blocks).astype(np.float32)
        zp = zp.reshape(n_cols, blocks, 1)
    else:  # float zero points (same type as the scales)
        zp = zero_points.astype(np.float32).reshape(n_cols, blocks, 1)
    w = ((q - zp) * scale).reshape(n_cols, blocks * block_size)[:, :k]
    return np.ascontiguousarray(w.T)  # [K, N]


@op("MatMulNBits", domain="com.microsoft")
def matmul_nbits(n):
    k, n_cols = int(n.attr("K")), int(n.attr("N"))
    bits, block_size = int(n.attr("bits", 4)), int(n.attr("block_size"))
    if n.has(4):
        n.fail("g_idx (act-order) is not supported")
    w = dequantize_nbits(
        n,
        n.c(1, what="packed weights"),
        n.c(2, what="scales"),
        n.c(3, what="zero points") if n.has(3) else None,
        k,
        n_cols,
        bits,
        block_size,
    )
    dtype = n.dtype(0)
    if dtype != "float32":
        w = w.astype(np.float16)
    y = matmul_nd(n, n.x(0), n.importer.operand(w))
    if n.has(5):
        y = n.b.add(y, n.x(5))
    return y
