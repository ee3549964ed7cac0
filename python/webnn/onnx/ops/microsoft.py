"""com.microsoft operators that ONNX Runtime's quantizer and transformer optimizer emit."""

import numpy as np

from . import quantization  # noqa: F401  (registers the converters aliased below)
from .activation import gelu_tanh
from .linalg import matmul_nd
from .registry import TABLE, op
from .util import check_made

MS = "com.microsoft"


@op("FusedMatMul", domain=MS)
def fused_matmul(n):
    if n.attr("transBatchA", 0) or n.attr("transBatchB", 0):
        n.fail("transBatchA/transBatchB are not supported")
    bl = n.b
    a, b = n.x(0), n.x(1)

    def t(x):
        r = len(bl.operand_shape(x))
        return bl.transpose(x, list(range(r - 2)) + [r - 1, r - 2])

    if n.attr("transA", 0):
        a = t(a)
    if n.attr("transB", 0):
        b = t(b)
    y = matmul_nd(n, a, b)
    alpha = float(n.attr("alpha", 1.0))
    return y if alpha == 1.0 else bl.mul(y, n.const(alpha, n.dtype(0)))


@op("Gelu", domain=MS)
def gelu(n):
    return n.b.gelu(n.x(0))


@op("BiasGelu", domain=MS)
def bias_gelu(n):
    return n.b.gelu(n.b.add(n.x(0), n.x(1)))


@op("FastGelu", domain=MS)
def fast_gelu(n):
    x = n.x(0)
    if n.has(1):
        x = n.b.add(x, n.x(1))
    return gelu_tanh(n, x)


@op("QuickGelu", domain=MS)
def quick_gelu(n):
    x = n.x(0)
    alpha = float(n.attr("alpha", 1.702))
    return n.b.mul(x, n.b.sigmoid(n.b.mul(x, n.const(alpha, n.dtype(0)))))


@op("BiasAdd", domain=MS)
def bias_add(n):
    return n.b.add(n.b.add(n.x(0), n.x(1)), n.x(2))


def _norm(n, s, eps, simplified, gamma_index, beta_index):
    beta = n.x(beta_index) if beta_index is not None and n.has(beta_index) else None
    return _norm_with(n, s, eps, n.x(gamma_index), beta, simplified)


def _norm_with(n, s, eps, gamma, beta, simplified=False):
    bl = n.b
    dtype = bl.operand_data_type(s)
    axis = len(bl.operand_shape(s)) - 1
    if simplified:
        mean = None
        var = bl.reduce_mean(bl.mul(s, s), [axis], True)
        centered = s
    else:
        mean = bl.reduce_mean(s, [axis], True)
        centered = bl.sub(s, mean)
        var = bl.reduce_mean(bl.mul(centered, centered), [axis], True)
    inv = bl.reciprocal(bl.sqrt(bl.add(var, n.const(eps, dtype))))
    y = bl.mul(bl.mul(centered, inv), gamma)
    if beta is not None:
        y = bl.add(y, beta)
    return y, mean, inv


def _skip_layer_norm(simplified):
    def convert(n):
        bl = n.b
        s = bl.add(n.x(0), n.x(1))
        bias_index = 3 if simplified else 4
        if n.has(bias_index):
            s = bl.add(s, n.x(bias_index))
        eps = float(n.attr("epsilon", 1e-12))
        y, mean, inv = _norm(n, s, eps, simplified, 2, None if simplified else 3)
        if mean is None:
            mean = inv  # unused by consumers of the simplified form
        return [y, mean, inv, s]

    return convert


op("SkipLayerNormalization", domain=MS)(_skip_layer_norm(False))
op("SkipSimplifiedLayerNormalization", domain=MS)(_skip_layer_norm(True))


