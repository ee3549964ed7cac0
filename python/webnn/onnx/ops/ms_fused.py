"""com.microsoft operators that ONNX Runtime's own graph optimizer writes into the models it saves
(SessionOptions.optimized_model_filepath, or an optimized model shipped as is): FusedConv and
FusedGemm (an activation fused into the convolution / GEMM), MatMulIntegerToFloat and
DynamicQuantizeMatMul (the fused forms of quantize_dynamic's DynamicQuantizeLinear ->
MatMulInteger -> Cast -> Mul [-> Add] chains), QAttention / QEmbedLayerNormalization (quantize_dynamic of a
model whose attention and embeddings ORT's transformer optimizer had fused), and
QLinearAveragePool (quantize_static's QOperator format). Each computes the float32 operations of the
chain it replaced, in the same order (ORT's fused kernels compute those same values)."""

import numpy as np

from .linalg import gemm, matmul_nd
from .microsoft import attention_on_qkv, embed_layer_norm_on
from .nn import conv_operands
from .ort_u8s8 import add_correction
from .quantization import ort_u8s8, shifted_float
from .quantized_recurrent import _dynamic_uint8
from .registry import op
from .util import check_made

MS = "com.microsoft"


def _activation(n, y, name, params):
    """ONNX Runtime's fused activations (MLAS_ACTIVATION): name and its float parameters."""
    bl = n.b
    if name in ("", "Identity", None):
        return y
    if name == "Relu":
        return bl.relu(y)
    if name == "Tanh":
        return bl.tanh(y)
    if name == "Sigmoid":
        return bl.sigmoid(y)
    if name == "LeakyRelu":
        return bl.leaky_relu(y, alpha=float(params[0]) if params else 0.01)
    if name == "Clip":
        if len(params) != 2:
            n.fail(f"activation Clip needs 2 parameters (min, max), got {list(params)}")
        return bl.clamp(y, min_value=float(params[0]), max_value=float(params[1]))
    if name == "HardSigmoid":
        alpha, beta = (list(params) + [0.2, 0.5][len(params) :])[:2]
        return bl.hard_sigmoid(y, alpha=float(alpha), beta=float(beta))
    n.fail(f"fused activation '{name}' is not supported")


@op("FusedConv", domain=MS)
def fused_conv(n):
    """Conv (+ bias), then + Z (input 3, a fused residual Add), then the activation."""
    y = conv_operands(n, n.x(0), n.x(1), n.x(2) if n.has(2) else None)
    if n.has(3):
        y = n.b.add(y, n.x(3))
    return _activation(n, y, n.attr("activation"), list(n.attr("activation_params", [])))


@op("FusedGemm", domain=MS)
def fused_gemm(n):
    name = n.attr("activation")
    params = {
        "LeakyRelu": [n.attr("activation_alpha", 0.01)],
        "HardSigmoid": [n.attr("activation_alpha", 0.2), n.attr("activation_beta", 0.5)],
        "Clip": [n.attr("activation_alpha"), n.attr("activation_beta")],
    }.get(name, [])
    if name == "Clip" and None in params:
        n.fail("activation Clip needs activation_alpha (min) and activation_beta (max)")
    return _activation(n, gemm(n), name, params)


def _scale_operand(n, i, rank):
    """A per-tensor or per-column scale input as a float32 operand broadcasting over the
    product [..., M, N]."""
    v = n.value(i)
    if isinstance(v, np.ndarray):
        v = v.astype(np.float32)
        shape = [1] * rank if v.size == 1 else [1] * (rank - 1) + [v.size]
        return n.importer.operand(np.ascontiguousarray(v.reshape(shape)))
    size = int(np.prod(n.static_shape(i)))
    shape = [1] * rank if size == 1 else [1] * (rank - 1) + [size]
    return n.b.reshape(n.x(i), shape)


def _scaled(n, acc, a_scale, b_scale_index, bias_index):
    """acc * (a_scale * b_scale) [+ bias], the float32 operations of the unfused chain."""
    bl = n.b
    rank = len(bl.operand_shape(acc))
    scale = bl.mul(bl.reshape(a_scale, [1] * rank), _scale_operand(n, b_scale_index, rank))
    y = bl.mul(acc, scale)
    if n.has(bias_index):
        y = bl.add(y, n.x(bias_index))
    return y


@op("MatMulIntegerToFloat", domain=MS)
def matmul_integer_to_float(n):
    """A [..., M, K] (8-bit), B [K, N] (8-bit), a_scale, b_scale, a_zero_point, b_zero_point,
    bias: (A - a_zp) @ (B - b_zp) * (a_scale * b_scale) + bias."""
    a = shifted_float(n, 0, 4)
    b = shifted_float(n, 1, 5)
    acc = ort_u8s8(n, matmul_nd(n, a, b), 0, 1)
    return _scaled(n, acc, n.x(2), 3, 6)


