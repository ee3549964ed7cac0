"""Attention (opset 23+), decomposed as the ONNX function body defines it.

QK = (Q * sqrt(scale)) @ (K * sqrt(scale))^T, optional softcap, plus a bias built from the
attention mask, causal / sliding-window masks and nonpad_kv_seqlen; softmax over the keys,
rows whose bias is -inf everywhere give 0; Y = softmax @ V. Grouped-query attention repeats
the key/value heads.
"""

import numpy as np

from .registry import op
from .util import check_made, zeros


def _heads_first(n, x, heads):
    bl = n.b
    b, s, hidden = bl.operand_shape(x)
    if isinstance(hidden, int) and (hidden < heads or hidden % heads):
        # hidden // heads would be a head size of 0 (and 1 / sqrt(0) a numpy warning)
        n.fail(f"a hidden size of {hidden} does not split into {heads} heads")
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
        if not qh or not kvh or qh < 0 or kvh < 0:
            n.fail(f"3-D inputs need positive q_num_heads and kv_num_heads ({qh}, {kvh} given)")
        q, k, v = _heads_first(n, q, qh), _heads_first(n, k, kvh), _heads_first(n, v, kvh)
    elif rank != 4:
        n.fail(f"inputs of rank {rank}")
    shapes = [bl.operand_shape(t) for t in (q, k, v)]
    if len({len(s) for s in shapes}) != 1 or len({s[0] for s in shapes}) != 1:
        n.fail(f"query, key and value of shapes {[n.static_shape(i) for i in range(3)]} (one "
               "rank and batch expected)")  # fmt: skip
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
        if not isinstance(head, int) or head < 1:
            n.fail(f"head size {head}: the default scale 1 / sqrt(head size) needs a static, "
                   "positive one (give scale=)")  # fmt: skip
        scale = 1.0 / np.sqrt(head)
    # sqrt(scale) on Q and on K (for float16 range); a negative scale goes on Q's side.
    s = np_dtype(np.sqrt(np.float32(abs(scale))))
    s_q = -s if scale < 0 else s
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
                check_made(n, "the mask's padding", list(mshape[:-1]) + [pad])
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
    qk = bl.matmul(bl.mul(q, n.const(s_q, dtype)), bl.transpose(bl.mul(k, sc), [0, 1, 3, 2]))
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
    out = rotate_half_heads(bl, x4, cos_op, sin_op, rot, interleaved)
    if rank == 3:
        return bl.reshape(out, shape)
    return bl.transpose(out, [0, 2, 1, 3])


def rotate_half_heads(bl, x4, cos_op, sin_op, rot, interleaved):
    """Rotary embedding of x4 [b, s, heads, head] on its first `rot` features: x * cos +
    rotate_half(x) * sin (halves, or even/odd pairs when interleaved), with cos / sin of shape
    [b or 1, s, rot / 2]; the features past `rot` pass through. Each output element is
    x1 * cos - x2 * sin or x2 * cos + x1 * sin, as ONNX Runtime computes it."""
    b, s, heads_n, head = bl.operand_shape(x4)
    cs = bl.operand_shape(cos_op)
    half = cs[-1]
    cos_op = bl.reshape(cos_op, cs[:-1] + [1, half])
    sin_op = bl.reshape(sin_op, cs[:-1] + [1, half])
    xr = bl.slice(x4, [0, 0, 0, 0], [b, s, heads_n, rot]) if rot < head else x4
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
    return out


