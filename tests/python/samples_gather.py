"""Sample graphs for the gather/scatter/where family (see test_support_limits.py)."""

from samples_common import const


def _data_type(dtypes, *fields):
    """The requested type of the data operands (input, updates, values or output)."""
    for field in fields + ("output",):
        if field in dtypes:
            return dtypes[field]
    return "float32"


def _gather(b, dtypes):
    t = _data_type(dtypes, "input")
    indices = const(b, [2], dtypes.get("indices", "int32"), [2, 0])
    return b.gather(const(b, [3, 2], t), indices, axis=0)


def _gather_elements(b, dtypes):
    t = _data_type(dtypes, "input")
    indices = const(b, [2, 2], dtypes.get("indices", "int32"), [0, 2, 1, 0])
    return b.gather_elements(const(b, [3, 2], t), indices, axis=0)


def _gather_nd(b, dtypes):
    t = _data_type(dtypes, "input")
    indices = const(b, [2, 2], dtypes.get("indices", "int32"), [0, 1, 2, 0])
    return b.gather_nd(const(b, [3, 2, 2], t), indices)


def _scatter_elements(b, dtypes):
    t = _data_type(dtypes, "input", "updates")
    indices = const(b, [1, 2], dtypes.get("indices", "int32"), [2, 0])
    return b.scatter_elements(
        const(b, [3, 2], dtypes.get("input", t)),
        indices,
        const(b, [1, 2], dtypes.get("updates", t), [3, 1]),
        axis=0,
    )


def _scatter_nd(b, dtypes):
    t = _data_type(dtypes, "input", "updates")
    indices = const(b, [2, 1], dtypes.get("indices", "int32"), [2, 0])
    return b.scatter_nd(
        const(b, [3, 2], dtypes.get("input", t)),
        indices,
        const(b, [2, 2], dtypes.get("updates", t), [3, 1, 2, 0]),
    )


def _where(b, dtypes):
    t = _data_type(dtypes, "trueValue", "falseValue")
    condition = const(b, [2, 1], dtypes.get("condition", "uint8"), [1, 0])
    return b.where(
        condition,
        const(b, [2, 3], dtypes.get("trueValue", t)),
        const(b, [3], dtypes.get("falseValue", t)),
    )


SAMPLES = {
    "gather": _gather,
    "gatherElements": _gather_elements,
    "gatherND": _gather_nd,
    "scatterElements": _scatter_elements,
    "scatterND": _scatter_nd,
    "where": _where,
}