@op("DynamicQuantizeMatMul", domain=MS)
def dynamic_quantize_matmul(n):
    """A float, quantized at run time to uint8 as DynamicQuantizeLinear does (one scale for
    the whole tensor), times the 8-bit B: inputs A, B, b_scale, b_zero_point, bias."""
    if n.dtype(1) not in ("int8", "uint8"):
        n.fail(f"B of type {n.dtype(1)} (8-bit integers expected)")
    shifted, a_scale, raw, a_zp = _dynamic_uint8(n, n.x(0))
    b = shifted_float(n, 1, 3)
    acc = None
    if n.is_const(1) and n.rank(1) == 2 and n.rank(0) >= 2 and (not n.has(3) or n.is_const(3)):
        # raw @ b - zp * colsum(b) where that is exact: the cpu backend's int8 GEMM then runs it
        # (integer_matmul pass); the same integers as (raw - zp) @ b.
        b_const = n.c(1).astype(np.float64)
        if n.has(3):
            z = n.c(3).astype(np.float64)
            b_const = b_const - (z.reshape(1, -1) if z.size > 1 else z.reshape([]))
        if 255.0 * np.abs(b_const).sum(0).max(initial=0.0) < 2.0**24:
            colsum = n.importer.operand(b_const.sum(0).astype(np.float32))
            acc = n.b.sub(matmul_nd(n, raw, b), n.b.mul(a_zp, colsum))
    if acc is None:
        acc = matmul_nd(n, shifted, b)
    if n.is_const(1) and n.c(1).dtype == np.int8 and n.c(1).ndim == 2:
        acc = add_correction(n, acc, raw, n.c(1))
    return _scaled(n, acc, a_scale, 2, 4)


@op("QAttention", domain=MS)
def q_attention(n):
    """Attention with an 8-bit packed QKV projection: input (8-bit) [B, S, H], weight (8-bit)
    [H, 3H], bias, input_scale, weight_scale (per tensor or per column), mask_index,
    input_zero_point, weight_zero_point, past; qkv = (input - izp) @ (weight - wzp) *
    (input_scale * weight_scale) + bias, then com.microsoft Attention."""
    if n.attr("past_present_share_buffer", 0):
        n.fail("a shared past-present buffer is not supported")
    acc = matmul_nd(n, shifted_float(n, 0, 6), shifted_float(n, 1, 7))
    acc = ort_u8s8(n, acc, 0, 1)
    qkv = _scaled(n, acc, n.x(3), 4, 2)
    return attention_on_qkv(n, qkv, mask_index=5, past_index=8, bias_index=None)


@op("QEmbedLayerNormalization", domain=MS)
def q_embed_layer_norm(n):
    """EmbedLayerNormalization with 8-bit tables, each dequantized at import as ONNX Runtime
    does, (q - zero_point) * scale in float32: inputs 2-6 the quantized word / position /
    segment embeddings, gamma and beta, 8-12 their scales, 13-17 their zero points."""

    def table(i):
        if not n.has(i):
            return None
        q = n.c(i, what="a quantized table").astype(np.int32)
        scale = np.float32(n.c(i + 6, what="its scale").reshape(-1)[0])
        zp = n.c(i + 11, what="its zero point") if n.has(i + 11) else np.zeros(1, np.int32)
        shifted = (q - np.int32(zp.reshape(-1)[0])).astype(np.float32)
        return n.importer.operand(np.ascontiguousarray(shifted * scale, np.float32))

    y, mask, _ = embed_layer_norm_on(n, *[table(i) for i in (2, 3, 4, 5, 6)], mask_index=7,
                                     position_ids_index=None)  # fmt: skip
    return [y, mask]


