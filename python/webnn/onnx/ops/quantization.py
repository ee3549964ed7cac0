"""QuantizeLinear / DequantizeLinear and the integer operators, by decomposition.

The integer operators (QLinearConv, QLinearMatMul, ConvInteger, MatMulInteger, QGemm) run
their accumulation on zero-point-shifted integers held in float32, which is exact while the
sums stay below 2**24 (the products of 8-bit values over the usual reduction lengths), and
requantize as ONNX Runtime does: accumulator * (x_scale * w_scale / y_scale), rounded half to
even, plus the output zero point, saturated.
"""

import numpy as np

from .. import codes
from ..held import FLOAT_CODED, HELD, fix_result, holding_type
from ..types import BFLOAT16, NUMPY_TO_WEBNN
from .registry import op
from .util import norm_axis

# Attribute that webnn/onnx/qdq.py sets on the QLinearConv/QLinearMatMul it fuses.
FROM_QDQ = "webnn_from_qdq"

_ONNX_INT = {2: np.uint8, 3: np.int8, 6: np.int32, 12: np.uint32, 7: np.int64}


def param_shape(n, pshape, xshape, axis, block_size=0):
    """The shape a scale/zero point takes to broadcast against x (WebNN wants equal rank)."""
    rank = len(xshape)
    count = int(np.prod(pshape)) if pshape else 1
    if len(pshape) == rank and rank > 1:
        return list(pshape)  # blocked: already of the input's rank
    if count == 1:
        return [1] * rank
    if len(pshape) != 1:
        n.fail(f"scale of shape {pshape} does not fit an input of shape {xshape}")
    shape = [1] * rank
    shape[axis] = pshape[0]
    if block_size:
        n.fail("blocked quantization with a 1-D scale")
    return shape


def _reshaped(n, i, shape):
    v = n.value(i)
    if isinstance(v, np.ndarray):
        return n.importer.operand(np.require(v.reshape(shape), requirements="C"))
    return n.b.reshape(n.x(i), shape)


def _linear_param_shape(n):
    """The shape Quantize/DequantizeLinear's scale and zero point (input 1, 2) take to broadcast
    against input 0: per tensor, per `axis` or per block of `block_size` along it."""
    xshape = n.shape(0)
    rank = len(xshape)
    per_tensor = int(np.prod(n.shape(1))) == 1 and len(n.shape(1)) <= 1
    # axis is used only by per-axis and blocked quantization: a per-tensor scale ignores it
    # (onnxruntime.quantization writes axis=1 on the 1-D tensors of YOLOv8's head).
    axis = norm_axis(n, int(n.attr("axis", 1)), max(rank, 1)) if rank and not per_tensor else 0
    pshape = param_shape(n, n.shape(1), xshape, axis, int(n.attr("block_size", 0)))
    return pshape if rank else []


@op("QuantizeLinear")
def quantize_linear(n):
    out = n.elems[2] if n.has(2) else (n.attr("output_dtype", 0) or 2)
    if out in HELD or any(n.elems):
        return _quantize_held(n, out)
    pshape = _linear_param_shape(n)
    scale = _reshaped(n, 1, pshape)
    if n.has(2):
        zp = _reshaped(n, 2, pshape)
    else:
        out = n.attr("output_dtype", 0) or 2
        if out not in _ONNX_INT or out in (6, 12, 7):
            n.fail(f"QuantizeLinear to ONNX type {out} is not supported")
        zp = n.importer.operand(np.zeros(pshape, dtype=_ONNX_INT[out]))
    x = n.x(0)
    if n.dtype(0) != n.dtype(1):
        x = n.b.cast(x, n.dtype(1))
    return quantize_like_onnx(n, x, scale, zp)


def quantize_like_onnx(n, x, scale, zp):
    """saturate(round_half_even(x / scale) + zero_point) with x / scale rounded to float32
    first, as ONNX (and ONNX Runtime) compute it. WebNN's quantizeLinear divides in higher
    precision here, which rounds near-ties (127.49999 in float64, 127.5 in float32) the other
    way; dividing first and quantizing with scale 1 gives ONNX's result exactly."""
    bl = n.b
    xs, ss = bl.operand_shape(x), bl.operand_shape(scale)
    broadcastable = all(s == 1 or s == d for s, d in zip(ss, xs))
    if not broadcastable or bl.operand_data_type(x) != "float32":
        return bl.quantize_linear(x, scale, zp)
    one = n.importer.operand(np.ones(ss, np.float32))
    return bl.quantize_linear(bl.div(x, scale), one, zp)