@op("SimplifiedLayerNormalization")
def simplified_layer_norm(n):
    rank = n.rank(0)
    axis = int(n.attr("axis", -1))
    axis = axis + rank if axis < 0 else axis
    if axis != rank - 1:
        bl = n.b
        axes = list(range(axis, rank))
        x = n.x(0)
        eps = float(n.attr("epsilon", 1e-5))
        var = bl.reduce_mean(bl.mul(x, x), axes, True)
        inv = bl.reciprocal(bl.sqrt(bl.add(var, n.const(eps, n.dtype(0)))))
        return [bl.mul(bl.mul(x, inv), n.x(1)), inv]
    y, _, inv = _norm(n, n.x(0), float(n.attr("epsilon", 1e-5)), True, 1, None)
    return [y, inv]


TABLE[(MS, "SimplifiedLayerNormalization")] = TABLE[("", "SimplifiedLayerNormalization")]


@op("EmbedLayerNormalization", domain=MS)
def embed_layer_norm(n):
    tables = [n.x(i) if n.has(i) else None for i in (2, 3, 4, 5, 6)]
    return embed_layer_norm_on(n, *tables, mask_index=7, position_ids_index=8)


def embed_layer_norm_on(n, word, pos_table, seg_table, gamma, beta, mask_index,
                        position_ids_index):  # fmt: skip
    """EmbedLayerNormalization on its tables (operands; seg_table / beta may be None): word +
    position (+ segment) embeddings, layer-normalized; [output, mask_index, embedding_sum]."""
    bl = n.b
    ids = n.x(0)
    batch, seq = n.static_shape(0)
    s = bl.gather(word, ids, 0)
    if position_ids_index is not None and n.has(position_ids_index):
        pos = bl.gather(pos_table, n.x(position_ids_index), 0)
        if len(bl.operand_shape(pos)) == 2:
            pos = bl.unsqueeze(pos, [0])
    else:
        pos = bl.gather(pos_table, n.importer.operand(np.arange(seq, dtype=np.int32)), 0)
        pos = bl.unsqueeze(pos, [0])
    s = bl.add(s, pos)
    if n.has(1) and seg_table is not None:
        s = bl.add(s, bl.gather(seg_table, n.x(1), 0))
    y, _, _ = _norm_with(n, s, float(n.attr("epsilon", 1e-12)), gamma, beta)
    if n.has(mask_index) and len(n.node.output) > 1 and n.node.output[1]:
        mask = bl.reduce_sum(bl.cast(n.x(mask_index), "int32"), [1], False)
    else:
        mask = np.full([batch], seq, np.int32)
    return [y, mask, s]


@op("Attention", domain=MS)
def ms_attention(n):
    """BERT / GPT-2-style fused self-attention: input [B, S, H], packed QKV weights [H, 3H],
    optionally a past state [2, B, N, P, head] that the keys and values extend (output 1, present,
    is [2, B, N, P + S, head]), a mask over the P + S keys and an attention bias."""
    if n.has(6) or n.attr("past_present_share_buffer", 0):
        n.fail("past_sequence_length / a shared past-present buffer is not supported")
    qkv = matmul_nd(n, n.x(0), n.x(1))
    if n.has(2):
        qkv = n.b.add(qkv, n.x(2))
    return attention_on_qkv(n, qkv, mask_index=3, past_index=4, bias_index=5)


