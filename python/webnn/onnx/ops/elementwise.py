"""Element-wise arithmetic, comparison, logic, rounding and math functions."""

import numpy as np

from .. import codes
from ..held import HELD, WRAPPED, wrap_range
from ..types import DOUBLE, FLOAT16, FLOAT_TYPES, ONNX_TO_WEBNN
from .registry import op, unary_ops
from .util import to_dtype

_BINARY = {
    "Add": "add",
    "Sub": "sub",
    "Mul": "mul",
    "Equal": "equal",
    "Greater": "greater",
    "GreaterOrEqual": "greater_or_equal",
    "Less": "lesser",
    "LessOrEqual": "lesser_or_equal",
    "And": "logical_and",
    "Or": "logical_or",
    "Xor": "logical_xor",
}


def _legacy_broadcast(n, a, b_op):
    """Opset < 7 'broadcast=1, axis=k': align B's dims at axis k of A."""
    if n.attr("broadcast", 0) and n.opset < 7:
        axis = n.attr("axis", None)
        ra, rb = n.rank(0), n.rank(1)
        if axis is not None and rb < ra:
            axis = axis + ra if axis < 0 else axis
            trailing = ra - axis - rb
            if trailing > 0:
                b_op = n.b.reshape(b_op, list(n.shape(1)) + [1] * trailing)
    return b_op


def _binary(method):
    def convert(n):
        a, b = n.x(0), n.x(1)
        b = _legacy_broadcast(n, a, b)
        return getattr(n.b, method)(a, b)

    return convert


for _onnx_name, _method in _BINARY.items():
    op(_onnx_name)(_binary(_method))


@op("Div")
def div(n):
    a, b = n.x(0), n.x(1)
    b = _legacy_broadcast(n, a, b)
    dtype = n.dtype(0)
    if dtype in FLOAT_TYPES:
        return n.b.div(a, b)
    return _int_div_trunc(n, a, b, dtype)


def _int_div_trunc(n, a, b, dtype):
    """ONNX integer Div truncates toward zero (C semantics)."""
    if dtype in ("int64", "uint64", "int32", "uint32"):
        # float64 does not exist in WebNN; divide in float32 and correct the quotient by one
        # step where rounding put it on the wrong side (exact for |a| < 2**24 * |b|).
        af, bf = n.b.cast(a, "float32"), n.b.cast(b, "float32")
        q = n.b.cast(_trunc(n, n.b.div(af, bf)), dtype)
        return _fix_trunc_quotient(n, a, b, q, dtype)
    af, bf = n.b.cast(a, "float32"), n.b.cast(b, "float32")
    return n.b.cast(_trunc(n, n.b.div(af, bf)), dtype)


def _fix_trunc_quotient(n, a, b, q, dtype):
    b_ = n.b
    r = b_.sub(a, b_.mul(q, b))
    zero = n.const(0, dtype)
    if dtype.startswith("u"):
        # r >= b: q too small; r "negative" wraps huge -> also >= b... handle both via compare
        over = b_.greater_or_equal(r, b)
        return b_.add(q, b_.cast(over, dtype))
    one = n.const(1, dtype)
    # sign of the true quotient; |r| must be < |b| and r must have a's sign (or be 0)
    abs_r, abs_b = b_.abs(r), b_.abs(b)
    too_small = b_.logical_and(
        b_.greater_or_equal(abs_r, abs_b), b_.equal(b_.lesser(r, zero), b_.lesser(a, zero))
    )
    wrong_sign = b_.logical_and(
        b_.not_equal(r, zero), b_.not_equal(b_.lesser(r, zero), b_.lesser(a, zero))
    )
    step = b_.where(b_.equal(b_.lesser(a, zero), b_.lesser(b, zero)), one, b_.neg(one))
    q = b_.where(too_small, b_.add(q, step), q)
    q = b_.where(wrong_sign, b_.sub(q, step), q)
    return q


def _trunc(n, x):
    b = n.b
    return b.where(b.lesser(x, n.const(0, n.b.operand_data_type(x))), b.ceil(x), b.floor(x))


