"""LSTM and GRU onto WebNN lstm/gru; RNN unrolled."""

import numpy as np

from .registry import op

_DIRECTIONS = {"forward": "forward", "reverse": "backward", "bidirectional": "both"}
_ACTS = {"Sigmoid": "sigmoid", "Tanh": "tanh", "Relu": "relu"}


def _check_seq_lens(n, index, steps, batch):
    if n.has(index):
        lens = n.c(index, what="sequence_lens")
        if not np.all(lens == steps):
            n.fail("sequence_lens shorter than the sequence are not supported")


def _activations(n, default, per_dir):
    acts = n.attr("activations")
    if acts is None:
        return None
    names = []
    for a in acts[:per_dir]:
        if a not in _ACTS:
            n.fail(f"activation '{a}' is not supported (WebNN has {sorted(_ACTS)})")
        names.append(_ACTS[a])
    if len(acts) > per_dir and [a for a in acts[per_dir:]] != list(acts[:per_dir]):
        n.fail("different activations per direction are not supported")
    if names == default:
        return None
    return names


def _prepare(n, gates):
    if n.attr("clip") is not None:
        n.fail("the clip attribute is not supported")
    layout = int(n.attr("layout", 0))
    x = n.x(0)
    bl = n.b
    if layout == 1:
        x = bl.transpose(x, [1, 0, 2])
    xshape = bl.operand_shape(x)
    if len(xshape) != 3:
        n.fail(f"input X must have rank 3 (got shape {xshape})")
    steps, batch, _ = xshape
    hidden = int(n.attr("hidden_size"))
    direction = n.attr("direction", "forward")
    num_dir = 2 if direction == "bidirectional" else 1
    # hidden_size sizes the zero initial states allocated below: it must be R's.
    r_shape = list(bl.operand_shape(n.x(2)))
    if r_shape != [num_dir, gates * hidden, hidden]:
        n.fail(
            f"hidden_size {hidden} does not match R of shape {r_shape} (expected "
            f"[{num_dir}, {gates * hidden}, {hidden}])"
        )
    bias = rbias = None
    if n.has(3):
        bv = n.value(3)
        if isinstance(bv, np.ndarray):
            bias = n.importer.operand(np.require(bv[:, : gates * hidden], requirements="C"))
            rbias = n.importer.operand(np.require(bv[:, gates * hidden :], requirements="C"))
        else:
            b = n.x(3)
            bias = bl.slice(b, [0, 0], [num_dir, gates * hidden])
            rbias = bl.slice(b, [0, gates * hidden], [num_dir, gates * hidden])
    _check_seq_lens(n, 4, steps, batch)
    return x, steps, batch, hidden, direction, num_dir, bias, rbias, layout


MAX_STATE_ELEMENTS = 1 << 28  # a zero initial state allocated at import (1 GiB of float32)


def _zeros(n, batch, hidden, dtype):
    """The zero initial state [batch, hidden] as a constant, refused when a declared shape
    makes it absurd (before numpy tries to allocate it)."""
    if batch * hidden > MAX_STATE_ELEMENTS:
        n.fail(f"a zero initial state of {batch} x {hidden} elements is too large")
    return n.importer.operand(np.zeros([batch, hidden], dtype))


MAX_UNROLLED_STEPS = 100_000  # time steps an unrolled RNN / peephole LSTM imports


def _unrolled_steps(n, steps):
    """The steps of a recurrence unrolled at import, refused when a declared sequence length
    is absurd (found by the fuzzer: [None] * steps raised MemoryError)."""
    if steps > MAX_UNROLLED_STEPS:
        n.fail(f"{steps} time steps are more than the {MAX_UNROLLED_STEPS} this import unrolls")
    return steps


def _initial(n, index, layout):
    if not n.has(index):
        return None
    h = n.x(index)
    return n.b.transpose(h, [1, 0, 2]) if layout == 1 else h


def _outputs(n, results, layout, want_seq):
    bl = n.b
    outs = []
    # results: [h, (c), (seq)]
    seq = results[-1] if want_seq else None
    if want_seq:
        y = seq  # [steps, dirs, batch, hidden]
        if layout == 1:
            y = bl.transpose(y, [2, 0, 1, 3])
        outs.append(y)
    else:
        outs.append(None)
    for state in results[: (2 if n.node.op_type == "LSTM" else 1)]:
        outs.append(bl.transpose(state, [1, 0, 2]) if layout == 1 else state)
    return outs