def attention_on_qkv(n, qkv, mask_index, past_index, bias_index):
    """com.microsoft Attention after its packed projection qkv [B, S, Q + K + V]; the input
    indices of the mask, the past state and the attention bias (None: the operator has none).
    Returns [output, present]."""
    bl = n.b
    if n.attr("do_rotary", 0):
        n.fail("do_rotary=1 is not supported")
    if n.attr("qkv_hidden_sizes") is not None:
        sizes = [int(v) for v in n.attr("qkv_hidden_sizes")]
    else:
        hidden3 = bl.operand_shape(qkv)[2]
        sizes = [hidden3 // 3] * 3
    heads = int(n.attr("num_heads"))
    batch, seq, _ = n.static_shape(0)
    dtype = bl.operand_data_type(qkv)
    q, k, v = bl.split(qkv, sizes, 2)

    def heads_first(t, size):
        return bl.transpose(bl.reshape(t, [batch, seq, heads, size // heads]), [0, 2, 1, 3])

    q, k, v = heads_first(q, sizes[0]), heads_first(k, sizes[1]), heads_first(v, sizes[2])
    past_len = 0
    if past_index is not None and n.has(past_index):
        past_shape = n.static_shape(past_index)
        if sizes[1] != sizes[2] or len(past_shape) != 5 or past_shape[0] != 2:
            n.fail(f"past of shape {past_shape} (expected [2, B, N, P, head], equal K/V sizes)")
        past_len = past_shape[3]
        rest = past_shape[1:]
        pk, pv = bl.split(n.x(past_index), [1, 1], 0)
        k = bl.concat([bl.reshape(pk, rest), k], 2)
        v = bl.concat([bl.reshape(pv, rest), v], 2)
    total = past_len + seq
    scale = n.attr("scale") or 1.0 / np.sqrt(sizes[0] // heads)
    qk = bl.mul(bl.matmul(q, bl.transpose(k, [0, 1, 3, 2])), n.const(scale, dtype))
    filter_value = float(n.attr("mask_filter_value", -10000.0))
    if n.has(mask_index):
        mshape = n.static_shape(mask_index)
        m = n.x(mask_index)
        if len(mshape) == 2 and mshape == [batch, total]:
            keep = bl.cast(m, dtype)
            bias = bl.mul(bl.sub(n.const(1.0, dtype), keep), n.const(-filter_value, dtype))
            bias = bl.neg(bias)
            qk = bl.add(qk, bl.reshape(bias, [batch, 1, 1, total]))
        elif len(mshape) == 3 and mshape == [batch, seq, total]:
            keep = bl.cast(m, dtype)
            bias = bl.mul(bl.sub(n.const(1.0, dtype), keep), n.const(filter_value, dtype))
            qk = bl.add(qk, bl.reshape(bias, [batch, 1, seq, total]))
        elif len(mshape) == 1 and mshape[0] == batch:
            lens = bl.reshape(bl.cast(m, "int32"), [batch, 1, 1, 1])
            check_made(n, "the key positions", [total])
            ar = n.importer.operand(np.arange(total, dtype=np.int32).reshape(1, 1, 1, total))
            keep = bl.cast(bl.lesser(ar, lens), dtype)
            bias = bl.mul(bl.sub(n.const(1.0, dtype), keep), n.const(filter_value, dtype))
            qk = bl.add(qk, bias)
        else:
            n.fail(f"mask_index of shape {mshape} is not supported")
    if bias_index is not None and n.has(bias_index):
        qk = bl.add(qk, n.x(bias_index))
    if n.attr("unidirectional", 0):
        check_made(n, "the causal mask", [seq, total])
        causal = np.triu(np.full((seq, total), filter_value, np.float32), 1 + past_len)
        causal = causal.astype(np.float16 if dtype == "float16" else np.float32)
        qk = bl.add(qk, n.importer.operand(causal))
    probs = bl.softmax(qk, 3)
    y = bl.matmul(probs, v)
    y = bl.reshape(bl.transpose(y, [0, 2, 1, 3]), [batch, seq, sizes[2]])
    present = bl.concat([bl.unsqueeze(k, [0]), bl.unsqueeze(v, [0])], 0)
    return [y, present]


def _key_mask_bias(n, i, batch, q_len, kv_len, filter_value, dtype):
    """MultiHeadAttention's key_padding_mask as an additive bias [B, 1, S or 1, L]: [B] key
    lengths, [B, L] or [B, S, L] with 1 = attend, 0 = masked (mask_filter_value added)."""
    bl = n.b
    shape = n.static_shape(i)
    one = n.const(1.0, dtype)
    if shape == [batch]:
        lens = bl.reshape(bl.cast(n.x(i), "int32"), [batch, 1, 1, 1])
        check_made(n, "the key positions", [kv_len])
        ar = n.importer.operand(np.arange(kv_len, dtype=np.int32).reshape(1, 1, 1, kv_len))
        keep = bl.cast(bl.lesser(ar, lens), dtype)
    elif shape == [batch, kv_len]:
        keep = bl.reshape(bl.cast(n.x(i), dtype), [batch, 1, 1, kv_len])
    elif shape == [batch, q_len, kv_len]:
        keep = bl.reshape(bl.cast(n.x(i), dtype), [batch, 1, q_len, kv_len])
    else:
        n.fail(f"key_padding_mask of shape {shape} is not supported")
    return bl.mul(bl.sub(one, keep), n.const(filter_value, dtype))


@op("MultiHeadAttention", domain=MS)
def ms_multi_head_attention(n):
    """Attention on separate Q, K, V projections (ORT's transformer optimizer with
    use_multi_head_attention, and cross-attention): query [B, S, D], key / value [B, L, D] or
    already split into heads [B, N, L, H], an optional packed bias [Q | K | V], a key padding
    mask, an attention bias [1|B, 1|N, S, L]; past_key / past_value [B, N, P, H] that the
    projected keys and values extend (outputs present_key / present_value [B, N, P + L, H])."""
    bl = n.b
    heads = int(n.attr("num_heads"))
    if not n.has(1) or not n.has(2):
        n.fail("packed QKV (no separate key and value inputs) is not supported")
    if n.has(8) or n.has(9):
        n.fail("past_sequence_length / cache_indirection (beam search buffers) are not supported")
    if n.has(6) != n.has(7):
        n.fail("past_key and past_value must be given together")
    if len(n.node.output) > 3 and n.node.output[3]:
        n.fail("the qk output is not supported")
    dtype = n.dtype(0)
    batch, q_len, width = n.static_shape(0)
    head = width // heads
    q, k, v = n.x(0), n.x(1), n.x(2)
    if n.has(3):
        bias = n.x(3)
        bq, bk, bv = bl.split(bias, [width, width, n.static_shape(3)[0] - 2 * width], 0)
        q = bl.add(q, bq)
        if n.rank(1) == 3:
            k = bl.add(k, bk)
        if n.rank(2) == 3:
            v = bl.add(v, bv)

    def heads_first(t, length, size):
        return bl.transpose(bl.reshape(t, [batch, length, heads, size]), [0, 2, 1, 3])

    q = heads_first(q, q_len, head)
    kv_len = n.static_shape(1)[1] if n.rank(1) == 3 else n.static_shape(1)[2]
    if n.rank(1) == 3:
        k = heads_first(k, kv_len, head)
    if n.rank(2) == 3:
        v_width = n.static_shape(2)[2]
        v = heads_first(v, kv_len, v_width // heads)
    if n.has(6):
        if n.rank(1) != 3 or n.rank(2) != 3:
            n.fail("past_key / past_value with key / value already split into heads")
        k = bl.concat([n.x(6), k], 2)
        v = bl.concat([n.x(7), v], 2)
        kv_len = bl.operand_shape(k)[2]
    v_head = bl.operand_shape(v)[3]
    scale = n.attr("scale") or 1.0 / np.sqrt(head)
    qk = bl.mul(bl.matmul(q, bl.transpose(k, [0, 1, 3, 2])), n.const(scale, dtype))
    filter_value = float(n.attr("mask_filter_value", -10000.0))
    if n.has(4):
        qk = bl.add(qk, _key_mask_bias(n, 4, batch, q_len, kv_len, filter_value, dtype))
    if n.has(5):
        qk = bl.add(qk, n.x(5))
    if n.attr("unidirectional", 0):
        check_made(n, "the causal mask", [q_len, kv_len])
        causal = np.triu(np.full((q_len, kv_len), filter_value, np.float32), 1 + kv_len - q_len)
        qk = bl.add(qk, n.importer.operand(causal.astype(n.np_dtype(0))))
    y = bl.matmul(bl.softmax(qk, 3), v)
    return [bl.reshape(bl.transpose(y, [0, 2, 1, 3]), [batch, q_len, heads * v_head]), k, v]


def _alias(name, target_domain, target):
    TABLE[(MS, name)] = TABLE[(target_domain, target)]


for _name in ("QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "MatMulInteger"):
    _alias(_name, "", _name)
