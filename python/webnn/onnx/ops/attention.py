"""Attention (opset 23+), decomposed as the ONNX function body defines it.

QK = (Q * sqrt(scale)) @ (K * sqrt(scale))^T, optional softcap, plus a bias built from the
attention mask, causal / sliding-window masks and nonpad_kv_seqlen; softmax over the keys,
rows whose bias is -inf everywhere give 0; Y = softmax @ V. Grouped-query attention repeats
the key/value heads.
"""

import numpy as np

from .registry import op


def _heads_first(n, x, heads):
    bl = n.b
    b, s, hidden = bl.operand_shape(x)
    x = bl.reshape(x, [b, s, heads, hidden // heads])
    return bl.transpose(x, [0, 2, 1, 3])


def _repeat_heads(n, x, reps):
    bl = n.b
    b, h, s, d = bl.operand_shape(x)
    x = bl.reshape(x, [b, h, 1, s, d])
    x = bl.expand(x, [b, h, reps, s, d])
    return bl.reshape(x, [b, h * reps, s, d])


MAX_MASK_ELEMENTS = 1 << 26  # the constant mask made at import (64 MiB of bool)


@op("Attention")
def attention(n):
    bl = n.b
    q, k, v = n.x(0), n.x(1), n.x(2)
    rank = n.rank(0)
    dtype = n.dtype(0)
    np_dtype = np.float16 if dtype == "float16" else np.float32
    qh, kvh = n.attr("q_num_heads"), n.attr("kv_num_heads")
    if rank == 3:
        if qh is None or kvh is None:
            n.fail("3-D inputs need q_num_heads and kv_num_heads")
        q, k, v = _heads_first(n, q, qh), _heads_first(n, k, kvh), _heads_first(n, v, kvh)
    elif rank != 4:
        n.fail(f"inputs of rank {rank}")
    batch, q_heads, q_len, head = bl.operand_shape(q)
    past = n.has(4)
    if past:
        k = bl.concat([n.x(4), k], 2)
        v = bl.concat([n.x(5), v], 2)
    present_k, present_v = k, v
    kv_heads, kv_len = bl.operand_shape(k)[1], bl.operand_shape(k)[2]
    past_len = n.shape(4)[2] if past else 0
    scale = n.attr("scale")
    if scale is None:
        scale = 1.0 / np.sqrt(head)
    s = np_dtype(np.sqrt(np.float32(scale)))
    neg_inf = np_dtype(-np.inf)

    # The bias: constant parts (causal, sliding window) in numpy, the rest as operands.
    if q_len * kv_len > MAX_MASK_ELEMENTS:  # declared lengths of 2^31 - 1: MemoryError (fuzzer)
        n.fail(f"a {q_len} x {kv_len} attention mask is too large to import")
    i_idx = np.arange(q_len).reshape(q_len, 1)
    j_idx = np.arange(kv_len).reshape(1, kv_len)
    allowed = np.ones((q_len, kv_len), dtype=bool)
    nonpad = n.has(6)
    left, right = int(n.attr("left_window_size", -1)), int(n.attr("right_window_size", -1))
    if nonpad and (n.attr("is_causal", 0) or left >= 0 or right >= 0):
        n.c(6, what="nonpad_kv_seqlen, which offsets the causal/sliding-window mask")
    offsets = None
    if nonpad and n.is_const(6):
        offsets = n.c(6).reshape(-1, 1, 1).astype(np.int64) - q_len
    offset = offsets if offsets is not None else past_len
    if n.attr("is_causal", 0):
        allowed = allowed & (j_idx <= i_idx + offset)
    diff = (i_idx + offset) - j_idx
    if left >= 0:
        allowed = allowed & (diff <= left)
    if right >= 0:
        allowed = allowed & (-diff <= right)
    if allowed.ndim == 3:
        allowed = allowed.reshape(allowed.shape[0], 1, q_len, kv_len)
    const_bias = np.where(allowed, np_dtype(0), neg_inf).astype(np_dtype)
    bias_parts = []
    if n.has(3):
        mask_value = n.value(3)
        mshape = n.shape(3)
        pad = kv_len - mshape[-1]
        if isinstance(mask_value, np.ndarray):
            m = mask_value
            if pad > 0:
                fill = False if m.dtype == np.bool_ else -np.inf
                m = np.pad(m, [(0, 0)] * (m.ndim - 1) + [(0, pad)], constant_values=fill)
            if m.dtype == np.bool_:
                m = np.where(m, np_dtype(0), neg_inf)
            const_bias = (const_bias + m.astype(np_dtype)).astype(np_dtype)
        else:
            m = n.x(3)
            is_bool = n.np_dtype(3) == np.bool_ or n.dtype(3) == "uint8"
            if is_bool:
                m = bl.where(m, n.const(0, dtype), n.const(-np.inf, dtype))
            elif n.dtype(3) != dtype:
                m = bl.cast(m, dtype)
            if pad > 0:
                fill = np.full(list(mshape[:-1]) + [pad], neg_inf, np_dtype)
                m = bl.concat([m, n.importer.operand(fill)], len(mshape) - 1)
            bias_parts.append(m)
    if nonpad and not n.is_const(6):
        lens = n.x(6)
        ar = n.importer.operand(np.arange(kv_len, dtype=n.np_dtype(6)).reshape(1, 1, 1, kv_len))
        keep = bl.lesser(ar, bl.reshape(lens, [batch, 1, 1, 1]))
        bias_parts.append(bl.where(keep, n.const(0, dtype), n.const(-np.inf, dtype)))
    elif nonpad:
        lens = n.c(6).reshape(-1)
        keep = np.arange(kv_len)[None, :] < lens[:, None]
        pm = np.where(keep, np_dtype(0), neg_inf).reshape(batch, 1, 1, kv_len)
        const_bias = (const_bias + pm).astype(np_dtype)

    if q_heads != kv_heads:
        if q_heads % kv_heads:
            n.fail(f"{q_heads} query heads are not a multiple of {kv_heads} key/value heads")
        k = _repeat_heads(n, k, q_heads // kv_heads)
        v = _repeat_heads(n, v, q_heads // kv_heads)
    sc = n.const(s, dtype)
    qk = bl.matmul(bl.mul(q, sc), bl.transpose(bl.mul(k, sc), [0, 1, 3, 2]))
    softcap = n.attr("softcap")
    if softcap is not None and softcap > 0:
        cap = n.const(softcap, dtype)
        qk = bl.mul(bl.tanh(bl.div(qk, cap)), cap)
    qk_out = qk
    bias = (
        n.importer.operand(np.require(const_bias, requirements="C"))
        if (const_bias != 0).any()
        else None
    )
    for part in bias_parts:
        bias = part if bias is None else bl.add(bias, part)
    with_bias = qk if bias is None else bl.add(qk, bias)
    mode = int(n.attr("qk_matmul_output_mode", 0))
    if mode == 2:
        qk_out = with_bias
    probs = bl.softmax(with_bias, 3)
    # Rows masked everywhere give 0 (softmax of all -inf is NaN).
    if bias_parts:
        masked = bl.equal(bl.reduce_max(bias, [len(bl.operand_shape(bias)) - 1], True),
                          n.const(-np.inf, dtype))  # fmt: skip
        probs = bl.where(masked, n.const(0, dtype), probs)
    elif np.isneginf(const_bias.max(axis=-1)).any():
        rows = np.isneginf(const_bias.max(axis=-1, keepdims=True))
        probs = bl.where(n.importer.operand(rows.astype(np.uint8)), n.const(0, dtype), probs)
    if mode == 3:
        qk_out = probs
    y = bl.matmul(probs, v)
    if rank == 3:
        y = bl.transpose(y, [0, 2, 1, 3])
        y = bl.reshape(y, [batch, q_len, q_heads * bl.operand_shape(v)[3]])
    return [y, present_k, present_v, qk_out]


@op("RotaryEmbedding")
def rotary_embedding(n):
    """x * cos + rotate_half(x) * sin on the first rotary_embedding_dim features of a head."""
    bl = n.b
    x = n.x(0)
    shape = n.static_shape(0)
    rank = len(shape)
    heads = n.attr("num_heads", 0)
    if rank == 3:
        if not heads:
            n.fail("3-D input needs num_heads")
        b, s, hidden = shape
        x4 = bl.reshape(x, [b, s, heads, hidden // heads])
    else:
        b, _, s, _ = shape
        x4 = bl.transpose(x, [0, 2, 1, 3])  # [b, s, h, d]
    head = bl.operand_shape(x4)[3]
    rot = int(n.attr("rotary_embedding_dim", 0)) or head
    interleaved = bool(n.attr("interleaved", 0))
    cos, sin = n.value(1), n.value(2)
    if n.has(3):
        pos = n.value(3)
        if (
            isinstance(pos, np.ndarray)
            and isinstance(cos, np.ndarray)
            and isinstance(sin, np.ndarray)
        ):
            cos, sin = cos[pos], sin[pos]
            cos_op, sin_op = n.importer.operand(cos), n.importer.operand(sin)
        else:
            cos_op = bl.gather(n.x(1), n.x(3), 0)
            sin_op = bl.gather(n.x(2), n.x(3), 0)
    else:
        cos_op, sin_op = n.x(1), n.x(2)
    # cos/sin: [b, s, rot/2] -> [b, s, 1, rot/2]
    cs = bl.operand_shape(cos_op)
    half = cs[-1]
    cos_op = bl.reshape(cos_op, cs[:-1] + [1, half])
    sin_op = bl.reshape(sin_op, cs[:-1] + [1, half])
    xr = bl.slice(x4, [0, 0, 0, 0], [b, s, bl.operand_shape(x4)[2], rot])
    heads_n = bl.operand_shape(x4)[2]
    if interleaved:
        pairs = bl.reshape(xr, [b, s, heads_n, half, 2])
        x1 = bl.reshape(
            bl.slice(pairs, [0, 0, 0, 0, 0], [b, s, heads_n, half, 1]), [b, s, heads_n, half]
        )
        x2 = bl.reshape(
            bl.slice(pairs, [0, 0, 0, 0, 1], [b, s, heads_n, half, 1]), [b, s, heads_n, half]
        )
    else:
        x1 = bl.slice(xr, [0, 0, 0, 0], [b, s, heads_n, half])
        x2 = bl.slice(xr, [0, 0, 0, half], [b, s, heads_n, half])
    r1 = bl.sub(bl.mul(x1, cos_op), bl.mul(x2, sin_op))
    r2 = bl.add(bl.mul(x2, cos_op), bl.mul(x1, sin_op))
    if interleaved:
        out = bl.reshape(
            bl.concat(
                [
                    bl.reshape(r1, [b, s, heads_n, half, 1]),
                    bl.reshape(r2, [b, s, heads_n, half, 1]),
                ],
                4,
            ),
            [b, s, heads_n, rot],
        )
    else:
        out = bl.concat([r1, r2], 3)
    if rot < head:
        rest = bl.slice(x4, [0, 0, 0, rot], [b, s, heads_n, head - rot])
        out = bl.concat([out, rest], 3)
    if rank == 3:
        return bl.reshape(out, shape)
    return bl.transpose(out, [0, 2, 1, 3])