@op("DequantizeLinear")
def dequantize_linear(n):
    if any(n.elems):
        return _dequantize_held(n)
    pshape = _linear_param_shape(n)
    scale = _reshaped(n, 1, pshape)
    zp = _reshaped(n, 2, pshape) if n.has(2) else None
    if zp is None:
        zp = n.importer.operand(np.zeros(pshape, dtype=n.np_dtype(0)))
    return n.b.dequantize_linear(n.x(0), scale, zp)


def shifted_float(n, i, zp_index, axis=None):
    """Input i minus its zero point, as float32 (exact: 8/32-bit integers)."""
    v = n.value(i)
    zp = n.value(zp_index) if n.has(zp_index) else None
    rank = len(n.shape(i))
    if isinstance(v, np.ndarray) and (zp is None or isinstance(zp, np.ndarray)):
        z = np.zeros(1) if zp is None else zp.astype(np.float64)
        if z.size > 1 and axis is not None:
            shape = [1] * rank
            shape[axis] = z.size
            z = z.reshape(shape)
        elif z.size > 1 and rank == 2:
            z = z.reshape(1, -1)  # MatMulInteger b_zero_point: per column
        return n.importer.operand(
            (v.astype(np.float64) - z.reshape(z.shape if z.ndim else [])).astype(np.float32)
        )
    x = n.b.cast(n.x(i), "float32")
    if zp is None:
        return x
    if isinstance(zp, np.ndarray):
        z = zp.astype(np.float32)
        if z.size > 1:
            shape = [1] * rank
            shape[axis if axis is not None else (1 if rank == 4 else rank - 1)] = z.size
            z = z.reshape(shape)
        else:
            z = z.reshape([1] * rank)
        return n.b.sub(x, n.importer.operand(np.require(z, requirements="C")))
    # A zero point computed at run time broadcasts as a constant one would: one value, or
    # one per channel along `axis` (not along the last axis, where numpy rules would put a
    # 1-D operand: ConvInteger's per-output-channel w_zero_point).
    z = n.b.cast(n.x(zp_index), "float32")
    size = int(np.prod(n.shape(zp_index)))
    shape = [1] * rank
    if size > 1:
        shape[axis if axis is not None else (1 if rank == 4 else rank - 1)] = size
    return n.b.sub(x, n.b.reshape(z, shape))


def requantize(n, acc, multiplier, y_zp_index, out_dtype):
    """round_half_even(acc * multiplier) + zero point, saturated (QuantizeLinear, scale 1)."""
    bl = n.b
    rank = len(bl.operand_shape(acc))
    y = bl.mul(acc, multiplier)
    one = n.importer.operand(np.ones([1] * rank, np.float32))
    if n.has(y_zp_index):
        zpv = n.value(y_zp_index)
        if isinstance(zpv, np.ndarray):
            zp = n.importer.operand(np.require(zpv.reshape([1] * rank), requirements="C"))
        else:
            zp = bl.reshape(n.x(y_zp_index), [1] * rank)
    else:
        zp = n.importer.operand(np.zeros([1] * rank, dtype=out_dtype))
    return bl.quantize_linear(y, one, zp)


def _float_param(n, i, rank, axis=None):
    v = n.value(i)
    if isinstance(v, np.ndarray):
        v = v.astype(np.float32)
        if v.size > 1:
            shape = [1] * rank
            shape[axis if axis is not None else rank - 1] = v.size
            return v.reshape(shape)
        return v.reshape([1] * rank)
    return None


def _multiplier(n, rank, scales, axis):
    """x_scale * w_scale / y_scale as ONNX Runtime computes it (float32), broadcastable."""
    vals = []
    for i, kind in scales:
        n.c(i, what="a scale")
        p = _float_param(n, i, rank, axis)
        vals.append((p, kind))
    m = np.ones([1] * rank, np.float32)
    for p, kind in vals:
        m = (m * p).astype(np.float32) if kind == "mul" else (m / p).astype(np.float32)
    return n.importer.operand(np.require(m, requirements="C"))


