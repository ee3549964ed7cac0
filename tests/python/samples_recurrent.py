"""Sample graphs for the recurrent family (see test_support_limits.py)."""

from samples_common import const

FLOAT_TYPES = ("float32", "float16")
STEPS, BATCH, INPUT_SIZE, HIDDEN = 2, 2, 3, 2


def _types(dtypes):
    """Returns type_of(name): the requested type for the named argument, else a consistent one.

    All operands of a recurrent op share one float type, so when a float type is requested
    every operand gets it; an unsupported type goes to the named argument only, so that it is
    the one rejected.
    """
    ((field, requested),) = dtypes.items()
    default = requested if requested in FLOAT_TYPES else "float32"
    return lambda name: requested if name == field else default


def _gru(b, dtypes):
    t = _types(dtypes)
    h = HIDDEN
    return b.gru(
        const(b, [STEPS, BATCH, INPUT_SIZE], t("input")),
        const(b, [2, 3 * h, INPUT_SIZE], t("weight")),
        const(b, [2, 3 * h, h], t("recurrentWeight")),
        STEPS,
        h,
        bias=const(b, [2, 3 * h], t("bias")),
        recurrent_bias=const(b, [2, 3 * h], t("recurrentBias")),
        initial_hidden_state=const(b, [2, BATCH, h], t("initialHiddenState")),
        return_sequence=True,
        direction="both",
    )


def _gru_cell(b, dtypes):
    t = _types(dtypes)
    h = HIDDEN
    return b.gru_cell(
        const(b, [BATCH, INPUT_SIZE], t("input")),
        const(b, [3 * h, INPUT_SIZE], t("weight")),
        const(b, [3 * h, h], t("recurrentWeight")),
        const(b, [BATCH, h], t("hiddenState")),
        h,
        bias=const(b, [3 * h], t("bias")),
        recurrent_bias=const(b, [3 * h], t("recurrentBias")),
    )


def _lstm(b, dtypes):
    t = _types(dtypes)
    h = HIDDEN
    return b.lstm(
        const(b, [STEPS, BATCH, INPUT_SIZE], t("input")),
        const(b, [2, 4 * h, INPUT_SIZE], t("weight")),
        const(b, [2, 4 * h, h], t("recurrentWeight")),
        STEPS,
        h,
        bias=const(b, [2, 4 * h], t("bias")),
        recurrent_bias=const(b, [2, 4 * h], t("recurrentBias")),
        peephole_weight=const(b, [2, 3 * h], t("peepholeWeight")),
        initial_hidden_state=const(b, [2, BATCH, h], t("initialHiddenState")),
        initial_cell_state=const(b, [2, BATCH, h], t("initialCellState")),
        return_sequence=True,
        direction="both",
    )


def _lstm_cell(b, dtypes):
    t = _types(dtypes)
    h = HIDDEN
    return b.lstm_cell(
        const(b, [BATCH, INPUT_SIZE], t("input")),
        const(b, [4 * h, INPUT_SIZE], t("weight")),
        const(b, [4 * h, h], t("recurrentWeight")),
        const(b, [BATCH, h], t("hiddenState")),
        const(b, [BATCH, h], t("cellState")),
        h,
        bias=const(b, [4 * h], t("bias")),
        recurrent_bias=const(b, [4 * h], t("recurrentBias")),
        peephole_weight=const(b, [3 * h], t("peepholeWeight")),
    )


SAMPLES = {"gru": _gru, "gruCell": _gru_cell, "lstm": _lstm, "lstmCell": _lstm_cell}