@op("Mod")
def mod(n):
    a, b = n.x(0), n.x(1)
    dtype = n.dtype(0)
    bl = n.b
    fmod = n.attr("fmod", 0)
    if dtype in FLOAT_TYPES:
        # fmod: a - trunc(a / b) * b, sign of the dividend; a finite a modulo +-inf is a
        r = bl.sub(a, bl.mul(_trunc(n, bl.div(a, b)), b))
        r = bl.where(bl.logical_and(bl.is_infinite(b), bl.logical_not(bl.is_infinite(a))), a, r)
        if fmod:
            return r
        zero = n.const(0, dtype)
        fix = bl.logical_and(
            bl.not_equal(r, zero), bl.not_equal(bl.lesser(r, zero), bl.lesser(b, zero))
        )
        return bl.where(fix, bl.add(r, b), r)
    q = _int_div_trunc(n, a, b, dtype)
    r = bl.sub(a, bl.mul(q, b))
    if fmod or dtype.startswith("u"):
        return r
    zero = n.const(0, dtype)
    # Python-style: the result takes the sign of the divisor.
    fix = bl.logical_and(
        bl.not_equal(r, zero), bl.not_equal(bl.lesser(r, zero), bl.lesser(b, zero))
    )
    return bl.where(fix, bl.add(r, b), r)


@op("Pow")
def pow_(n):
    a, e = n.x(0), n.x(1)
    dtype = n.dtype(0)
    if n.is_const(1):
        ev = n.c(1)
        if ev.size == 1 and dtype in FLOAT_TYPES:
            v = float(ev.reshape(-1)[0])
            if v == 2.0:
                return n.b.mul(a, a)
            if v == 3.0:  # ONNX Runtime's Pow computes x * x * x here: the same bits, and fast
                return n.b.mul(n.b.mul(a, a), a)
            if v == 1.0:
                return n.b.identity(a)
            if v == 0.5:
                return n.b.sqrt(a)
    e = to_dtype(n, e, dtype)
    if dtype not in FLOAT_TYPES:
        af = n.b.cast(a, "float32")
        r = n.b.pow(af, n.b.cast(e, "float32"))
        return n.b.cast(n.b.round_even(r), dtype)
    return n.b.pow(a, e)


def _fold_inputs(n, method):
    """The node's present inputs, and the builder's binary `method` folded over them."""
    ops_ = [n.x(i) for i in range(n.n_inputs) if n.has(i)]
    out = ops_[0]
    for other in ops_[1:]:
        out = getattr(n.b, method)(out, other)
    return ops_, out


def _variadic(method, mean=False):
    def convert(n):
        ops_, out = _fold_inputs(n, method)
        if len(ops_) == 1:
            return n.b.identity(out)
        if mean:
            out = n.b.div(out, n.const(len(ops_), n.b.operand_data_type(out)))
        return out

    return convert


op("Sum")(_variadic("add"))
op("Mean")(_variadic("add", mean=True))


def _minmax(method):
    def convert(n):
        # ONNX propagates NaN from any input; so do this engine's float max/min on every
        # backend and in fused epilogues (docs/onnx.md), so no isNaN guard is needed.
        ops_, out = _fold_inputs(n, method)
        if len(ops_) == 1:
            return n.b.identity(out)
        return out

    return convert


op("Max")(_minmax("max"))
op("Min")(_minmax("min"))

_UNARY = {
    "Abs": "abs",
    "Neg": "neg",
    "Ceil": "ceil",
    "Floor": "floor",
    "Sqrt": "sqrt",
    "Exp": "exp",
    "Log": "log",
    "Sin": "sin",
    "Cos": "cos",
    "Tan": "tan",
    "Erf": "erf",
    "Reciprocal": "reciprocal",
    "Round": "round_even",
    "Not": "logical_not",
    "IsNaN": "is_nan",
    "Identity": "identity",
}

unary_ops(_UNARY)


@op("Sign")
def sign(n):
    dtype = n.dtype(0)
    if dtype.startswith("u"):
        return n.b.cast(n.b.greater(n.x(0), n.const(0, dtype)), dtype)
    return n.b.sign(n.x(0))


@op("IsInf")
def is_inf(n):
    x = n.x(0)
    pos, neg = n.attr("detect_positive", 1), n.attr("detect_negative", 1)
    dtype = n.dtype(0)
    if pos and neg:
        return n.b.is_infinite(x)
    inf = n.b.is_infinite(x)
    zero = n.const(0, dtype)
    if pos:
        return n.b.logical_and(inf, n.b.greater(x, zero))
    if neg:
        return n.b.logical_and(inf, n.b.lesser(x, zero))
    return n.b.logical_and(inf, n.b.logical_not(inf))


def _exp_pair(n, x):
    e = n.b.exp(x)
    en = n.b.exp(n.b.neg(x))
    return e, en


@op("Sinh")
def sinh(n):
    x = n.x(0)
    e, en = _exp_pair(n, x)
    return n.b.mul(n.b.sub(e, en), n.const(0.5, n.dtype(0)))