@op("QLinearConv")
def qlinear_conv(n):
    from .nn import conv_operands

    rank = n.rank(0)
    x = shifted_float(n, 0, 2)
    w = shifted_float(n, 3, 5, axis=0)
    bias = None
    if n.has(8):
        bias = n.importer.operand(n.c(8, what="bias").astype(np.float32))
    acc = conv_operands(n, x, w, bias)
    offset = _u8_offset(n, 0)
    if offset is not None and n.is_const(3) and (not n.has(2) or n.is_const(2)):
        from .ort_u8s8 import conv_correction

        x_zero = int(n.c(2).reshape(-1)[0]) if n.has(2) else 0
        fix = conv_correction(n, x, x_zero + offset, n.c(3))
        if fix is not None:
            acc = n.b.add(acc, fix)
    out_rank = len(n.b.operand_shape(acc))
    axis = 1
    m = _multiplier(n, out_rank, [(1, "mul"), (4, "mul"), (6, "div")], axis)
    return requantize(n, acc, m, 7, n.np_dtype(7) if n.has(7) else np.uint8)
    del rank


@op("ConvInteger")
def conv_integer(n):
    from .nn import conv_operands

    x = shifted_float(n, 0, 2)
    w = shifted_float(n, 1, 3, axis=0)
    return n.b.cast(conv_operands(n, x, w, None), "int32")


def _u8_offset(n, a_index):
    """How ONNX Runtime holds activation a_index in its u8s8 kernels: uint8 as it is (0); int8
    from a QDQ model shifted to uint8 (128), which ORT's optimizer does on x86 (its S8-to-U8
    QDQ rewrite; a plain int8 x int8 QLinear operator runs exact kernels). None: no u8s8."""
    dtype = n.dtype(a_index)
    if dtype == "uint8":
        return 0
    if dtype == "int8" and n.attr(FROM_QDQ, 0):
        return 128
    return None


def ort_u8s8(n, acc, a_index, b_index, transposed=False):
    """acc plus ONNX Runtime's u8s8 pair saturation (ort_u8s8.py) for a uint8 input a_index
    times constant int8 2-D weights b_index ([K, N], or [N, K] when transposed)."""
    from .ort_u8s8 import add_correction

    offset = _u8_offset(n, a_index)
    if offset is None or not n.is_const(b_index) or n.rank(a_index) < 2:
        return acc
    b = n.c(b_index)
    if b.dtype != np.int8 or b.ndim != 2:
        return acc
    a_raw = n.b.cast(n.x(a_index), "float32")
    if offset:
        a_raw = n.b.add(a_raw, n.const(float(offset), "float32"))
    return add_correction(n, acc, a_raw, b.T if transposed else b)


def _by_raw_input(n, b_const):
    """(A - a_zp) @ b for MatMulInteger with b_const = B - b_zp (numpy, 2-D) as
    cast(A) @ b - a_zp * colsum(b) where every float32 partial sum is an exact integer
    (255 * sum|b| < 2^24 per column): the same integers, and the matmul of cast((u)int8) by
    integer weights that the cpu backend runs on its int8 GEMM (integer_matmul pass). Else
    None (a per-row zero point, 1-D A, or outside the bound)."""
    from .linalg import matmul_nd

    bl = n.b
    if n.rank(0) < 2 or 255.0 * np.abs(b_const).sum(0).max(initial=0.0) >= 2.0**24:
        return None
    if n.has(2) and int(np.prod(n.shape(2))) != 1:
        return None
    b = n.importer.operand(b_const.astype(np.float32))
    acc = matmul_nd(n, bl.cast(n.x(0), "float32"), b)
    if not n.has(2):
        return acc
    z = bl.reshape(bl.cast(n.x(2), "float32"), [1])
    return bl.sub(acc, bl.mul(z, n.importer.operand(b_const.sum(0).astype(np.float32))))


@op("MatMulInteger")
def matmul_integer(n):
    from .linalg import matmul_nd

    acc = None
    if n.is_const(1) and n.rank(1) == 2 and (not n.has(3) or n.is_const(3)):
        b_const = n.c(1).astype(np.float64)
        if n.has(3):
            z = n.c(3).astype(np.float64)
            b_const = b_const - (z.reshape(1, -1) if z.size > 1 else z.reshape([]))
        acc = _by_raw_input(n, b_const)
    if acc is None:
        a = shifted_float(n, 0, 2, axis=None)
        b = shifted_float(n, 1, 3, axis=None)
        acc = matmul_nd(n, a, b)
    return n.b.cast(ort_u8s8(n, acc, 0, 1), "int32")


@op("QLinearMatMul")
def qlinear_matmul(n):
    from .linalg import matmul_nd

    a = shifted_float(n, 0, 2)
    b = shifted_float(n, 3, 5)
    acc = ort_u8s8(n, matmul_nd(n, a, b), 0, 3)
    rank = len(n.b.operand_shape(acc))
    m = _multiplier(n, rank, [(1, "mul"), (4, "mul"), (6, "div")], rank - 1)
    return requantize(n, acc, m, 7, n.np_dtype(7) if n.has(7) else np.uint8)


