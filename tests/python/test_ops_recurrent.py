"""gru, gru_cell, lstm, lstm_cell against a NumPy transcription of the WebNN decompositions.

The WPT corpus mostly uses relu activations, one batch layout and few option combinations;
these tests cover the defaults (sigmoid/tanh), both gate layouts, reset_after=False,
peepholes, per-direction weights with direction="both", float16, a dynamic batch, and the
rejection paths.
"""

import numpy as np
import pytest
import webnn

BACKENDS = webnn.backends()

ACTIVATIONS = {
    "relu": lambda v: np.maximum(v, 0.0),
    "sigmoid": lambda v: 1.0 / (1.0 + np.exp(-v)),
    "tanh": np.tanh,
}


def _gate(layout, name, hidden):
    """Rows of gate `name` in a weight whose gates are stacked in `layout` order."""
    k = layout.index(name)
    return slice(k * hidden, (k + 1) * hidden)


def _or_zeros(v, shape):
    return np.zeros(shape) if v is None else v.astype(np.float64)


def gru_cell_ref(
    x,
    w,
    r,
    h,
    hidden,
    bias=None,
    recurrent_bias=None,
    reset_after=True,
    layout="zrn",
    activations=("sigmoid", "tanh"),
):
    f, g = (ACTIVATIONS[a] for a in activations)
    x, w, r, h = (a.astype(np.float64) for a in (x, w, r, h))
    b = _or_zeros(bias, [3 * hidden])
    rb = _or_zeros(recurrent_bias, [3 * hidden])
    z_, r_, n_ = (_gate(layout, k, hidden) for k in "zrn")
    z = f(x @ w[z_].T + b[z_] + h @ r[z_].T + rb[z_])
    reset = f(x @ w[r_].T + b[r_] + h @ r[r_].T + rb[r_])
    if reset_after:
        n = g(x @ w[n_].T + b[n_] + reset * (h @ r[n_].T + rb[n_]))
    else:
        n = g(x @ w[n_].T + b[n_] + (reset * h) @ r[n_].T + rb[n_])
    return (1 - z) * n + z * h


def lstm_cell_ref(
    x,
    w,
    r,
    h,
    c,
    hidden,
    bias=None,
    recurrent_bias=None,
    peephole_weight=None,
    layout="iofg",
    activations=("sigmoid", "tanh", "tanh"),
):
    f0, f1, f2 = (ACTIVATIONS[a] for a in activations)
    x, w, r, h, c = (a.astype(np.float64) for a in (x, w, r, h, c))
    b = _or_zeros(bias, [4 * hidden])
    rb = _or_zeros(recurrent_bias, [4 * hidden])
    p = _or_zeros(peephole_weight, [3 * hidden])

    def pre(name):
        s = _gate(layout, name, hidden)
        return x @ w[s].T + b[s] + h @ r[s].T + rb[s]

    # Peephole weights are always ordered input, output, forget.
    p_i, p_o, p_f = (p[k * hidden : (k + 1) * hidden] for k in range(3))
    i = f0(pre("i") + p_i * c)
    fg = f0(pre("f") + p_f * c)
    g = f1(pre("g"))
    o = f0(pre("o") + p_o * c)
    cell = fg * c + i * g
    return o * f2(cell), cell


def _sequence_ref(cell, x, steps, hidden, direction, return_sequence, states, per_dir):
    """Runs `cell` over time for each direction.

    states: list of per-direction state tuples; per_dir(d) gives the cell's keyword weights.
    The sequence output is indexed by input time step for both directions.
    """
    dirs = 2 if direction == "both" else 1
    batch = x.shape[1]
    finals, sequence = [], np.zeros([steps, dirs, batch, hidden])
    for d in range(dirs):
        state = states[d]
        reverse = d == 1 or direction == "backward"
        for t in reversed(range(steps)) if reverse else range(steps):
            state = cell(x[t], state, **per_dir(d))
            sequence[t, d] = state[0]
        finals.append(state)
    outs = [np.stack([s[k] for s in finals]) for k in range(len(finals[0]))]
    return outs + ([sequence] if return_sequence else [])