def concat_or_one(bl, parts, axis):
    return bl.concat(parts, axis) if len(parts) > 1 else parts[0]


def stack_directions(bl, ys, *states):
    """The outputs of an unrolled recurrent op (ONNX layout 0): Y [steps, num_dir, batch,
    hidden] from each direction's [steps, 1, batch, hidden], and each final state [num_dir,
    batch, hidden] from the directions' [1, batch, hidden]."""
    return [concat_or_one(bl, ys, 1)] + [concat_or_one(bl, s, 0) for s in states]


def _builder_op(n, method, prepared, want_seq, **options):
    """The builder's lstm or gru on the ONNX node's weights (inputs 1, 2) and initial hidden
    state (input 5), with `prepared` = _prepare(n, ...), its outputs in the node's layout;
    `options` are the op's own."""
    x, steps, _batch, hidden, direction, _num_dir, bias, rbias, onnx_layout = prepared
    results = getattr(n.b, method)(
        x,
        n.x(1),
        n.x(2),
        steps,
        hidden,
        bias=bias,
        recurrent_bias=rbias,
        initial_hidden_state=_initial(n, 5, onnx_layout),
        return_sequence=want_seq,
        direction=_DIRECTIONS[direction],
        **options,
    )
    return _outputs(n, results, onnx_layout, want_seq)


@op("LSTM")
def lstm(n):
    if n.attr("input_forget", 0):
        n.fail("input_forget (coupled gates) is not supported")
    prepared = _prepare(n, 4)
    x, steps, _batch, hidden, direction, _num_dir, bias, rbias, layout = prepared
    want_seq = bool(n.node.output) and bool(n.node.output[0])
    acts = _activations(n, ["sigmoid", "tanh", "tanh"], 3)
    peep = n.x(7) if n.has(7) else None
    if peep is not None:
        # WebNN's lstm feeds the output gate's peephole the previous cell state, ONNX the new
        # one: unroll the ONNX equations instead.
        return _lstm_unrolled(n, x, steps, hidden, direction, bias, rbias, layout, acts, want_seq)
    return _builder_op(
        n,
        "lstm",
        prepared,
        want_seq,
        peephole_weight=peep,
        initial_cell_state=_initial(n, 6, layout),
        layout="iofg",
        activations=acts,
    )


def _lstm_unrolled(n, x, steps, hidden, direction, bias, rbias, layout, acts, want_seq):
    bl = n.b
    f_act, g_act, h_act = acts or ["sigmoid", "tanh", "tanh"]
    num_dir = 2 if direction == "bidirectional" else 1
    batch = bl.operand_shape(x)[1]
    dtype = bl.operand_data_type(x)
    npd = np.float16 if dtype == "float16" else np.float32
    h0, c0 = _initial(n, 5, layout), _initial(n, 6, layout)
    w, r, p = n.x(1), n.x(2), n.x(7)

    def part(t, d, rows=None):
        shape = bl.operand_shape(t)
        out = bl.reshape(bl.slice(t, [d] + [0] * (len(shape) - 1), [1] + shape[1:]), shape[1:])
        return out

    def piece(t, k):
        return bl.slice(t, [0, k * hidden], [batch, hidden])

    ys, hs, cs = [], [], []
    for d in range(num_dir):
        wd, rd, pd = part(w, d), part(r, d), part(p, d)
        pi, po, pf = (bl.slice(pd, [k * hidden], [hidden]) for k in range(3))
        bsum = None
        if bias is not None:
            bsum = bl.add(part(bias, d), part(rbias, d))
        zeros = _zeros(n, batch, hidden, npd)
        h = part(h0, d) if h0 is not None else zeros
        c = part(c0, d) if c0 is not None else zeros
        backward = direction == "reverse" or (direction == "bidirectional" and d == 1)
        order = range(steps - 1, -1, -1) if backward else range(steps)
        outs = [None] * _unrolled_steps(n, steps)
        for t in order:
            xt = part(x, t)
            g = bl.add(bl.gemm(xt, wd, b_transpose=True), bl.gemm(h, rd, b_transpose=True))
            if bsum is not None:
                g = bl.add(g, bsum)
            i = getattr(bl, f_act)(bl.add(piece(g, 0), bl.mul(pi, c)))
            f = getattr(bl, f_act)(bl.add(piece(g, 2), bl.mul(pf, c)))
            cand = getattr(bl, g_act)(piece(g, 3))
            c = bl.add(bl.mul(f, c), bl.mul(i, cand))
            o = getattr(bl, f_act)(bl.add(piece(g, 1), bl.mul(po, c)))
            h = bl.mul(o, getattr(bl, h_act)(c))
            outs[t] = bl.reshape(h, [1, 1, batch, hidden])
        ys.append(concat_or_one(bl, outs, 0))
        hs.append(bl.reshape(h, [1, batch, hidden]))
        cs.append(bl.reshape(c, [1, batch, hidden]))
    y, yh, yc = stack_directions(bl, ys, hs, cs)
    if layout == 1:
        y = bl.transpose(y, [2, 0, 1, 3])
        yh, yc = bl.transpose(yh, [1, 0, 2]), bl.transpose(yc, [1, 0, 2])
    return [y if want_seq else None, yh, yc]


