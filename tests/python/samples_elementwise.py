"""Sample graphs for the element-wise families (see test_support_limits.py)."""

from samples_common import const


def _binary(op, default="float32"):
    def make(b, dtypes):
        t = dtypes.get("a", dtypes.get("b", default))
        if "output" in dtypes and op not in _PREDICATES:
            t = dtypes["output"]
        return getattr(b, op)(
            const(b, [2, 3], dtypes.get("a", t)), const(b, [3], dtypes.get("b", t))
        )

    return make


def _unary(op, name="input", default="float32", **kwargs):
    def make(b, dtypes):
        t = dtypes.get(name, default)
        if "output" in dtypes and op not in _PREDICATES:
            t = dtypes["output"]
        return getattr(b, op)(const(b, [2, 3], t), **kwargs)

    return make


_PREDICATES = {
    "equal",
    "not_equal",
    "greater",
    "greater_or_equal",
    "lesser",
    "lesser_or_equal",
    "logical_and",
    "logical_or",
    "logical_xor",
    "logical_not",
    "is_nan",
    "is_infinite",
}

SAMPLES = {}
for spec, py in [
    ("add", "add"),
    ("sub", "sub"),
    ("mul", "mul"),
    ("div", "div"),
    ("max", "max"),
    ("min", "min"),
    ("pow", "pow"),
    ("equal", "equal"),
    ("notEqual", "not_equal"),
    ("greater", "greater"),
    ("greaterOrEqual", "greater_or_equal"),
    ("lesser", "lesser"),
    ("lesserOrEqual", "lesser_or_equal"),
]:
    SAMPLES[spec] = _binary(py)
for spec, py in [
    ("logicalAnd", "logical_and"),
    ("logicalOr", "logical_or"),
    ("logicalXor", "logical_xor"),
]:
    SAMPLES[spec] = _binary(py, default="uint8")
SAMPLES["logicalNot"] = _unary("logical_not", name="a", default="uint8")
for spec, py in [
    ("isNaN", "is_nan"),
    ("isInfinite", "is_infinite"),
    ("abs", "abs"),
    ("ceil", "ceil"),
    ("cos", "cos"),
    ("erf", "erf"),
    ("exp", "exp"),
    ("floor", "floor"),
    ("identity", "identity"),
    ("log", "log"),
    ("neg", "neg"),
    ("reciprocal", "reciprocal"),
    ("roundEven", "round_even"),
    ("sin", "sin"),
    ("sign", "sign"),
    ("sqrt", "sqrt"),
    ("tan", "tan"),
    ("relu", "relu"),
    ("sigmoid", "sigmoid"),
    ("tanh", "tanh"),
    ("softplus", "softplus"),
    ("softsign", "softsign"),
    ("gelu", "gelu"),
    ("hardSwish", "hard_swish"),
    ("elu", "elu"),
    ("leakyRelu", "leaky_relu"),
    ("hardSigmoid", "hard_sigmoid"),
    ("linear", "linear"),
]:
    SAMPLES[spec] = _unary(py)
SAMPLES["clamp"] = _unary("clamp", min_value=1, max_value=2)
SAMPLES["softmax"] = _unary("softmax", axis=1)


def _prelu(b, dtypes):
    t = dtypes.get("input", dtypes.get("slope", dtypes.get("output", "float32")))
    return b.prelu(const(b, [2, 3], dtypes.get("input", t)), const(b, [3], dtypes.get("slope", t)))


SAMPLES["prelu"] = _prelu