def gru_ref(
    x,
    w,
    r,
    steps,
    hidden,
    bias=None,
    recurrent_bias=None,
    initial_hidden_state=None,
    reset_after=True,
    return_sequence=False,
    direction="forward",
    layout="zrn",
    activations=("sigmoid", "tanh"),
):
    dirs = 2 if direction == "both" else 1
    h0 = _or_zeros(initial_hidden_state, [dirs, x.shape[1], hidden])

    def cell(xt, state, **kw):
        return (
            gru_cell_ref(
                xt,
                kw["w"],
                kw["r"],
                state[0],
                hidden,
                kw["b"],
                kw["rb"],
                reset_after,
                layout,
                activations,
            ),
        )

    def per_dir(d):
        return {
            "w": w[d],
            "r": r[d],
            "b": None if bias is None else bias[d],
            "rb": None if recurrent_bias is None else recurrent_bias[d],
        }

    states = [(h0[d],) for d in range(dirs)]
    return _sequence_ref(cell, x, steps, hidden, direction, return_sequence, states, per_dir)


def lstm_ref(
    x,
    w,
    r,
    steps,
    hidden,
    bias=None,
    recurrent_bias=None,
    peephole_weight=None,
    initial_hidden_state=None,
    initial_cell_state=None,
    return_sequence=False,
    direction="forward",
    layout="iofg",
    activations=("sigmoid", "tanh", "tanh"),
):
    dirs = 2 if direction == "both" else 1
    h0 = _or_zeros(initial_hidden_state, [dirs, x.shape[1], hidden])
    c0 = _or_zeros(initial_cell_state, [dirs, x.shape[1], hidden])

    def cell(xt, state, **kw):
        return lstm_cell_ref(
            xt,
            kw["w"],
            kw["r"],
            state[0],
            state[1],
            hidden,
            kw["b"],
            kw["rb"],
            kw["p"],
            layout,
            activations,
        )

    def pick(v, d):
        return None if v is None else v[d]

    def per_dir(d):
        return {
            "w": w[d],
            "r": r[d],
            "b": pick(bias, d),
            "rb": pick(recurrent_bias, d),
            "p": pick(peephole_weight, d),
        }

    states = [(h0[d], c0[d]) for d in range(dirs)]
    return _sequence_ref(cell, x, steps, hidden, direction, return_sequence, states, per_dir)


# ---- helpers --------------------------------------------------------------------------------


def _context(backend):
    return webnn.ML().create_context(accelerated=False, backend=backend)


def _rand(rng, shape, dtype=np.float32):
    return rng.uniform(-1.0, 1.0, size=shape).astype(dtype)


def _run(backend, method, arrays, **options):
    """Builds method(*constants, **options) with every array as a constant and computes it.

    `arrays` is a list of positional arrays/ints and `options` may hold arrays (made
    constants) or plain values.
    """
    context = _context(backend)
    b = context.create_graph_builder()

    def operand(v):
        return b.constant(v) if isinstance(v, np.ndarray) else v

    result = getattr(b, method)(
        *[operand(a) for a in arrays], **{k: operand(v) for k, v in options.items()}
    )
    outs = result if isinstance(result, list) else [result]
    graph = b.build({f"out{i}": o for i, o in enumerate(outs)})
    values = context.compute(graph, {})
    return [values[f"out{i}"] for i in range(len(outs))]


def _check(actual, expected, dtype=np.float32):
    assert len(actual) == len(expected)
    tol = {"rtol": 1e-6, "atol": 1e-6} if dtype == np.float32 else {"rtol": 2e-3, "atol": 2e-3}
    for a, e in zip(actual, expected):
        assert a.dtype == dtype
        np.testing.assert_allclose(a.astype(np.float64), e.astype(dtype).astype(np.float64), **tol)


def _numpy_options(options):
    return {k: tuple(v) if k == "activations" and v is not None else v for k, v in options.items()}


# ---- gru_cell -------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("layout", ["zrn", "rzn"])
@pytest.mark.parametrize("reset_after", [True, False])
@pytest.mark.parametrize("activations", [None, ["tanh", "relu"]])
@pytest.mark.parametrize("biases", [False, True])
def test_gru_cell_options(backend, layout, reset_after, activations, biases):
    rng = np.random.default_rng(1)
    batch, inp, hs = 3, 4, 5
    x, w, r, h = (_rand(rng, s) for s in ([batch, inp], [3 * hs, inp], [3 * hs, hs], [batch, hs]))
    options = {"layout": layout, "reset_after": reset_after}
    if activations is not None:
        options["activations"] = activations
    if biases:
        options["bias"] = _rand(rng, [3 * hs])
        options["recurrent_bias"] = _rand(rng, [3 * hs])
    got = _run(backend, "gru_cell", [x, w, r, h, hs], **options)
    want = gru_cell_ref(x, w, r, h, hs, **_numpy_options(options))
    _check(got, [want])