@op("GRU")
def gru(n):
    prepared = _prepare(n, 3)
    want_seq = bool(n.node.output) and bool(n.node.output[0])
    acts = _activations(n, ["sigmoid", "tanh"], 2)
    return _builder_op(
        n,
        "gru",
        prepared,
        want_seq,
        reset_after=bool(n.attr("linear_before_reset", 0)),
        layout="zrn",
        activations=acts,
    )


@op("RNN")
def rnn(n):
    x, steps, batch, hidden, direction, num_dir, bias, rbias, layout = _prepare(n, 1)
    bl = n.b
    acts = n.attr("activations") or ["Tanh"] * num_dir
    w, r = n.x(1), n.x(2)
    h0 = _initial(n, 5, layout)
    dtype = bl.operand_data_type(x)
    ys, hs = [], []
    for d in range(num_dir):
        act = acts[d] if d < len(acts) else acts[0]
        if act not in _ACTS:
            n.fail(f"activation '{act}' is not supported")
        wd = bl.reshape(
            bl.slice(w, [d, 0, 0], [1] + bl.operand_shape(w)[1:]), bl.operand_shape(w)[1:]
        )
        rd = bl.reshape(
            bl.slice(r, [d, 0, 0], [1] + bl.operand_shape(r)[1:]), bl.operand_shape(r)[1:]
        )
        if h0 is not None:
            h = bl.reshape(bl.slice(h0, [d, 0, 0], [1, batch, hidden]), [batch, hidden])
        else:
            h = _zeros(n, batch, hidden, np.float32 if dtype == "float32" else np.float16)
        bsum = None
        if bias is not None:
            bsum = bl.reshape(
                bl.add(bl.slice(bias, [d, 0], [1, hidden]), bl.slice(rbias, [d, 0], [1, hidden])),
                [hidden],
            )
        order = (
            range(steps)
            if (direction == "forward" or (direction == "bidirectional" and d == 0))
            else range(steps - 1, -1, -1)
        )
        outs = [None] * _unrolled_steps(n, steps)
        for t in order:
            xt = bl.reshape(
                bl.slice(x, [t, 0, 0], [1] + bl.operand_shape(x)[1:]), bl.operand_shape(x)[1:]
            )
            pre = bl.add(bl.gemm(xt, wd, b_transpose=True), bl.gemm(h, rd, b_transpose=True))
            if bsum is not None:
                pre = bl.add(pre, bsum)
            h = getattr(bl, _ACTS[act])(pre)
            outs[t] = bl.reshape(h, [1, 1, batch, hidden])
        ys.append(concat_or_one(bl, outs, 0))
        hs.append(bl.reshape(h, [1, batch, hidden]))
    y, yh = stack_directions(bl, ys, hs)
    if layout == 1:
        y = bl.transpose(y, [2, 0, 1, 3])
        yh = bl.transpose(yh, [1, 0, 2])
    return [y, yh]
