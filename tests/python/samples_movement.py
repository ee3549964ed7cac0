"""Sample graphs for casting and tensor manipulation (see test_support_limits.py)."""

from samples_common import const


def _type(dtypes, name="input"):
    return dtypes.get(name, dtypes.get("output", "float32"))


def _cast(b, dtypes):
    return b.cast(const(b, [2, 3], dtypes.get("input", "float32")), dtypes.get("output", "float32"))


def _concat(b, dtypes):
    t = _type(dtypes, "inputs")
    return b.concat([const(b, [2, 3], t), const(b, [1, 3], t)], 0)


def _split(b, dtypes):
    return b.split(const(b, [2, 4], _type(dtypes)), [1, 3], axis=1)


def _unary(method, shape, *args, **kwargs):
    def make(b, dtypes):
        return getattr(b, method)(const(b, shape, _type(dtypes)), *args, **kwargs)

    return make


def _shape(b, dtypes):
    return b.shape(const(b, [2, 3], dtypes.get("input", "float32")))


SAMPLES = {
    "cast": _cast,
    "concat": _concat,
    "expand": _unary("expand", [3, 1], [2, 3, 4]),
    "reshape": _unary("reshape", [2, 3], [3, 2]),
    "slice": _unary("slice", [3, 4], [1, 1], [2, 2], strides=[1, 2]),
    "split": _split,
    "tile": _unary("tile", [2, 3], [2, 1]),
    "transpose": _unary("transpose", [2, 3, 4], [1, 2, 0]),
    "pad": _unary("pad", [2, 3], [1, 0], [0, 2], mode="constant", value=1),
    "reverse": _unary("reverse", [2, 3], [1]),
    "triangular": _unary("triangular", [3, 3], upper=False, diagonal=1),
    "squeeze": _unary("squeeze", [2, 1, 3], [1]),
    "unsqueeze": _unary("unsqueeze", [2, 3], [0, 3]),
    "shape": _shape,
}