@pytest.mark.parametrize("backend", BACKENDS)
def test_gru_cell_defaults_are_reset_after_and_zrn(backend):
    rng = np.random.default_rng(2)
    x, w, r, h = (_rand(rng, s) for s in ([2, 3], [6, 3], [6, 2], [2, 2]))
    got = _run(backend, "gru_cell", [x, w, r, h, 2])
    _check(got, [gru_cell_ref(x, w, r, h, 2, reset_after=True, layout="zrn")])
    assert not np.allclose(got[0], gru_cell_ref(x, w, r, h, 2, reset_after=False))


@pytest.mark.parametrize("backend", BACKENDS)
def test_gru_cell_float16(backend):
    rng = np.random.default_rng(3)
    f16 = np.float16
    x, w, r, h = (_rand(rng, s, f16) for s in ([2, 3], [6, 3], [6, 2], [2, 2]))
    b = _rand(rng, [6], f16)
    got = _run(backend, "gru_cell", [x, w, r, h, 2], bias=b, layout="rzn")
    _check(got, [gru_cell_ref(x, w, r, h, 2, bias=b, layout="rzn")], f16)


# ---- gru ------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("direction", ["forward", "backward", "both"])
@pytest.mark.parametrize("return_sequence", [False, True])
@pytest.mark.parametrize("reset_after", [True, False])
def test_gru_directions(backend, direction, return_sequence, reset_after):
    rng = np.random.default_rng(4)
    steps, batch, inp, hs = 3, 2, 3, 4
    dirs = 2 if direction == "both" else 1
    x = _rand(rng, [steps, batch, inp])
    w = _rand(rng, [dirs, 3 * hs, inp])
    r = _rand(rng, [dirs, 3 * hs, hs])
    options = {
        "bias": _rand(rng, [dirs, 3 * hs]),
        "recurrent_bias": _rand(rng, [dirs, 3 * hs]),
        "initial_hidden_state": _rand(rng, [dirs, batch, hs]),
        "reset_after": reset_after,
        "return_sequence": return_sequence,
        "direction": direction,
    }
    got = _run(backend, "gru", [x, w, r, steps, hs], **options)
    want = gru_ref(x, w, r, steps, hs, **options)
    _check(got, want)
    if return_sequence:
        # The last processed step of each direction is its final hidden state.
        last = 0 if direction == "backward" else steps - 1
        assert np.array_equal(got[1][last, 0], got[0][0])
        if direction == "both":
            assert np.array_equal(got[1][0, 1], got[0][1])


@pytest.mark.parametrize("backend", BACKENDS)
def test_gru_defaults_and_rzn_layout(backend):
    rng = np.random.default_rng(5)
    x = _rand(rng, [2, 1, 3])
    w = _rand(rng, [1, 9, 3])
    r = _rand(rng, [1, 9, 3])
    _check(_run(backend, "gru", [x, w, r, 2, 3]), gru_ref(x, w, r, 2, 3))
    got = _run(backend, "gru", [x, w, r, 2, 3], layout="rzn", activations=["relu", "tanh"])
    _check(got, gru_ref(x, w, r, 2, 3, layout="rzn", activations=("relu", "tanh")))


@pytest.mark.parametrize("backend", BACKENDS)
def test_gru_float16_both(backend):
    rng = np.random.default_rng(6)
    f16 = np.float16
    x = _rand(rng, [2, 2, 3], f16)
    w = _rand(rng, [2, 6, 3], f16)
    r = _rand(rng, [2, 6, 2], f16)
    got = _run(backend, "gru", [x, w, r, 2, 2], direction="both", return_sequence=True)
    _check(got, gru_ref(x, w, r, 2, 2, direction="both", return_sequence=True), f16)


# ---- lstm_cell ------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("layout", ["iofg", "ifgo"])
@pytest.mark.parametrize("peephole", [False, True])
@pytest.mark.parametrize("activations", [None, ["relu", "tanh", "sigmoid"]])
def test_lstm_cell_options(backend, layout, peephole, activations):
    rng = np.random.default_rng(7)
    batch, inp, hs = 2, 3, 4
    x, w, r, h, c = (
        _rand(rng, s) for s in ([batch, inp], [4 * hs, inp], [4 * hs, hs], [batch, hs], [batch, hs])
    )
    options = {
        "layout": layout,
        "bias": _rand(rng, [4 * hs]),
        "recurrent_bias": _rand(rng, [4 * hs]),
    }
    if peephole:
        options["peephole_weight"] = _rand(rng, [3 * hs])
    if activations is not None:
        options["activations"] = activations
    got = _run(backend, "lstm_cell", [x, w, r, h, c, hs], **options)
    want = lstm_cell_ref(x, w, r, h, c, hs, **_numpy_options(options))
    _check(got, list(want))