@op("DynamicQuantizeLinear")
def dynamic_quantize_linear(n):
    bl = n.b
    x = n.x(0)
    rank = n.rank(0)
    zero = n.const(0.0, "float32")
    lo = bl.min(bl.reduce_min(x, list(range(rank)), False), zero)
    hi = bl.max(bl.reduce_max(x, list(range(rank)), False), zero)
    # ONNX Runtime's rule where the range is empty (an all-zero input, e.g. after a ReLU): scale
    # 1, not 0 (which would make the zero point 0/0).
    span = bl.sub(hi, lo)
    empty = bl.equal(span, zero)
    scale = bl.where(empty, n.const(1.0, "float32"), bl.div(span, n.const(255.0, "float32")))
    zp_f = bl.clamp(bl.round_even(bl.sub(zero, bl.div(lo, scale))), min_value=0.0, max_value=255.0)
    zp = bl.cast(zp_f, "uint8")
    ones = [1] * rank
    y = quantize_like_onnx(n, x, bl.reshape(scale, ones), bl.reshape(zp, ones))
    return [y, scale, zp]


@op("QGemm", domain="com.microsoft")
def qgemm(n):
    bl = n.b
    ta, tb = bool(n.attr("transA", 0)), bool(n.attr("transB", 0))
    alpha = float(n.attr("alpha", 1.0))
    a = shifted_float(n, 0, 2)
    b = shifted_float(n, 3, 5, axis=0 if tb else 1)
    acc = bl.gemm(a, b, None, alpha=1.0, a_transpose=ta, b_transpose=tb)
    if not ta:
        acc = ort_u8s8(n, acc, 0, 3, transposed=tb)
    if n.has(6):
        acc = bl.add(acc, n.importer.operand(n.c(6, what="bias C").astype(np.float32)))
    scales = [(1, "mul"), (4, "mul")]
    if n.has(7):
        m = _multiplier(n, 2, scales + [(7, "div")], 1)
        if alpha != 1.0:
            acc = bl.mul(acc, n.const(alpha, "float32"))
        return requantize(n, acc, m, 8, n.np_dtype(8) if n.has(8) else np.uint8)
    m = _multiplier(n, 2, scales, 1)
    y = bl.mul(acc, m)
    if alpha != 1.0:
        y = bl.mul(y, n.const(alpha, "float32"))
    return y


def _dq(n, i, s, z):
    """Dequantize input i with scale input s and zero point input z (per tensor)."""
    x = shifted_float(n, i, z)
    scale = n.value(s)
    rank = len(n.shape(i))
    if isinstance(scale, np.ndarray):
        return n.b.mul(x, n.importer.operand(scale.astype(np.float32).reshape([1] * rank)))
    return n.b.mul(x, n.b.reshape(n.x(s), [1] * rank))


def _q(n, y, s, z):
    rank = len(n.b.operand_shape(y))
    scale = n.value(s)
    scale = (
        n.importer.operand(np.asarray(scale, np.float32).reshape([1] * rank))
        if isinstance(scale, np.ndarray)
        else n.b.reshape(n.x(s), [1] * rank)
    )
    zv = n.value(z) if n.has(z) else np.zeros(1, np.uint8)
    zp = (
        n.importer.operand(np.asarray(zv).reshape([1] * rank))
        if isinstance(zv, np.ndarray)
        else n.b.reshape(n.x(z), [1] * rank)
    )
    return quantize_like_onnx(n, y, scale, zp)


def _qlinear_binary(method):
    def convert(n):
        a = _dq(n, 0, 1, 2)
        b = _dq(n, 3, 4, 5)
        return _q(n, getattr(n.b, method)(a, b), 6, 7)

    return convert


@op("QLinearAdd", domain="com.microsoft")
def qlinear_add(n):
    from .ort_qladd import qlinear_add_like_ort

    dtype = n.dtype(0)
    if dtype in ("uint8", "int8") and n.dtype(3) == dtype:
        y = qlinear_add_like_ort(n, dtype)
        if y is not None:
            return y
    return _qlinear_binary("add")(n)


op("QLinearMul", domain="com.microsoft")(_qlinear_binary("mul"))


@op("QLinearSigmoid", domain="com.microsoft")
def qlinear_sigmoid(n):
    return _q(n, n.b.sigmoid(_dq(n, 0, 1, 2)), 3, 4)