@op("TensorScatter")
def tensor_scatter(n):
    """KV-cache update (opset 24): update's positions 0..S-1 along `axis` written into the cache
    at write_indices[b] + i (modulo the cache length in circular mode). Per cache position j
    the source is i = j - write_indices[b] (mod length): a gather of update where 0 <= i < S,
    the old cache elsewhere; write indices may be run-time values."""
    bl = n.b
    shape = n.static_shape(0)
    rank = len(shape)
    axis = int(n.attr("axis", -2))
    axis = axis + rank if axis < 0 else axis
    if not 0 < axis < rank:
        n.fail(
            f"axis {n.attr('axis', -2)} for a cache of rank {rank} (the batch axis 0 cannot be it)"
        )
    mode = n.attr("mode", "linear")
    if mode not in ("linear", "circular"):
        n.fail(f"mode '{mode}' (linear or circular expected)")
    length = shape[axis]
    upd_shape = n.static_shape(1)
    seq = upd_shape[axis]
    batch = shape[0]
    check_made(n, "the write positions", [batch, length])
    j_shape = [1] * rank
    j_shape[axis] = length
    j = np.arange(length, dtype=np.int32).reshape(j_shape)
    w_shape = [batch] + [1] * (rank - 1)
    if n.has(2) and not n.is_const(2):
        w = bl.reshape(bl.cast(n.x(2), "int32"), w_shape)
        src = bl.sub(n.importer.operand(j), w)
        if mode == "circular":
            # (j - w) mod length for w in [0, length): add length where negative
            src = bl.where(bl.lesser(src, n.const(0, "int32")),
                           bl.add(src, n.const(length, "int32")), src)  # fmt: skip
        inside = bl.logical_and(bl.greater_or_equal(src, n.const(0, "int32")),
                                bl.lesser(src, n.const(seq, "int32")))  # fmt: skip
        src = bl.clamp(src, min_value=0, max_value=seq - 1)
    else:
        w = n.c(2).astype(np.int64).reshape(w_shape) if n.has(2) else np.zeros(w_shape, np.int64)
        src = j - w
        if mode == "circular":
            src = np.mod(src, length)
        inside_np = (src >= 0) & (src < seq)
        src = n.importer.operand(np.clip(src, 0, seq - 1).astype(np.int32))
        inside = n.importer.operand(inside_np.astype(np.uint8))
    full = list(shape)
    index = bl.expand(src, [batch] + upd_shape[1:axis] + [length] + upd_shape[axis + 1 :])
    picked = bl.gather_elements(n.x(1), index, axis)
    return bl.where(bl.expand(inside, full), picked, n.x(0))


@op("CausalConvWithState")
def causal_conv_with_state(n):
    """Stateful causal depthwise 1-D convolution (opset 27, Mamba / Gated DeltaNet): the input
    [B, C, L] after the carried state [B, C, k - 1] (zeros when absent), a valid depthwise
    convolution (+ bias, optional SiLU); present_state is the last k - 1 positions."""
    bl = n.b
    batch, channels, length = n.static_shape(0)
    wshape = n.static_shape(1)
    if len(wshape) != 3 or wshape[0] != channels or wshape[1] != 1:
        n.fail(f"weight of shape {wshape} (expected [{channels}, 1, k])")
    k = wshape[2]
    activation = n.attr("activation", "none")
    if activation not in ("none", "silu", "swish"):
        n.fail(f"activation '{activation}' (none, silu or swish expected)")
    x = n.x(0)
    if k > 1:
        past = n.x(3) if n.has(3) else zeros(n, [batch, channels, k - 1], n.dtype(0))
        x = bl.concat([past, x], 2)
    total = length + k - 1
    y = bl.conv2d(
        bl.reshape(x, [batch, channels, 1, total]),
        bl.reshape(n.x(1), [channels, 1, 1, k]),
        groups=channels,
        bias=n.x(2) if n.has(2) else None,
    )
    y = bl.reshape(y, [batch, channels, length])
    if activation != "none":
        y = bl.mul(y, bl.sigmoid(y))
    if k > 1:
        state = bl.slice(x, [0, 0, total - (k - 1)], [batch, channels, k - 1])
    else:
        state = None
    return [y, state] if state is not None else [y]


MAX_LINEAR_ATTENTION_STEPS = 512