@pytest.mark.parametrize("backend", BACKENDS)
def test_lstm_cell_defaults(backend):
    rng = np.random.default_rng(8)
    x, w, r, h, c = (_rand(rng, s) for s in ([1, 2], [8, 2], [8, 2], [1, 2], [1, 2]))
    got = _run(backend, "lstm_cell", [x, w, r, h, c, 2])
    _check(got, list(lstm_cell_ref(x, w, r, h, c, 2)))


@pytest.mark.parametrize("backend", BACKENDS)
def test_lstm_cell_float16_peephole(backend):
    rng = np.random.default_rng(9)
    f16 = np.float16
    x, w, r, h, c = (_rand(rng, s, f16) for s in ([2, 3], [8, 3], [8, 2], [2, 2], [2, 2]))
    p = _rand(rng, [6], f16)
    got = _run(backend, "lstm_cell", [x, w, r, h, c, 2], peephole_weight=p, layout="ifgo")
    _check(got, list(lstm_cell_ref(x, w, r, h, c, 2, peephole_weight=p, layout="ifgo")), f16)


# ---- lstm -----------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("direction", ["forward", "backward", "both"])
@pytest.mark.parametrize("return_sequence", [False, True])
@pytest.mark.parametrize("layout", ["iofg", "ifgo"])
def test_lstm_directions(backend, direction, return_sequence, layout):
    rng = np.random.default_rng(10)
    steps, batch, inp, hs = 3, 2, 3, 2
    dirs = 2 if direction == "both" else 1
    x = _rand(rng, [steps, batch, inp])
    w = _rand(rng, [dirs, 4 * hs, inp])
    r = _rand(rng, [dirs, 4 * hs, hs])
    options = {
        "bias": _rand(rng, [dirs, 4 * hs]),
        "recurrent_bias": _rand(rng, [dirs, 4 * hs]),
        "peephole_weight": _rand(rng, [dirs, 3 * hs]),
        "initial_hidden_state": _rand(rng, [dirs, batch, hs]),
        "initial_cell_state": _rand(rng, [dirs, batch, hs]),
        "return_sequence": return_sequence,
        "direction": direction,
        "layout": layout,
    }
    got = _run(backend, "lstm", [x, w, r, steps, hs], **options)
    _check(got, lstm_ref(x, w, r, steps, hs, **options))


@pytest.mark.parametrize("backend", BACKENDS)
def test_lstm_defaults(backend):
    rng = np.random.default_rng(11)
    x = _rand(rng, [2, 3, 2])
    w = _rand(rng, [1, 12, 2])
    r = _rand(rng, [1, 12, 3])
    got = _run(backend, "lstm", [x, w, r, 2, 3])
    assert len(got) == 2
    _check(got, lstm_ref(x, w, r, 2, 3))


@pytest.mark.parametrize("backend", BACKENDS)
def test_lstm_float16_sequence(backend):
    rng = np.random.default_rng(12)
    f16 = np.float16
    x = _rand(rng, [3, 1, 2], f16)
    w = _rand(rng, [1, 8, 2], f16)
    r = _rand(rng, [1, 8, 2], f16)
    got = _run(backend, "lstm", [x, w, r, 3, 2], return_sequence=True, direction="backward")
    _check(got, lstm_ref(x, w, r, 3, 2, return_sequence=True, direction="backward"), f16)


# ---- dynamic batch --------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_gru_dynamic_batch(backend):
    rng = np.random.default_rng(13)
    context = _context(backend)
    b = context.create_graph_builder()
    batch = {"name": "batch", "maxSize": 4}
    x = b.input("x", [2, batch, 3], "float32")
    w, r = _rand(rng, [1, 6, 3]), _rand(rng, [1, 6, 2])
    hidden, sequence = b.gru(x, b.constant(w), b.constant(r), 2, 2, return_sequence=True)
    assert b.operand_shape(hidden) == [1, batch, 2]
    assert b.operand_shape(sequence) == [2, 1, batch, 2]
    graph = b.build({"h": hidden, "s": sequence})
    xv = _rand(rng, [2, 3, 3])
    xt = context.create_tensor([2, 4, 3], "float32", writable=True)
    ht = context.create_tensor([1, 4, 2], "float32", readable=True)
    st = context.create_tensor([2, 1, 4, 2], "float32", readable=True)
    context.resize_tensor(xt, [2, 3, 3])
    context.resize_tensor(ht, [1, 3, 2])
    context.resize_tensor(st, [2, 1, 3, 2])
    context.write_tensor(xt, xv)
    context.dispatch(graph, {"x": xt}, {"h": ht, "s": st})
    want = gru_ref(xv, w, r, 2, 2, return_sequence=True)
    _check([context.read_tensor(ht), context.read_tensor(st)], want)


