"""com.microsoft DynamicQuantizeLSTM (what ONNX Runtime's quantize_dynamic makes of an LSTM),
unrolled over time as ONNX Runtime computes it.

Its weights are 8-bit; at run time ONNX Runtime quantizes the GEMM inputs to uint8 with a scale
from their own min/max (range widened to include 0; scale 1 for an all-zero input): the whole
input sequence X once per direction, the hidden state h once per step. Each GEMM is exact in
integers and scaled by a_scale * w_scale; gates add X·W, then h·R, then the combined bias,
in float. A float LSTM on dequantized weights differs from that by the activation rounding
(~1e-2 relative), so the integer form is reproduced step by step. h is quantized over the
whole batch, as a single-threaded ONNX Runtime does; with more threads ORT splits a batch of
more than one sequence into per-thread slices (min/max per slice), which changes its result.
"""

import numpy as np

from .ort_u8s8 import add_correction
from .quantization import quantize_like_onnx
from .recurrent import concat_or_one, stack_directions
from .registry import op
from .util import zeros as zero_tensor


def _dynamic_uint8(n, x):
    """x quantized as ONNX Runtime's GetQuantizationParameter + MlasQuantizeLinear do, returned
    as (q - zero_point) in float32 (exact) and the scale, shape [1]."""
    bl = n.b
    rank = len(bl.operand_shape(x))
    axes = list(range(rank))
    zero = n.const(0.0, "float32")
    lo = bl.min(bl.reshape(bl.reduce_min(x, axes, False), [1]), zero)
    hi = bl.max(bl.reshape(bl.reduce_max(x, axes, False), [1]), zero)
    spread = bl.div(bl.sub(hi, lo), n.const(255.0, "float32"))
    scale = bl.where(bl.equal(hi, lo), n.const(1.0, "float32"), spread)
    zp = bl.clamp(bl.round_even(bl.sub(zero, bl.div(lo, scale))), min_value=0.0, max_value=255.0)
    ones = [1] * rank
    q = quantize_like_onnx(n, x, bl.reshape(scale, ones), bl.reshape(bl.cast(zp, "uint8"), ones))
    raw = bl.cast(q, "float32")
    return bl.sub(raw, bl.reshape(zp, ones)), scale, raw, zp


def _exact_product(n, shifted, raw, zp, w, w_int, w_exact, by_raw):
    """(x_q - zp) @ w as ONNX Runtime's kernels compute it (ort_u8s8.py), float32. With by_raw,
    where every float32 partial sum of x_q @ w is an integer below 2^24 (255 * sum|w| per
    column), it is formed as x_q @ w - zp * colsum(w): the same exact integers, and a matmul of
    cast(uint8) by integer weights, which the cpu backend runs on its int8 GEMM (the
    integer_matmul pass; only for products of many rows, so the per-step h products, of batch
    rows, keep the shifted form and no extra zp * colsum node)."""
    bl = n.b
    w_np = w_exact.astype(np.float64)  # w - its zero point, as the operand w holds it
    if by_raw and 255.0 * np.abs(w_np).sum(0).max(initial=0.0) < 2.0**24:
        colsum = n.importer.operand(w_np.sum(0).astype(np.float32))
        acc = bl.sub(bl.matmul(raw, w), bl.mul(zp, colsum))
    else:
        acc = bl.matmul(shifted, w)
    return add_correction(n, acc, raw, w_int)


def _weights(n, index, scale_index, zp_index, num_dir, hidden):
    """Per direction: (w - zero_point) as a float32 operand [K, 4H], the scale as [1] or [4H],
    and (w - zero_point) as numpy int64."""
    w = n.c(index, what="quantized weight").astype(np.float64)
    scale = n.c(scale_index, what="weight scale").astype(np.float32)
    zp = n.c(zp_index, what="weight zero point") if n.has(zp_index) else np.zeros_like(scale)
    if scale.shape not in ((num_dir,), (num_dir, 4 * hidden)):
        n.fail(f"weight scale of shape {list(scale.shape)} (expected [{num_dir}] or "
               f"[{num_dir}, {4 * hidden}])")  # fmt: skip
    out = []
    for d in range(num_dir):
        z = zp[d].astype(np.float64)
        shifted = w[d] - (z.reshape(1, -1) if z.ndim else z)
        s = scale[d].reshape(-1)
        op = n.importer.operand
        out.append((op(np.ascontiguousarray(shifted.astype(np.float32))), op(s), shifted))
    return out