@op("QLinearLeakyRelu", domain="com.microsoft")
def qlinear_leaky_relu(n):
    return _q(n, n.b.leaky_relu(_dq(n, 0, 1, 2), float(n.attr("alpha", 0.01))), 3, 4)


@op("QLinearGlobalAveragePool", domain="com.microsoft")
def qlinear_global_average_pool(n):
    x = _dq(n, 0, 1, 2)
    rank = n.rank(0)
    axes = list(range(1, rank - 1)) if n.attr("channels_last", 0) else list(range(2, rank))
    return _q(n, n.b.reduce_mean(x, axes, True), 3, 4)


@op("QLinearSoftmax", domain="com.microsoft")
def qlinear_softmax(n):
    x = _dq(n, 0, 1, 2)
    rank = n.rank(0)
    axis = int(n.attr("axis", -1 if int(n.attr("opset", 13)) >= 13 else 1))
    axis = axis + rank if axis < 0 else axis
    if int(n.attr("opset", 13)) < 13 and axis != rank - 1:
        n.fail("QLinearSoftmax with opset < 13 semantics on a non-last axis")
    y = _qlinear_softmax_like_ort(n, axis)
    return y if y is not None else _q(n, n.b.softmax(x, axis), 3, 4)


def _qlinear_softmax_like_ort(n, axis):
    """ONNX Runtime's QLinearSoftmax kernel, which is not dequantize-softmax-quantize: a float
    table of exp((i - 255 + shift) * x_scale) for i = 255 - max(x) + x (shift keeps the row sum
    finite: max(0, ln(FLT_MAX / D) - 5) / x_scale, all in double), the row sum of the table
    values in float32, then rint(e * floor(1 / y_scale) / sum) + y_zp, saturated. None when
    the parameters are not known at import."""
    bl = n.b
    dtype = n.dtype(0)
    if dtype not in ("uint8", "int8") or not all(n.is_const(i) for i in (1, 3, 4) if n.has(i)):
        return None
    shape = n.shape(0)
    if not isinstance(shape[axis], int) or not n.has(4):
        return None
    x_scale = float(np.asarray(n.value(1)).reshape(-1)[0])
    y_scale = float(np.float32(np.asarray(n.value(3)).reshape(-1)[0]))
    y_zp = int(np.asarray(n.value(4)).reshape(-1)[0])
    length = shape[axis]
    shift = max(0.0, np.log(np.finfo(np.float32).max / length) - 5) / x_scale
    table = np.exp((np.arange(256, dtype=np.float64) - 255 + shift) * x_scale).astype(np.float32)
    # The same integers in float32 ops (the int32 ones ran on scalar kernels: clamp, reduceMax
    # and the casts were ~2x ORT's whole kernel on smart-turn's [2, 6, 400, 400]): x and the
    # index are exact small integers in float32; the ratio is requantized by quantizeLinear's
    # float32 kernel (scale 1: clamp, round half to even, + y_zp), the int32 form's integers.
    x = bl.cast(n.x(0), "float32")
    top = bl.sub(bl.reduce_max(x, [axis], True), n.const(255.0, "float32"))
    index = bl.cast(bl.sub(x, top), "int32")  # x - max + 255, in [0, 255]
    e = bl.gather(n.const(table, "float32"), index)
    total = bl.reduce_sum(e, [axis], True)
    scaled = bl.mul(e, n.const(np.floor(np.float32(1.0) / np.float32(y_scale)), "float32"))
    ratio = bl.div(scaled, total)
    # rint(ratio) + y_zp, saturated: quantizeLinear with scale 1. (ONNX Runtime 1.32's int8
    # kernel saturates too, on every axis: tests/python/test_onnx_qoperator.py drives rint(ratio)
    # + y_zp past 127; the wrap this decomposition once modelled is not what it computes.)
    rank = len(shape)
    ones = n.importer.operand(np.ones([1] * rank, np.float32))
    zp = n.importer.operand(np.full([1] * rank, y_zp, n.np_dtype(0)))
    return bl.quantize_linear(ratio, ones, zp)


@op("QLinearConcat", domain="com.microsoft")
def qlinear_concat(n):
    parts = []
    for i in range(2, n.n_inputs, 3):
        parts.append(_dq(n, i, i + 1, i + 2))
    rank = n.rank(2)
    axis = norm_axis(n, int(n.attr("axis")), rank)
    return _q(n, n.b.concat(parts, axis), 0, 1)


del NUMPY_TO_WEBNN