@pytest.mark.parametrize("backend", BACKENDS)
def test_lstm_cell_dynamic_batch_shape(backend):
    b = _context(backend).create_graph_builder()
    n = {"name": "n", "maxSize": 8}
    x = b.input("x", [n, 3], "float32")
    h = b.input("h", [n, 2], "float32")
    c = b.input("c", [n, 2], "float32")
    w = b.input("w", [8, 3], "float32")
    r = b.input("r", [8, 2], "float32")
    hidden, cell = b.lstm_cell(x, w, r, h, c, 2)
    assert b.operand_shape(hidden) == [n, 2]
    assert b.operand_shape(cell) == [n, 2]
    with pytest.raises(ValueError, match="dynamic dimension 'm'"):
        b.lstm_cell(
            b.input("x2", [2, {"name": "m", "maxSize": 3}], "float32"),
            w,
            r,
            b.input("h2", [2, 2], "float32"),
            b.input("c2", [2, 2], "float32"),
            2,
        )


# ---- rejections -----------------------------------------------------------------------------


def _gru_args(b, steps=2, batch=3, inp=4, hs=5, dirs=1, dtype="float32"):
    return [
        b.input("x", [steps, batch, inp], dtype),
        b.input("w", [dirs, 3 * hs, inp], dtype),
        b.input("r", [dirs, 3 * hs, hs], dtype),
    ]


def _lstm_cell_args(b, batch=3, inp=4, hs=5, dtype="float32"):
    return [
        b.input("x", [batch, inp], dtype),
        b.input("w", [4 * hs, inp], dtype),
        b.input("r", [4 * hs, hs], dtype),
        b.input("h", [batch, hs], dtype),
        b.input("c", [batch, hs], dtype),
    ]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "steps,hidden,options,message",
    [
        (3, 5, {}, r"input.shape\[0\] \(2\) must equal steps \(3\)"),
        (0, 5, {}, "steps must be greater than 0"),
        (2, 0, {}, "hidden_size must be greater than 0"),
        (2, 2**31, {}, "6 \\* hidden_size is not a valid dimension"),
        (2, 5, {"direction": "up"}, 'direction "up"'),
        (2, 5, {"layout": "ifgo"}, 'layout "ifgo"'),
        (2, 5, {"activations": ["relu"]}, "activations must have 2 entries"),
        (2, 5, {"activations": ["relu", "elu"]}, 'activation "elu"'),
        (2, 5, {"direction": "both"}, r"weight shape \[1,15,4\] must be \[2,15,4\]"),
    ],
)
def test_gru_value_errors(backend, steps, hidden, options, message):
    b = _context(backend).create_graph_builder()
    args = _gru_args(b)
    with pytest.raises(ValueError, match=message):
        b.gru(*args, steps, hidden, **options)


@pytest.mark.parametrize("backend", BACKENDS)
def test_gru_operand_shape_and_type_errors(backend):
    b = _context(backend).create_graph_builder()
    x, w, r = _gru_args(b)
    with pytest.raises(ValueError, match=r"bias shape \[1,10\] must be \[1,15\]"):
        b.gru(x, w, r, 2, 5, bias=b.input("b", [1, 10], "float32"))
    with pytest.raises(ValueError, match="recurrent_bias data type float16"):
        b.gru(x, w, r, 2, 5, recurrent_bias=b.input("rb", [1, 15], "float16"))
    with pytest.raises(ValueError, match="initial_hidden_state shape"):
        b.gru(x, w, r, 2, 5, initial_hidden_state=b.input("h0", [1, 2, 5], "float32"))
    with pytest.raises(ValueError, match="input data type int32 is not supported"):
        b.gru(b.input("xi", [2, 3, 4], "int32"), w, r, 2, 5)
    with pytest.raises(ValueError, match="rank"):
        b.gru(b.input("x2", [2, 12], "float32"), w, r, 2, 5)


