"""com.microsoft decoder operators with key/value caches: GroupQueryAttention and RotaryEmbedding
(what onnxruntime-genai's model builder and ORT's transformer optimizer emit for LLM-style
decoders), decomposed into WebNN operations with ONNX Runtime's CPU semantics."""

import numpy as np

from .attention import _repeat_heads, rotate_half_heads
from .registry import op
from .util import check_made, zeros

MS = "com.microsoft"


def _heads_first(bl, t, batch, length, heads):
    width = bl.operand_shape(t)[2]
    return bl.transpose(bl.reshape(t, [batch, length, heads, width // heads]), [0, 2, 1, 3])


def _rows(n, table_index, positions):
    """Rows `positions` ([b, s] numpy ints or an int32 operand) of the [max, d] cache input."""
    table = n.value(table_index)
    if isinstance(positions, np.ndarray) and isinstance(table, np.ndarray):
        if positions.size and (positions.min() < 0 or positions.max() >= table.shape[0]):
            n.fail(f"position ids outside the {table.shape[0]} rows of the cos/sin cache")
        return n.importer.operand(np.ascontiguousarray(table[positions]))
    if isinstance(positions, np.ndarray):
        positions = n.importer.operand(positions.astype(np.int32))
    return n.b.gather(n.x(table_index), positions, 0)


def _as_int32(n, i):
    x = n.x(i)
    return x if n.dtype(i) == "int32" else n.b.cast(x, "int32")


@op("RotaryEmbedding", domain=MS)
def ms_rotary_embedding(n):
    """input [B, S, hidden] or [B, N, S, head], position_ids [B, S] (or [1]: an offset for
    positions offset, offset + 1, ...), cos/sin caches [max positions, rotary dim / 2]."""
    bl = n.b
    if n.attr("is_packed_batching", 0):
        n.fail("is_packed_batching=1 is not supported")
    if float(n.attr("scale", 1.0)) != 1.0:
        n.fail(f"scale={n.attr('scale')} is not supported (only 1.0)")
    shape = n.static_shape(0)
    half = n.static_shape(2)[1]
    if len(shape) == 3:
        batch, seq, hidden = shape
        heads = int(n.attr("num_heads", 0)) or hidden // (2 * half)
        if hidden % heads:
            n.fail(f"hidden size {hidden} is not a multiple of num_heads={heads}")
        x4 = bl.reshape(n.x(0), [batch, seq, heads, hidden // heads])
    elif len(shape) == 4:
        batch, heads, seq, _ = shape
        x4 = bl.transpose(n.x(0), [0, 2, 1, 3])
    else:
        n.fail(f"input of rank {len(shape)} (3 or 4 expected)")
    head = bl.operand_shape(x4)[3]
    rot = int(n.attr("rotary_embedding_dim", 0)) or head
    if rot != 2 * half or rot > head:
        n.fail(f"rotary dimension {rot} does not match the cos/sin cache width {half}")
    pos_shape = n.static_shape(1)
    check_made(n, "the positions", [batch, seq])
    pos = n.value(1)
    if len(pos_shape) == 1 and pos_shape[0] == 1:
        # One offset: positions offset + 0 .. offset + S - 1 for every batch.
        steps = np.arange(seq, dtype=np.int64).reshape(1, seq)
        if isinstance(pos, np.ndarray):
            positions = pos.reshape(1, 1).astype(np.int64) + steps
        else:
            positions = bl.add(
                bl.reshape(_as_int32(n, 1), [1, 1]), n.importer.operand(steps.astype(np.int32))
            )
    elif pos_shape == [batch, seq]:
        positions = pos.astype(np.int64) if isinstance(pos, np.ndarray) else _as_int32(n, 1)
    else:
        n.fail(f"position_ids of shape {pos_shape} for batch {batch}, sequence {seq}")
    out = rotate_half_heads(
        bl, x4, _rows(n, 2, positions), _rows(n, 3, positions), rot,
        bool(n.attr("interleaved", 0)),
    )  # fmt: skip
    if len(shape) == 3:
        return bl.reshape(out, shape)
    return bl.transpose(out, [0, 2, 1, 3])


@op("GroupQueryAttention", domain=MS)
def group_query_attention(n):
    """query [B, S, N*H] (or packed Q|K|V when key is absent), key / value [B, S, kvN*H],
    past_key / past_value [B, kvN, P, H], seqlens_k [B] (total length - 1 per batch),
    total_sequence_length T, optional rotary caches, position ids, attention bias and head sinks.

    As ONNX Runtime's CPU kernel: batch b holds past_b = seqlens_k[b] + 1 - S valid past
    positions (0 for the first prompt, S == T); present = its past rows then the new keys,
    i.e. row j of present is past[j] for j < past_b, else new[j - past_b]; query s attends
    to keys j <= past_b + s (the last local_window_size of them, when set), with
    scores scale * q.k, then softcap, then the attention bias, then softmax (smooth softmax or a
    per-head sink as an extra logit)."""
    bl = n.b
    heads = int(n.attr("num_heads", 0))
    kv_heads = int(n.attr("kv_num_heads", 0))
    if heads <= 0 or kv_heads <= 0 or heads % kv_heads:
        n.fail(f"num_heads={heads} must be a positive multiple of kv_num_heads={kv_heads}")
    if (len(n.node.output) > 3 and n.node.output[3]) or n.attr("qk_output", 0):
        n.fail("the output_qk output (qk_output) is not supported")
    for name in ("k_quant_type", "v_quant_type"):
        if n.attr(name, "NONE") not in ("NONE", ""):
            n.fail(f"a quantized key/value cache ({name}={n.attr(name)}) is not supported")
    if n.attr("sliding_window_cache", 0):
        n.fail("sliding_window_cache=1 is not supported")
    if not n.attr("causal", 1):
        n.fail("causal=0 is not supported")
    for i, name in ((12, "k_scale"), (13, "v_scale"), (14, "q_norm_weight"),
                    (15, "k_norm_weight"), (16, "query_seqlens")):  # fmt: skip
        if n.has(i):
            n.fail(f"input {name} is not supported")
    dtype = n.dtype(0)
    np_dtype = np.float16 if dtype == "float16" else np.float32
    batch, seq, width = n.static_shape(0)
    if n.has(1):
        if not n.has(2) or n.rank(1) != 3 or n.rank(2) != 3:
            n.fail("key and value must both be given as [batch, sequence, kv_num_heads * head]")
        head = width // heads
        q, k, v = n.x(0), n.x(1), n.x(2)
    else:
        head = width // (heads + 2 * kv_heads)
        if head * (heads + 2 * kv_heads) != width:
            n.fail(f"packed QKV width {width} is not (num_heads + 2 * kv_num_heads) * head")
        q, k, v = bl.split(n.x(0), [heads * head, kv_heads * head, kv_heads * head], 2)
    q = _heads_first(bl, q, batch, seq, heads)
    k = _heads_first(bl, k, batch, seq, kv_heads)
    v = _heads_first(bl, v, batch, seq, kv_heads)

    total = int(np.asarray(n.c(6, what="total_sequence_length")).reshape(-1)[0])
    past_len = n.static_shape(3)[2] if n.has(3) else 0
    first_prompt = seq == total
    if first_prompt:
        if past_len > total:
            n.fail(f"a past buffer of {past_len} positions longer than the total {total}")
        present_len = total
    else:
        if past_len != total - seq:
            n.fail(
                f"a past buffer of {past_len} positions with {seq} new of {total} in total "
                "(a shared past/present buffer) is not supported; past must hold total - new"
            )
        present_len = total

    check_made(n, "the attention mask", [batch, seq, present_len])
    # Valid past positions per batch: numpy when known at import, else an int32 [B] operand.
    seqlens = n.value(5)
    if first_prompt:
        past_b = np.zeros(batch, np.int64)
    elif isinstance(seqlens, np.ndarray):
        past_b = seqlens.reshape(-1).astype(np.int64) + 1 - seq
        if past_b.shape != (batch,) or past_b.min() < 0 or past_b.max() > past_len:
            n.fail(f"seqlens_k {seqlens.tolist()} do not fit a past of {past_len} positions")
    else:
        past_b = bl.sub(_as_int32(n, 5), n.const(seq - 1, "int32"))
    steps = np.arange(seq, dtype=np.int64).reshape(1, seq)

    if n.attr("do_rotary", 0):
        if not (n.has(7) and n.has(8)):
            n.fail("do_rotary=1 needs cos_cache and sin_cache")
        if n.has(9):
            positions = n.value(9)
            if not isinstance(positions, np.ndarray):
                positions = _as_int32(n, 9)
        elif isinstance(past_b, np.ndarray):
            positions = past_b.reshape(batch, 1) + steps
        else:
            positions = bl.add(bl.reshape(past_b, [batch, 1]),
                               n.importer.operand(steps.astype(np.int32)))  # fmt: skip
        cos, sin = _rows(n, 7, positions), _rows(n, 8, positions)
        rot = 2 * n.static_shape(7)[1]
        if rot > head:
            n.fail(f"rotary dimension {rot} exceeds the head size {head}")
        interleaved = bool(n.attr("rotary_interleaved", 0))

        def rotary(t):
            t4 = bl.transpose(t, [0, 2, 1, 3])
            return bl.transpose(rotate_half_heads(bl, t4, cos, sin, rot, interleaved), [0, 2, 1, 3])

        q, k = rotary(q), rotary(k)

    # present = past rows then the new ones, at each batch's own offset (a first prompt has no
    # valid past rows, whatever buffer is given).
    if past_len and not first_prompt:
        joined_k = bl.concat([n.x(3), k], 2)
        joined_v = bl.concat([n.x(4), v], 2)
    else:
        joined_k, joined_v = k, v
    uniform = isinstance(past_b, np.ndarray) and (past_b == past_len).all()
    if first_prompt or uniform:
        present_k, present_v = joined_k, joined_v
    else:
        j = np.arange(present_len, dtype=np.int64).reshape(1, present_len)
        if isinstance(past_b, np.ndarray):
            pb = past_b.reshape(batch, 1)
            idx = np.where(j < pb, j, np.minimum(past_len + j - pb, present_len - 1))
            idx = n.importer.operand(idx.astype(np.int32))
        else:
            pb = bl.reshape(past_b, [batch, 1])
            jo = n.importer.operand(j.astype(np.int32))
            shifted = bl.min(bl.add(bl.sub(jo, pb), n.const(past_len, "int32")),
                             n.const(present_len - 1, "int32"))  # fmt: skip
            idx = bl.where(bl.lesser(jo, pb), bl.expand(jo, [batch, present_len]), shifted)
        idx = bl.expand(bl.reshape(idx, [batch, 1, present_len, 1]),
                        [batch, kv_heads, present_len, head])  # fmt: skip
        present_k = bl.gather_elements(joined_k, idx, 2)
        present_v = bl.gather_elements(joined_v, idx, 2)

    # Which keys each query may see: j <= past_b + s, and (ONNX Runtime 1.2x) a local window
    # of local_window_size keys including its own.
    window = int(n.attr("local_window_size", -1))
    jj = np.arange(present_len, dtype=np.int64).reshape(1, 1, 1, present_len)
    if isinstance(past_b, np.ndarray):
        last = past_b.reshape(batch, 1, 1, 1) + steps.reshape(1, 1, seq, 1)
        allowed = jj <= last
        if window > 0:
            allowed &= jj > last - window
        bias = n.importer.operand(np.where(allowed, np_dtype(0), np_dtype(-np.inf)))
    else:
        last = bl.add(bl.reshape(past_b, [batch, 1, 1, 1]),
                      n.importer.operand(steps.astype(np.int32).reshape(1, 1, seq, 1)))  # fmt: skip
        jo = n.importer.operand(jj.astype(np.int32))
        allowed = bl.lesser_or_equal(jo, last)
        if window > 0:
            allowed = bl.logical_and(
                allowed, bl.greater(jo, bl.sub(last, n.const(window, "int32")))
            )
        bias = bl.where(allowed, n.const(0, dtype), n.const(-np.inf, dtype))

    kk, vv = present_k, present_v
    if heads != kv_heads:
        kk = _repeat_heads(n, kk, heads // kv_heads)
        vv = _repeat_heads(n, vv, heads // kv_heads)
    scale = float(n.attr("scale", 0.0)) or 1.0 / np.sqrt(head)
    qk = bl.mul(bl.matmul(q, bl.transpose(kk, [0, 1, 3, 2])), n.const(scale, dtype))
    softcap = float(n.attr("softcap", 0.0))
    if softcap > 0:
        cap = n.const(softcap, dtype)
        qk = bl.mul(bl.tanh(bl.div(qk, cap)), cap)
    if n.has(10):
        qk = bl.add(qk, n.x(10))
    qk = bl.add(qk, bias)
    sink = None
    if n.has(11):
        sink = bl.expand(bl.reshape(n.x(11), [1, heads, 1, 1]), [batch, heads, seq, 1])
    elif n.attr("smooth_softmax", 0):
        sink = zeros(n, [batch, heads, seq, 1], dtype)
    if sink is not None:
        # Smooth softmax: one more logit (0, or the head's sink) that takes part in the sum.
        probs = bl.softmax(bl.concat([qk, bl.cast(sink, dtype)], 3), 3)
        probs = bl.slice(probs, [0, 0, 0, 0], [batch, heads, seq, present_len])
    else:
        probs = bl.softmax(qk, 3)
    y = bl.matmul(probs, vv)
    y = bl.reshape(bl.transpose(y, [0, 2, 1, 3]), [batch, seq, heads * head])
    return [y, present_k, present_v]