@op("QLinearAveragePool", domain=MS)
def qlinear_average_pool(n):
    """ONNX Runtime's integer average pool: per window the exact sum of (x - x_zp), then
    round_half_even(sum * (x_scale / y_scale) / count + y_zp) in float32, saturated (count: the
    window's input positions, or with count_include_pad those inside the declared pads).
    channels_last=1 (NHWC) is transposed around; 1-D and 2-D pools."""
    from .nn import _auto_pads, _pool_out_size
    from .pool_geometry import auto_pad_attr

    bl = n.b
    rank = n.rank(0)
    if rank not in (3, 4):
        n.fail(f"QLinearAveragePool of rank {rank} (1-D and 2-D pools are supported)")
    channels_last = bool(n.attr("channels_last", 0))
    x = shifted_float(n, 0, 2)
    if channels_last:
        x = bl.transpose(x, [0, rank - 1] + list(range(1, rank - 1)))
    shape = bl.operand_shape(x)
    if rank == 3:
        x = bl.reshape(x, [shape[0], shape[1], 1, shape[2]])
    batch, channels = shape[0], shape[1]
    spatial = list(shape[2:])
    k = len(spatial)
    kernel = [int(v) for v in n.attr("kernel_shape")]
    strides = [int(v) for v in n.attr("strides", [1] * k)]
    if len(kernel) != k or len(strides) != k or min(kernel + strides) < 1:
        n.fail(f"kernel_shape {kernel} and strides {strides} must be {k} positive values")
    auto_pad = auto_pad_attr(n)
    ceil_mode = int(n.attr("ceil_mode", 0))
    if auto_pad in ("", "NOTSET"):
        pads = [int(v) for v in n.attr("pads", [0] * (2 * k))]
        begin, end = pads[:k], pads[k:]
    else:
        begin, end = _auto_pads(n, spatial, kernel, strides, [1] * k, auto_pad)
    outs = [
        _pool_out_size(spatial[i], kernel[i], strides[i], 1, begin[i], end[i], ceil_mode)
        for i in range(k)
    ]
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        outs = [-(-spatial[i] // strides[i]) for i in range(k)]
    if min(outs) < 1:
        n.fail(f"the output size {outs} of kernel {kernel} over {spatial} is not positive")
    # The window counts and the window-sum filter are made at import from declared sizes.
    check_made(n, "QLinearAveragePool's window counts", outs)
    check_made(n, "QLinearAveragePool's window-sum filter", [channels, 1] + kernel)
    include_pad = bool(n.attr("count_include_pad", 0))
    counts = []
    for i in range(k):
        start = np.arange(outs[i]) * strides[i] - begin[i]
        stop = start + kernel[i]
        if include_pad:
            c = np.minimum(stop, spatial[i] + end[i]) - start
        else:
            c = np.minimum(stop, spatial[i]) - np.maximum(start, 0)
        counts.append(c.astype(np.float32))
    if k == 2:
        count = (counts[0].reshape(-1, 1) * counts[1].reshape(1, -1)).reshape([1, 1] + outs)
    else:
        count = counts[0].reshape([1, 1, outs[0]])
    # The exact window sums: a depthwise convolution with ones, zero-padded so that every
    # output window exists.
    kernel2, strides2 = ([1] + kernel, [1] + strides) if k == 1 else (kernel, strides)
    in2, begin2, outs2 = (
        ([1] + spatial, [0] + begin, [1] + outs) if k == 1 else (spatial, begin, outs)
    )
    end2 = [(outs2[i] - 1) * strides2[i] + kernel2[i] - in2[i] - begin2[i] for i in range(2)]
    if min(end2) < 0:
        x = bl.slice(
            x, [0, 0, 0, 0], [batch, channels] + [in2[i] + min(0, end2[i]) for i in range(2)]
        )
        end2 = [max(0, e) for e in end2]
    ones = n.importer.operand(np.ones([channels, 1] + kernel2, np.float32))
    sums = bl.conv2d(x, ones, padding=[begin2[0], end2[0], begin2[1], end2[1]],
                     strides=strides2, groups=channels)  # fmt: skip
    if rank == 3:
        sums = bl.reshape(sums, [batch, channels, outs[0]])
    ratio = bl.div(bl.reshape(n.x(1), [1] * rank), bl.reshape(n.x(3), [1] * rank))
    y = bl.div(bl.mul(sums, ratio), n.importer.operand(np.ascontiguousarray(count)))
    out_dtype = n.np_dtype(0)
    if n.has(4):
        y = bl.add(y, bl.cast(bl.reshape(n.x(4), [1] * rank), "float32"))
    zero = n.importer.operand(np.zeros([1] * rank, out_dtype))
    y = bl.quantize_linear(y, n.importer.operand(np.ones([1] * rank, np.float32)), zero)
    if channels_last:
        y = bl.transpose(y, [0] + list(range(2, rank)) + [1])
    return y


def _requantize_table(src_scale, src_zp, dst_scale, dst_zp, dtype):
    """The 256-entry table v -> quantize(dequantize(v)) as ONNX Runtime's lookup-table kernels
    build it: (v - zp) * scale in float32, then / scale, rounded half to even, + zp, saturated."""
    info = np.iinfo(dtype)
    v = np.arange(info.min, info.max + 1).astype(np.int32)
    real = ((v - np.int32(src_zp)).astype(np.float32) * np.float32(src_scale)).astype(np.float32)
    q = np.rint((real / np.float32(dst_scale)).astype(np.float32)).astype(np.int64)
    return np.clip(q + int(dst_zp), info.min, info.max).astype(dtype)


@op("QLinearWhere", domain=MS)
def qlinear_where(n):
    """condition, X, x_scale, x_zp, Y, y_scale, y_zp, z_scale, z_zp: X and Y re-quantized to
    Z's parameters (one 256-entry table each, from the constant scales), then selected."""
    bl = n.b
    dtype = n.np_dtype(1)
    if dtype not in (np.uint8, np.int8):
        n.fail(f"QLinearWhere on {dtype} (8-bit inputs expected)")

    def scalar(i):
        return n.c(i, what="a scale or zero point").reshape(-1)[0]

    zs, zz = scalar(7), scalar(8)
    picked = []
    for value, s, z in ((1, 2, 3), (4, 5, 6)):
        table = _requantize_table(scalar(s), scalar(z), zs, zz, dtype)
        offset = -int(np.iinfo(dtype).min)
        index = bl.cast(n.x(value), "int32")
        if offset:
            index = bl.add(index, n.const(offset, "int32"))
        picked.append(bl.gather(n.importer.operand(table), index, 0))
    return bl.where(n.x(0), picked[0], picked[1])
