"""com.microsoft decoder operators with key/value caches (GroupQueryAttention, RotaryEmbedding,
MultiHeadAttention / Attention with past and present), each built with onnx.helper and compared
with ONNX Runtime's own CPU kernel on both backends."""

import numpy as np
import pytest

ort = pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")
import webnn
import webnn.onnx as wo
from onnx import TensorProto, helper, numpy_helper

MS = "com.microsoft"
NP_TO_ONNX = {np.float32: TensorProto.FLOAT, np.int32: TensorProto.INT32,
              np.int64: TensorProto.INT64}  # fmt: skip


def _model(op_type, inputs, n_outputs, attrs, feeds, inits):
    """A one-node model: `inputs` names ("" = absent), graph inputs from `feeds`, the rest
    initializers from `inits`."""
    vinfos = [
        helper.make_tensor_value_info(k, NP_TO_ONNX[v.dtype.type], list(v.shape))
        for k, v in feeds.items()
    ]
    outs = [f"out{i}" for i in range(n_outputs)]
    node = helper.make_node(op_type, inputs, outs, domain=MS, **attrs)
    graph = helper.make_graph(
        [node],
        "g",
        vinfos,
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outs],
        [numpy_helper.from_array(v, k) for k, v in inits.items()],
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)]
    )
    model.ir_version = 8
    return model


def _compare(model, feeds, rtol=1e-5, skip=()):
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    want = session.run(None, feeds)
    names = [o.name for o in model.graph.output]
    for backend in ("cpu", "reference"):
        context = webnn.ML().create_context(accelerated=False, backend=backend)
        got = context.compute(wo.load(context, model), feeds)
        for name, w in zip(names, want):
            if name in skip:
                continue
            g = got[name]
            assert g.shape == w.shape, (backend, name)
            err = float(np.max(np.abs(g - w)))
            assert err <= rtol * float(np.max(np.abs(w))), (backend, name, err)


def _rope_cache(rng, positions, half):
    theta = rng.uniform(0.01, 1.0, half).astype(np.float32)
    angles = np.arange(positions, dtype=np.float32)[:, None] * theta[None, :]
    return np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)