@op("LinearAttention")
def linear_attention(n):
    """Linear attention (opset 27: linear, gated, delta and gated-delta rules), unrolled over
    the T tokens as the recurrence defines it: per step the state [B, H_kv, d_k, d_v] decays by
    exp(g), takes beta * (v - S^T k) (delta rules) as k ⊗ v, and each query head reads
    scale * q^T S of its key/value head."""
    bl = n.b
    rule = n.attr("update_rule", "gated_delta")
    if rule not in ("linear", "gated", "delta", "gated_delta"):
        n.fail(f"update_rule '{rule}'")
    hq, hkv = n.attr("q_num_heads"), n.attr("kv_num_heads")
    if not hq or not hkv or hq % hkv:
        n.fail(f"q_num_heads={hq} must be a positive multiple of kv_num_heads={hkv}")
    gating, delta = rule in ("gated", "gated_delta"), rule in ("delta", "gated_delta")
    if gating != n.has(4) or delta != n.has(5):
        n.fail(f"update_rule '{rule}' {'needs' if gating else 'forbids'} decay and "
               f"{'needs' if delta else 'forbids'} beta")  # fmt: skip
    b, t, qw = n.static_shape(0)
    if t > MAX_LINEAR_ATTENTION_STEPS:
        n.fail(f"{t} tokens (it is unrolled; at most {MAX_LINEAR_ATTENTION_STEPS})")
    dk, dv = qw // hq, n.static_shape(2)[2] // hkv
    if dk < 1 or dv < 1:
        n.fail(f"head sizes {dk} (query/key) and {dv} (value) must be positive: the widths "
               f"{qw} and {n.static_shape(2)[2]} do not split into {hq} and {hkv} heads")  # fmt: skip
    dt = n.dtype(0)
    scale = float(n.attr("scale", 0.0)) or 1.0 / np.sqrt(dk)

    def heads(i, h):
        x = bl.reshape(n.x(i), [b, t, h, n.static_shape(i)[2] // h])
        return bl.transpose(x, [0, 2, 1, 3])  # [B, H, T, D]

    def step(x, i):
        s = bl.operand_shape(x)
        return bl.slice(x, [0, 0, i, 0], [s[0], s[1], 1, s[3]])  # [B, H, 1, D]

    q4, k4, v4 = heads(0, hq), heads(1, hkv), heads(2, hkv)
    decay = beta = None
    if gating:
        last = n.static_shape(4)[2]
        if last not in (hkv, hkv * dk):
            n.fail(f"decay of width {last} (kv_num_heads or kv_num_heads * d_k expected)")
        decay = heads(4, hkv)  # [B, H_kv, T, 1 or d_k]
    if delta:
        last = n.static_shape(5)[2]
        if last not in (hkv, 1):
            n.fail(f"beta of width {last} (kv_num_heads or 1 expected)")
        beta = heads(5, last)  # [B, H_kv or 1, T, 1]
    if n.has(3):
        state = n.x(3)
    else:
        state = zeros(n, [b, hkv, dk, dv], n.dtype(0))
    outs = []
    for i in range(t):
        k_t, v_t = step(k4, i), step(v4, i)  # [B, H_kv, 1, d]
        if gating:
            g = bl.exp(step(decay, i))  # [B, H_kv, 1, 1 or d_k]
            state = bl.mul(state, bl.transpose(g, [0, 1, 3, 2]))
        if delta:
            retrieved = bl.matmul(k_t, state)  # [B, H_kv, 1, d_v]
            v_t = bl.mul(step(beta, i), bl.sub(v_t, retrieved))
        state = bl.add(state, bl.matmul(bl.transpose(k_t, [0, 1, 3, 2]), v_t))
        read = state if hq == hkv else _repeat_heads(n, state, hq // hkv)
        o = bl.mul(bl.matmul(step(q4, i), read), n.const(scale, dt))  # [B, H_q, 1, d_v]
        outs.append(o)
    y = bl.concat(outs, 2) if t > 1 else outs[0]
    y = bl.reshape(bl.transpose(y, [0, 2, 1, 3]), [b, t, hq * dv])
    return [y, state]