@op("DynamicQuantizeLSTM", domain="com.microsoft")
def dynamic_quantize_lstm(n):
    bl = n.b
    for attr in ("clip", "activations"):
        if n.attr(attr) is not None:
            n.fail(f"the {attr} attribute is not supported")
    if n.attr("input_forget", 0):
        n.fail("input_forget (coupled gates) is not supported")
    if n.has(7):
        n.fail("peephole weights (input P) are not supported")
    xshape = n.shape(0)
    if len(xshape) != 3:
        n.fail(f"input X must have rank 3 (got shape {xshape})")
    steps, batch, _ = xshape
    hidden = int(n.attr("hidden_size"))
    direction = n.attr("direction", "forward")
    if isinstance(direction, bytes):
        direction = direction.decode()
    num_dir = 2 if direction == "bidirectional" else 1
    if n.has(4) and not np.all(n.c(4, what="sequence_lens") == steps):
        n.fail("sequence_lens shorter than the sequence are not supported")
    ws = _weights(n, 1, 8, 9, num_dir, hidden)
    rs = _weights(n, 2, 10, 11, num_dir, hidden)
    bias = n.c(3, what="bias").astype(np.float32) if n.has(3) else None
    x = n.x(0)
    x_shifted, x_scale, x_raw, x_zp = _dynamic_uint8(n, bl.reshape(x, [steps * batch, xshape[2]]))
    w_int = n.c(1, what="quantized weight")
    r_int = n.c(2, what="quantized recurrent weight")
    zeros = zero_tensor(n, [batch, hidden], "float32")

    def part(t, d):
        return bl.reshape(bl.slice(t, [d, 0, 0], [1, batch, hidden]), [batch, hidden])

    def gate(g, k):
        return bl.slice(g, [0, k * hidden], [batch, hidden])

    ys, hs, cs = [], [], []
    for d in range(num_dir):
        (w, w_scale, w_exact), (r, r_scale, r_exact) = ws[d], rs[d]
        # uint8 x int8 products as ONNX Runtime's kernels compute them (ort_u8s8.py).
        xw = _exact_product(n, x_shifted, x_raw, x_zp, w, w_int[d], w_exact, True)
        xw = bl.mul(xw, bl.mul(x_scale, w_scale))  # [steps*batch, 4H]
        b = None
        if bias is not None:
            b = n.importer.operand(bias[d, : 4 * hidden] + bias[d, 4 * hidden :])
        h = part(n.x(5), d) if n.has(5) else zeros
        c = part(n.x(6), d) if n.has(6) else zeros
        backward = direction == "reverse" or d == 1
        outs = [None] * steps
        for t in range(steps - 1, -1, -1) if backward else range(steps):
            h_shifted, h_scale, h_raw, h_zp = _dynamic_uint8(n, h)
            hr = _exact_product(n, h_shifted, h_raw, h_zp, r, r_int[d], r_exact, False)
            hr = bl.mul(hr, bl.mul(h_scale, r_scale))
            g = bl.add(bl.slice(xw, [t * batch, 0], [batch, 4 * hidden]), hr)
            if b is not None:
                g = bl.add(g, b)
            i, o = bl.sigmoid(gate(g, 0)), bl.sigmoid(gate(g, 1))
            f, cand = bl.sigmoid(gate(g, 2)), bl.tanh(gate(g, 3))
            c = bl.add(bl.mul(f, c), bl.mul(i, cand))
            h = bl.mul(o, bl.tanh(c))
            outs[t] = bl.reshape(h, [1, 1, batch, hidden])
        ys.append(concat_or_one(bl, outs, 0))
        hs.append(bl.reshape(h, [1, batch, hidden]))
        cs.append(bl.reshape(c, [1, batch, hidden]))
    y, yh, yc = stack_directions(bl, ys, hs, cs)
    return [y, yh, yc]