@op("Cosh")
def cosh(n):
    x = n.x(0)
    e, en = _exp_pair(n, x)
    return n.b.mul(n.b.add(e, en), n.const(0.5, n.dtype(0)))


@op("Asinh")
def asinh(n):
    x = n.x(0)
    b = n.b
    one = n.const(1, n.dtype(0))
    # asinh(x) = sign(x) * log(|x| + sqrt(x^2 + 1)): symmetric, no cancellation for x < 0
    ax = b.abs(x)
    r = b.log(b.add(ax, b.sqrt(b.add(b.mul(x, x), one))))
    return b.mul(b.sign(x), r)


@op("Acosh")
def acosh(n):
    x = n.x(0)
    b = n.b
    one = n.const(1, n.dtype(0))
    return b.log(b.add(x, b.sqrt(b.sub(b.mul(x, x), one))))


@op("Atanh")
def atanh(n):
    x = n.x(0)
    b = n.b
    one = n.const(1, n.dtype(0))
    half = n.const(0.5, n.dtype(0))
    return b.mul(half, b.log(b.div(b.add(one, x), b.sub(one, x))))


@op("Cast")
def cast(n):
    to = n.attr("to")
    if to in HELD or n.elems[0] is not None:
        return cast_held(n, n.x(0), n.elems[0], to)
    if to == FLOAT16 and _float16_cast_dropped(n):
        return n.b.identity(n.x(0))
    return _cast_to(n, n.x(0), to)


def cast_held(n, x, src_elem, to):
    """Cast from or to a type WebNN lacks (held.py): float8 / float4 / e8m0 codes decoded
    and encoded exactly as onnx's reference (codes.py; `saturate`, e8m0's `round_mode`),
    bfloat16 rounded to nearest even, int16 / uint16 / int2 / uint2 narrowed as ONNX and
    ONNX Runtime do (narrow_int)."""
    from ..held import FLOAT_CODED, fix_result, holding_type
    from ..types import BFLOAT16

    b = n.b
    out = n.node.output[0]
    if src_elem == to:
        n.importer.held[out] = to
        return b.identity(x)
    if src_elem in FLOAT_CODED:
        x = codes.decode(n, x, src_elem)
    src = b.operand_data_type(x)
    if to not in HELD:
        if to == FLOAT16 and src == "float32" and _float16_cast_dropped(n):
            return b.identity(x)
        return _cast_to(n, x, to)
    n.importer.held[out] = to
    if to in FLOAT_CODED:
        saturate = bool(n.attr("saturate", 1))
        round_mode = n.attr("round_mode", "up")
        if round_mode not in ("up", "down", "nearest"):
            n.fail(f"round_mode {round_mode!r}: one of 'up', 'down', 'nearest'")
        return codes.encode(n, to_dtype(n, x, "float32"), to, saturate, round_mode)
    if to == BFLOAT16:
        if src_elem == BFLOAT16:
            return b.identity(x)
        return fix_result(n, to_dtype(n, x, "float32"), to)
    if to in codes.INT_RANGE:  # int2 / uint2, held as int8 / uint8
        return b.cast(narrow_int(n, x, src, *codes.INT_RANGE[to]), holding_type(to))
    return narrow_int(n, x, src, *WRAPPED[to])


_NARROW = {"int4": (-8, 7), "uint4": (0, 15)}


def narrow_int(n, x, src, lo, hi):
    """x as an integer of the range [lo, hi] (a power-of-two span), held in int32. From
    integers ONNX discards the higher bits (wraps modulo the span; 64-bit and uint32 values
    reach int32 by the engine's cast, which wraps modulo 2^32 as C++ does). From floats ONNX
    truncates and leaves out-of-range values undefined: for the 16-bit types as ONNX Runtime
    and numpy compute them on x86, truncated toward zero to int32 (NaN and |x| >= 2^31 give
    INT_MIN, as cvttss2si does), then the higher bits discarded; for the 4- and 2-bit types
    as onnx's reference (ml_dtypes): truncated, 0 when out of range (ORT wraps those after
    rounding half away from zero; all agree on values in range)."""
    b = n.b
    if src in FLOAT_TYPES and hi - lo < 255:
        t = to_dtype(n, _trunc(n, x), "float32")
        keep = b.logical_and(
            b.greater_or_equal(t, n.const(lo, "float32")),
            b.lesser_or_equal(t, n.const(hi, "float32")),
        )  # NaN: neither
        return b.cast(b.where(keep, t, n.const(0, "float32")), "int32")
    if src in FLOAT_TYPES:
        x = to_dtype(n, _trunc(n, x), "float32")
        big = b.greater_or_equal(b.abs(x), n.const(2.0**31, "float32"))
        bad = b.logical_or(b.is_nan(x), big)
        x = b.cast(b.where(bad, n.const(-(2.0**31), "float32"), x), "int32")
    elif src != "int32":
        x = b.cast(x, "int32")
    return wrap_range(n, x, lo, hi)


