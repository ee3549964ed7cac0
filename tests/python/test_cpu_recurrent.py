"""The cpu backend's double lstm, lstmCell, gru and gruCell kernel against the reference backend.

The double kernel does the reference's double operations in its order (see
src/backends/cpu/recurrent.cc), so every output must be bit-identical, over random sizes
(vector tails, hidden sizes wide enough to split a step over threads) and every option:
directions, layouts, activations, reset_after, optional biases / peepholes / initial states
(as constants or graph inputs), return_sequence. Large products with sigmoid gates run on the
float32 kernel instead (test_cpu_recurrent_f32.py): these tests pin the double one with
WEBNN_RECURRENT_KERNEL=double. The last test reruns this file with the AVX2 and generic kernels
and with 1 and 3 threads.
"""

import numpy as np
import pytest
import rerun
from test_cpu_backend import _context, assert_ulp

ACTS = ["sigmoid", "tanh", "relu"]


def _compute(backend, op, args, options, arrays, as_input):
    """Builds op(args..., **options); arrays named in as_input are graph inputs, others constants."""
    b = _context(backend).create_graph_builder()

    def operand(name):
        a = arrays[name]
        if name in as_input:
            return b.input(name, list(a.shape), "float32")
        return b.constant(a)

    positional = [operand(a) if isinstance(a, str) else a for a in args]
    opts = {k: operand(v) if k in OPERAND_OPTIONS else v for k, v in options.items()}
    outs = getattr(b, op)(*positional, **opts)
    outs = outs if isinstance(outs, list) else [outs]
    graph = b.build({f"y{i}": o for i, o in enumerate(outs)})
    feeds = {k: arrays[k] for k in as_input}
    result = _context(backend).compute(graph, feeds)
    return [result[f"y{i}"] for i in range(len(outs))]


OPERAND_OPTIONS = {
    "bias",
    "recurrent_bias",
    "peephole_weight",
    "initial_hidden_state",
    "initial_cell_state",
}


def random_case(rng, op, sizes=((1, 40), (1, 40), (1, 5)), weight_scale=None, acts=ACTS):
    """A random op(args, **options) with every option drawn: sizes are the (input, hidden,
    steps) ranges, weights scaled by weight_scale(fan_in) (default 0.3), activations from
    `acts` (the gate activation forced to sigmoid when sigmoid is the first of them and relu
    is not among them, the float32 kernel's rule)."""
    lstm = op.startswith("lstm")
    cell = op.endswith("_cell")
    gates = 4 if lstm else 3
    (inp_range, hid_range, steps_range) = sizes
    steps = 1 if cell else int(rng.integers(*steps_range))
    batch = int(rng.integers(1, 4))
    inp, hid = int(rng.integers(*inp_range)), int(rng.integers(*hid_range))
    direction = "forward" if cell else str(rng.choice(["forward", "backward", "both"]))
    dirs = 2 if direction == "both" else 1
    lead = [] if cell else [dirs]
    arrays = {}

    def data(name, shape, scale=1.0):
        arrays[name] = (rng.standard_normal(shape) * scale).astype(np.float32)
        return name

    scale = weight_scale or (lambda fan_in: 0.3)
    x = data("x", [batch, inp] if cell else [steps, batch, inp])
    w = data("w", lead + [gates * hid, inp], scale(inp))
    r = data("r", lead + [gates * hid, hid], scale(hid))
    options = {}
    if rng.integers(2):
        options["bias"] = data("b", lead + [gates * hid])
    if rng.integers(2):
        options["recurrent_bias"] = data("rb", lead + [gates * hid])
    if lstm and rng.integers(2):
        options["peephole_weight"] = data("peep", lead + [3 * hid])
    gate_sigmoid = acts[0] == "sigmoid" and "relu" not in acts
    count = 3 if lstm else 2
    chosen = [str(a) for a in rng.choice(acts, count)]
    if gate_sigmoid:
        chosen[0] = "sigmoid"
    if lstm:
        options["layout"] = str(rng.choice(["iofg", "ifgo"]))
    else:
        options["layout"] = str(rng.choice(["zrn", "rzn"]))
        options["reset_after"] = bool(rng.integers(2))
    options["activations"] = chosen
    if rng.integers(3) == 0:
        del options["activations"]
    if cell:
        h = data("h", [batch, hid])
        args = [x, w, r, h]
        if lstm:
            args.append(data("c", [batch, hid]))
        args.append(hid)
    else:
        args = [x, w, r, steps, hid]
        options["direction"] = direction
        options["return_sequence"] = bool(rng.integers(2))
        if rng.integers(2):
            options["initial_hidden_state"] = data("h0", [dirs, batch, hid])
        if lstm and rng.integers(2):
            options["initial_cell_state"] = data("c0", [dirs, batch, hid])
    # Each array independently a graph input (packed per run) or a constant (packed at build).
    as_input = {k for k in arrays if k == "x" or rng.integers(3) == 0}
    return args, options, arrays, as_input


def _case(rng, op, big=False):
    sizes = ((120, 200), (130, 260), (1, 5)) if big else ((1, 40), (1, 40), (1, 5))
    return random_case(rng, op, sizes)


@pytest.mark.parametrize("op", ["lstm", "gru", "lstm_cell", "gru_cell"])
@pytest.mark.parametrize("seed", range(12))
def test_recurrent_bit_identical_to_reference(op, seed, monkeypatch):
    monkeypatch.setenv("WEBNN_RECURRENT_KERNEL", "double")
    rng = np.random.default_rng(seed * 7 + len(op))
    args, options, arrays, as_input = _case(rng, op, big=seed == 11)
    got = _compute("cpu", op, args, options, arrays, as_input)
    want = _compute("reference", op, args, options, arrays, as_input)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert_ulp(g, w, 0)


def test_recurrent_nan_and_inf_propagate_as_in_reference(monkeypatch):
    monkeypatch.setenv("WEBNN_RECURRENT_KERNEL", "double")
    rng = np.random.default_rng(5)
    args, options, arrays, as_input = _case(rng, "lstm")
    arrays["x"].flat[0] = np.nan
    arrays["x"].flat[-1] = np.inf
    got = _compute("cpu", "lstm", args, options, arrays, as_input)
    want = _compute("reference", "lstm", args, options, arrays, as_input)
    for g, w in zip(got, want):
        assert_ulp(g, w, 0)


@pytest.mark.skipif(rerun.nested(), reason="nested")
@rerun.each_cpu_setting
def test_other_isas_and_thread_counts(env):
    rerun.assert_file_passes(__file__, env)