@pytest.mark.parametrize(
    "rank,interleaved,pos_kind,rot_dim",
    [
        (3, False, "offset", 0),
        (3, True, "ids", 0),
        (4, False, "ids", 0),
        (3, False, "offset_input", 4),  # partial rotary: 4 of the 8 features of a head
        (4, True, "offset", 0),
    ],
)
def test_ms_rotary_embedding_matches_onnxruntime(rank, interleaved, pos_kind, rot_dim):
    rng = np.random.default_rng(rank * 7 + interleaved + rot_dim)
    batch, seq, heads, head = 2, 5, 3, 8
    rot = rot_dim or head
    cos, sin = _rope_cache(rng, 32, rot // 2)
    shape = [batch, seq, heads * head] if rank == 3 else [batch, heads, seq, head]
    feeds = {"x": rng.standard_normal(shape).astype(np.float32)}
    inits = {"cos": cos, "sin": sin}
    if pos_kind == "offset":
        inits["pos"] = np.array([3], np.int64)
    elif pos_kind == "offset_input":
        feeds["pos"] = np.array([7], np.int64)
    else:
        inits["pos"] = rng.integers(0, 32, (batch, seq)).astype(np.int64)
    attrs = {"interleaved": int(interleaved)}
    if rot_dim:
        attrs.update(rotary_embedding_dim=rot_dim, num_heads=heads)
    model = _model("RotaryEmbedding", ["x", "pos", "cos", "sin"], 1, attrs, feeds, inits)
    _compare(model, feeds)


GQA_CASES = [
    # batch, new tokens, past, heads, kv heads, options
    (2, 6, 0, 4, 2, {}),  # first prompt, grouped heads
    (2, 1, 5, 4, 2, {}),  # one generated token with a cache
    (1, 3, 4, 4, 4, {"local_window_size": 3}),  # subsequent prompt, sliding window
    (1, 3, 4, 4, 4, {}),
    (1, 1, 4, 4, 4, {"local_window_size": 2}),
    (2, 1, 6, 4, 1, {"do_rotary": 1, "softcap": 5.0}),
    (2, 5, 0, 4, 2, {"do_rotary": 1, "rotary_interleaved": 1, "packed": True}),
    (1, 2, 3, 2, 1, {"smooth_softmax": 1, "bias": True, "runtime_seqlens": True}),
    (2, 1, 4, 4, 2, {"ragged": True, "do_rotary": 1}),  # batches with different past lengths
    (1, 3, 2, 4, 2, {"do_rotary": 1, "position_ids": True}),
]


@pytest.mark.parametrize("batch,seq,past,heads,kv_heads,opts", GQA_CASES)
def test_group_query_attention_matches_onnxruntime(batch, seq, past, heads, kv_heads, opts):
    opts = dict(opts)
    rng = np.random.default_rng(batch * 100 + seq * 10 + past)
    head = 16  # ORT's rotary kernel needs a multiple of 16
    total = past + seq
    packed = opts.pop("packed", False)
    with_bias = opts.pop("bias", False)
    runtime_seqlens = opts.pop("runtime_seqlens", False)
    ragged = opts.pop("ragged", False)
    position_ids = opts.pop("position_ids", False)
    feeds, inits = {}, {}
    f32 = np.float32
    if packed:
        width = (heads + 2 * kv_heads) * head
        feeds["q"] = rng.standard_normal((batch, seq, width)).astype(f32)
        inputs = ["q", "", ""]
    else:
        feeds["q"] = rng.standard_normal((batch, seq, heads * head)).astype(f32)
        feeds["k"] = rng.standard_normal((batch, seq, kv_heads * head)).astype(f32)
        feeds["v"] = rng.standard_normal((batch, seq, kv_heads * head)).astype(f32)
        inputs = ["q", "k", "v"]
    if past:
        feeds["pk"] = rng.standard_normal((batch, kv_heads, past, head)).astype(f32)
        feeds["pv"] = rng.standard_normal((batch, kv_heads, past, head)).astype(f32)
        inputs += ["pk", "pv"]
    else:
        inputs += ["", ""]
    seqlens = np.full(batch, total - 1, np.int32)
    if ragged:
        seqlens[1] -= 2  # the second sequence has 2 fewer past positions
    (feeds if runtime_seqlens or ragged else inits)["sl"] = seqlens
    inits["tsl"] = np.array(total, np.int32)
    inputs += ["sl", "tsl"]
    if opts.get("do_rotary"):
        cos, sin = _rope_cache(rng, 16, head // 2)
        inits["cos"], inits["sin"] = cos, sin
        inputs += ["cos", "sin"]
        if position_ids:
            feeds["pos"] = (np.arange(seq) + past).reshape(1, seq).repeat(batch, 0).astype(np.int64)
            inputs.append("pos")
    if with_bias:
        inputs += ["", "", "", "ab"] if not opts.get("do_rotary") else ["", "ab"]
        feeds["ab"] = rng.standard_normal((batch, 1, seq, total)).astype(f32)
    attrs = dict(num_heads=heads, kv_num_heads=kv_heads, **opts)
    model = _model("GroupQueryAttention", inputs, 3, attrs, feeds, inits)
    # With ragged lengths ORT leaves the present rows past each batch's length unwritten.
    _compare(model, feeds, skip=("out1", "out2") if ragged else ())


@pytest.mark.parametrize(
    "attrs,extra,message",
    [
        ({"qk_output": 1}, [], "qk_output"),
        ({"k_quant_type": "PER_TENSOR"}, [], "quantized key/value cache"),
        ({}, [""] * 7 + ["qn"], "q_norm_weight"),
        ({"do_rotary": 1}, [], "cos_cache"),
    ],
)
def test_group_query_attention_unsupported_forms_raise(attrs, extra, message):
    feeds = {"q": np.zeros((1, 2, 32), np.float32), "k": np.zeros((1, 2, 32), np.float32),
             "v": np.zeros((1, 2, 32), np.float32)}  # fmt: skip
    inits = {"sl": np.array([1], np.int32), "tsl": np.array(2, np.int32),
             "qn": np.ones(16, np.float32)}  # fmt: skip
    inputs = ["q", "k", "v", "", "", "sl", "tsl"] + extra
    model = _model("GroupQueryAttention", inputs, 3,
                   dict(num_heads=2, kv_num_heads=1, **attrs), feeds, inits)  # fmt: skip
    context = webnn.ML().create_context(accelerated=False, backend="cpu")
    with pytest.raises(wo.OnnxImportError, match=message):
        wo.load(context, model)


@pytest.mark.parametrize(
    "q_len,past,causal,mask",
    [(1, 5, False, None), (3, 4, True, None), (2, 3, True, "2d"), (4, 0, True, "lengths")],
)
def test_multi_head_attention_with_cache_matches_onnxruntime(q_len, past, causal, mask):
    """MultiHeadAttention with past_key / past_value: present = past + the new keys/values."""
    rng = np.random.default_rng(q_len * 10 + past)
    batch, heads, width = 2, 2, 16
    total = past + q_len
    feeds = {name: rng.standard_normal((batch, q_len, width)).astype(np.float32)
             for name in ("q", "k", "v")}  # fmt: skip
    inits = {"b": rng.standard_normal(3 * width).astype(np.float32)}
    inputs = ["q", "k", "v", "b"]
    if mask == "2d":
        m = np.ones((batch, total), np.int32)
        m[1, :2] = 0  # left padding of the second sequence
        inits["m"] = m
    elif mask == "lengths":
        inits["m"] = np.array([total, total - 1], np.int32)
    inputs += ["m" if mask else "", ""]
    if past:
        for name in ("pk", "pv"):
            feeds[name] = rng.standard_normal((batch, heads, past, width // heads)).astype(
                np.float32
            )
        inputs += ["pk", "pv"]
    while not inputs[-1]:
        inputs.pop()
    attrs = {"num_heads": heads, "unidirectional": int(causal)}
    model = _model("MultiHeadAttention", inputs, 3, attrs, feeds, inits)
    _compare(model, feeds)


@pytest.mark.parametrize("seq,past,causal,mask", [(1, 4, True, True), (3, 2, True, False),
                                                  (2, 3, False, True)])  # fmt: skip
def test_attention_with_past_matches_onnxruntime(seq, past, causal, mask):
    """GPT-2-style com.microsoft Attention with a past state [2, B, N, P, head] and its present
    output, a raw mask over the past and new positions."""
    rng = np.random.default_rng(seq * 10 + past)
    batch, heads, hidden = 2, 2, 16
    total = past + seq
    feeds = {
        "x": rng.standard_normal((batch, seq, hidden)).astype(np.float32),
        "past": rng.standard_normal((2, batch, heads, past, hidden // heads)).astype(np.float32),
    }
    inits = {
        "w": (rng.standard_normal((hidden, 3 * hidden)) * 0.3).astype(np.float32),
        "bias": rng.standard_normal(3 * hidden).astype(np.float32),
    }
    if mask:
        m = np.ones((batch, total), np.int32)
        m[0, 0] = 0
        inits["m"] = m
    inputs = ["x", "w", "bias", "m" if mask else "", "past"]
    attrs = {"num_heads": heads, "unidirectional": int(causal)}
    model = _model("Attention", inputs, 2, attrs, feeds, inits)
    _compare(model, feeds)


def test_group_query_attention_decode_loop_in_session():
    """A prompt then generated tokens through webnn.onnx.InferenceSession, feeding each call's
    present key/value back as the next past: the first call's past is empty (0 positions), which
    the session folds as a constant since WebNN tensors cannot be empty."""
    f = TensorProto.FLOAT
    heads, kv_heads, head = 4, 2, 16
    vinfos = [
        helper.make_tensor_value_info("q", f, [1, "s", heads * head]),
        helper.make_tensor_value_info("k", f, [1, "s", kv_heads * head]),
        helper.make_tensor_value_info("v", f, [1, "s", kv_heads * head]),
        helper.make_tensor_value_info("pk", f, [1, kv_heads, "p", head]),
        helper.make_tensor_value_info("pv", f, [1, kv_heads, "p", head]),
        helper.make_tensor_value_info("sl", TensorProto.INT32, [1]),
        helper.make_tensor_value_info("tsl", TensorProto.INT32, []),
    ]
    node = helper.make_node(
        "GroupQueryAttention", ["q", "k", "v", "pk", "pv", "sl", "tsl"], ["y", "ok", "ov"],
        domain=MS, num_heads=heads, kv_num_heads=kv_heads,
    )  # fmt: skip
    outs = [helper.make_tensor_value_info(o, f, None) for o in ("y", "ok", "ov")]
    graph = helper.make_graph([node], "decoder", vinfos, outs)
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)]
    )
    model.ir_version = 8
    ref = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    ours = wo.InferenceSession(model.SerializeToString())
    rng = np.random.default_rng(11)
    past = {n: np.zeros((1, kv_heads, 0, head), np.float32) for n in ("pk", "pv")}
    mine = dict(past)
    for new in (5, 1, 1):
        total = past["pk"].shape[2] + new
        feeds = {
            "q": rng.standard_normal((1, new, heads * head)).astype(np.float32),
            "k": rng.standard_normal((1, new, kv_heads * head)).astype(np.float32),
            "v": rng.standard_normal((1, new, kv_heads * head)).astype(np.float32),
            "sl": np.array([total - 1], np.int32),
            "tsl": np.array(total, np.int32),
        }
        want = ref.run(None, {**feeds, **past})
        got = ours.run(None, {**feeds, **mine})
        for w, g in zip(want, got):
            assert g.shape == w.shape
            assert float(np.max(np.abs(g - w))) <= 1e-5 * float(np.max(np.abs(w)))
        past = {"pk": want[1], "pv": want[2]}
        mine = {"pk": got[1], "pv": got[2]}


def test_group_query_attention_first_prompt_ignores_a_given_past_buffer():
    """seq == total_sequence_length is a first prompt: ORT reads no past rows even when a
    (static, total-length) past buffer is given."""
    rng = np.random.default_rng(21)
    feeds = {
        "q": rng.standard_normal((1, 4, 64)).astype(np.float32),
        "k": rng.standard_normal((1, 4, 32)).astype(np.float32),
        "v": rng.standard_normal((1, 4, 32)).astype(np.float32),
        "pk": rng.standard_normal((1, 2, 4, 16)).astype(np.float32),
        "pv": rng.standard_normal((1, 2, 4, 16)).astype(np.float32),
    }
    inits = {"sl": np.array([3], np.int32), "tsl": np.array(4, np.int32)}
    inputs = ["q", "k", "v", "pk", "pv", "sl", "tsl"]
    model = _model("GroupQueryAttention", inputs, 3, {"num_heads": 4, "kv_num_heads": 2}, feeds,
                   inits)  # fmt: skip
    _compare(model, feeds)