@pytest.mark.parametrize("backend", BACKENDS)
def test_gru_cell_errors(backend):
    b = _context(backend).create_graph_builder()
    x = b.input("x", [3, 4], "float32")
    w = b.input("w", [15, 4], "float32")
    r = b.input("r", [15, 5], "float32")
    h = b.input("h", [3, 5], "float32")
    with pytest.raises(ValueError, match=r"hidden_state shape \[3,5\] must be \[3,4\]"):
        b.gru_cell(x, b.input("w4", [12, 4], "float32"), b.input("r4", [12, 4], "float32"), h, 4)
    with pytest.raises(ValueError, match=r"bias shape \[20\]"):
        b.gru_cell(x, w, r, h, 5, bias=b.input("b", [20], "float32"))
    with pytest.raises(ValueError, match="activations must have 2 entries"):
        b.gru_cell(x, w, r, h, 5, activations=["sigmoid", "tanh", "relu"])
    with pytest.raises(TypeError):
        b.gru_cell(x, w, r, h, 5, activations="sigmoid")
    with pytest.raises(TypeError):
        b.gru_cell(x, w, r, h, 5, reset_after="yes")
    with pytest.raises(TypeError):
        b.gru_cell(x, w, r, h, 5.0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_lstm_errors(backend):
    b = _context(backend).create_graph_builder()
    x = b.input("x", [2, 3, 4], "float32")
    w = b.input("w", [1, 20, 4], "float32")
    r = b.input("r", [1, 20, 5], "float32")
    with pytest.raises(ValueError, match=r"peephole_weight shape \[1,20\] must be \[1,15\]"):
        b.lstm(x, w, r, 2, 5, peephole_weight=b.input("p", [1, 20], "float32"))
    with pytest.raises(ValueError, match="initial_cell_state shape"):
        b.lstm(x, w, r, 2, 5, initial_cell_state=b.input("c0", [1, 3, 4], "float32"))
    with pytest.raises(ValueError, match='layout "zrn"'):
        b.lstm(x, w, r, 2, 5, layout="zrn")
    with pytest.raises(ValueError, match="activations must have 3 entries"):
        b.lstm(x, w, r, 2, 5, activations=["sigmoid", "tanh"])
    with pytest.raises(ValueError, match="8 \\* hidden_size"):
        b.lstm(x, w, r, 2, 2**28)
    with pytest.raises(ValueError, match="steps must be greater than 0"):
        b.lstm(x, w, r, 0, 5)
    with pytest.raises(OverflowError):
        b.lstm(x, w, r, -2, 5)
    with pytest.raises(TypeError):
        b.lstm(x, w, r, "2", 5)
    with pytest.raises(TypeError):
        b.lstm(x, w, r, 2, 5, direction=2)
    with pytest.raises(TypeError):
        b.lstm(np.zeros([2, 3, 4], np.float32), w, r, 2, 5)


@pytest.mark.parametrize("backend", BACKENDS)
def test_lstm_cell_errors(backend):
    b = _context(backend).create_graph_builder()
    x, w, r, h, c = _lstm_cell_args(b)
    with pytest.raises(ValueError, match=r"cell_state shape \[3,4\] must be \[3,5\]"):
        b.lstm_cell(x, w, r, h, b.input("c4", [3, 4], "float32"), 5)
    with pytest.raises(ValueError, match=r"weight shape \[20,4\] must be \[16,4\]"):
        b.lstm_cell(x, w, r, b.input("h4", [3, 4], "float32"), b.input("c5", [3, 4], "float32"), 4)
    with pytest.raises(ValueError, match=r"bias shape \[15\] must be \[20\]"):
        b.lstm_cell(x, w, r, h, c, 5, recurrent_bias=b.input("rb", [15], "float32"))
    with pytest.raises(ValueError, match='activation "softmax"'):
        b.lstm_cell(x, w, r, h, c, 5, activations=["sigmoid", "softmax", "tanh"])
    with pytest.raises(ValueError, match="float16"):
        b.lstm_cell(x, w, r, h, c, 5, peephole_weight=b.input("p", [15], "float16"))
    with pytest.raises(ValueError, match="hidden_size must be greater than 0"):
        b.lstm_cell(x, w, r, h, c, 0)
    with pytest.raises(TypeError):
        b.lstm_cell(x, w, r, h, c, 5, activations=[1, 2, 3])