def _float16_cast_dropped(n):
    """In the importer's "float32" float16 mode, a cast of a float32 value to float16 that only
    float operators read is not rounded: ONNX Runtime's CPU provider runs those operators in
    float32 behind casts of its own and removes the cast pair (a float16 kernel that moves data,
    a Transpose or Reshape, keeps the rounding, and so does a graph output)."""
    importer = n.importer
    if importer.float16 != "float32" or n.dtype(0) != "float32":
        return False
    readers = importer.readers(n.node.output[0])
    if readers is None or any(r in FLOAT16_DATA_MOVEMENT for r in readers):
        return False
    importer.widened.add(n.node.output[0])
    return True


# Operators that ONNX Runtime's CPU provider runs on float16 data as it is (type-agnostic
# kernels): a float16 value they read stays rounded.
FLOAT16_DATA_MOVEMENT = frozenset(
    [
        "Reshape",
        "Transpose",
        "Squeeze",
        "Unsqueeze",
        "Flatten",
        "Concat",
        "Slice",
        "Split",
        "Gather",
        "GatherElements",
        "GatherND",
        "Expand",
        "Tile",
        "Identity",
        "DepthToSpace",
        "SpaceToDepth",
    ]
)


def _cast_to(n, x, to):
    from ..types import BOOL, onnx_type_name

    if to == DOUBLE:  # WebNN has no float64: held as float32 (Importer.note_double)
        out = n.node.output[0]
        n.importer.note_double(out, f"{n.describe()}: its output '{out}'")
        return _convert(n, x, n.b.operand_data_type(x), "float32")
    if to not in ONNX_TO_WEBNN:
        n.fail(f"cast to {onnx_type_name(to)}: WebNN has no such data type")
    src = n.b.operand_data_type(x)
    if to == BOOL:
        return n.b.not_equal(x, n.const(0, src))
    dst = ONNX_TO_WEBNN[to]
    if dst in _NARROW and src != dst:  # WebNN's cast saturates; ONNX discards higher bits
        return n.b.cast(narrow_int(n, x, src, *_NARROW[dst]), dst)
    return _convert(n, x, src, dst)


def _convert(n, x, src, dst):
    """x (WebNN type src) as WebNN type dst, as ONNX casts (not to bool)."""
    if src == dst:
        return n.b.identity(x)
    if src in FLOAT_TYPES and dst not in FLOAT_TYPES:
        # ONNX casts float -> int by truncation toward zero.
        x = _trunc(n, x)
    return n.b.cast(x, dst)


@op("CastLike")
def cast_like(n):
    from ..types import NUMPY_TO_WEBNN

    if n.elems[0] is not None or n.elems[1] is not None:
        from onnx import helper

        to = n.elems[1]
        if to is None:
            to = helper.np_dtype_to_tensor_dtype(n.np_dtype(1))
            if n.node.input[1] in n.importer.widened:
                to = FLOAT16
            elif n.node.input[1] in n.importer.narrowed:
                to = DOUBLE
        return cast_held(n, n.x(0), n.elems[0], to)
    target = n.np_dtype(1)
    if n.node.input[1] in n.importer.widened:
        # float16 held as float32 ("float32" mode): as Cast to float16 would
        if _float16_cast_dropped(n):
            return n.b.identity(n.x(0))
        target = np.dtype(np.float16)
    if target == np.bool_:
        return n.b.not_equal(n.x(0), n.const(0, n.dtype(0)))
    if np.dtype(target) not in NUMPY_TO_WEBNN:
        n.fail(f"cast to {target}: WebNN has no such data type")
    dst = NUMPY_TO_WEBNN[np.dtype(target)]
    if dst in _NARROW and n.dtype(0) != dst:  # WebNN's cast saturates; ONNX discards bits
        return n.b.cast(narrow_int(n, n.x(0), n.dtype(0), *_NARROW[dst]), dst)
    return _convert(n, n.x(0), n.dtype(0), dst)


@op("Where")
def where(n):
    return n.b.where(n.x(0), n.x(1), n.x(2))