# -- types WebNN lacks (held.py): int16 / uint16 / int2 / uint2 integers, float8 / float4 codes


def _held_param(n, i, pshape, xshape):
    """Scale or zero point i as a float32 operand broadcastable against x: reshaped, and
    repeated block_size times along `axis` for blocked quantization (the block count is
    ceil(size / block_size), the last block cut at the input's size)."""
    b = n.b
    v = _reshaped(n, i, pshape)
    if n.elems[i] in FLOAT_CODED:
        v = codes.decode(n, v, n.elems[i])
    elif b.operand_data_type(v) != "float32":
        v = b.cast(v, "float32")
    block = int(n.attr("block_size", 0))
    if not block or len(pshape) != len(xshape) or list(pshape) == list(xshape):
        return v
    axes = [a for a, (p, d) in enumerate(zip(pshape, xshape)) if p != d and p != 1]
    if len(axes) != 1:
        n.fail(f"blocked quantization: scale shape {pshape} against input {xshape}")
    axis = axes[0]
    count, size = pshape[axis], xshape[axis]
    if count != -(-size // block):
        n.fail(f"blocked quantization: {count} blocks of {block} along axis {axis} for {size}")
    v = b.reshape(v, pshape[: axis + 1] + [1] + pshape[axis + 1 :])
    v = b.expand(v, pshape[: axis + 1] + [block] + pshape[axis + 1 :])
    v = b.reshape(v, pshape[:axis] + [count * block] + pshape[axis + 1 :])
    if count * block != size:
        starts = [0] * len(xshape)
        sizes = list(pshape[:axis]) + [size] + list(pshape[axis + 1 :])
        v = b.slice(v, starts, sizes)
    return v


def _quantize_held(n, out):
    """QuantizeLinear to a type WebNN lacks, or from bfloat16: x / scale in float32 (ONNX's
    order), then to int16 / uint16 / int2 / uint2 rounded half to even plus the zero point and
    saturated, or to float8 / float4 with the zero point added and encoded as Cast does
    (`saturate`)."""
    b = n.b
    xshape = n.static_shape(0)
    pshape = _linear_param_shape(n)
    x = b.cast(n.x(0), "float32") if b.operand_data_type(n.x(0)) != "float32" else n.x(0)
    v = b.div(x, _held_param(n, 1, pshape, xshape))
    zp = _held_param(n, 2, pshape, xshape) if n.has(2) else None
    n.importer.held[n.node.output[0]] = out if out in HELD else None
    if out in FLOAT_CODED:
        if zp is not None:
            v = b.add(v, zp)
        return codes.encode(n, v, out, bool(n.attr("saturate", 1)))
    ranges = {**codes.INT_RANGE, 4: (0, 65535), 5: (-32768, 32767), 2: (0, 255), 3: (-128, 127)}
    if out not in ranges:
        n.fail(f"QuantizeLinear to ONNX type {out} is not supported")
    lo, hi = ranges[out]
    v = b.round_even(v)
    if zp is not None:
        v = b.add(v, zp)
    v = b.clamp(v, min_value=float(lo), max_value=float(hi))
    dtype = holding_type(out) if out in HELD else {2: "uint8", 3: "int8"}[out]
    return b.cast(v, dtype)


def _dequantize_held(n):
    """DequantizeLinear of a type WebNN lacks (or to bfloat16): (x - zero point) * scale in
    float32, exact for the 16-bit integers and the float8 / float4 values; a bfloat16 scale
    gives a bfloat16 result, rounded."""
    b = n.b
    xshape = n.static_shape(0)
    pshape = _linear_param_shape(n)
    x = n.x(0)
    if n.elems[0] in FLOAT_CODED:
        x = codes.decode(n, x, n.elems[0])
    else:
        x = b.cast(x, "float32")
    if n.has(2):
        x = b.sub(x, _held_param(n, 2, pshape, xshape))
    scale = _held_param(n, 1, pshape, xshape)
    y = b.mul(x, scale)
    out = n.elems[1] if n.elems[1] is not None else None
    if n.attr("output_dtype", 0) and n.attr("output_dtype") != 1:
        out = n.attr("output_dtype")
    if out == BFLOAT16:
        n.importer.held[n.node.output[0]] = BFLOAT16
        return fix_result(n, y, BFLOAT16)
    if out is None and n.dtype(1) == "float16":
        return b.cast(y, "float16")
    if out not in (None, 1):
        n.fail(f"DequantizeLinear to ONNX type {out} is not supported")
    return y
