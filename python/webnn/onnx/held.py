"""ONNX element types WebNN lacks, held exactly in types it has (docs/onnx.md, "Held types").

- int16 / uint16 are held as int32 (the same integers). Each operator's int16 result is
  wrapped into the type's range (modulo 2^16), as ONNX Runtime's C++ kernels compute in the
  16-bit type; operators that only move or select values skip the wrap.
- bfloat16 is held as float32 (every bfloat16 value is a float32). Each operator's bfloat16
  result is rounded to bfloat16, to nearest even as ONNX (and ml_dtypes) convert; operators
  that only move or select values skip the rounding.
- int2 / uint2 are held as int8 / uint8, float8 (e4m3fn, e4m3fnuz, e5m2, e5m2fnuz), float4e2m1
  and float8e8m0 as their uint8 bit codes (codes.py): only Cast, CastLike, QuantizeLinear,
  DequantizeLinear and operators that move data read coded float values; any other operator
  reading one is refused by name (its codes are no numbers).

The importer records which run-time values are held (Importer.held, value name -> ONNX type);
constants are numpy / ml_dtypes arrays of the real type until they reach the graph.
"""

import functools

import ml_dtypes
import numpy as np

from . import codes
from .types import BFLOAT16, INT16, UINT16

# ONNX type -> (numpy / ml_dtypes type, WebNN type holding it)
HELD = {
    INT16: (np.int16, "int32"),
    UINT16: (np.uint16, "int32"),
    BFLOAT16: (ml_dtypes.bfloat16, "float32"),
    **codes.CODED,
}
FLOAT_CODED = frozenset(codes.FLOAT_CODED)
WRAPPED = {INT16: (-(2**15), 2**15 - 1), UINT16: (0, 2**16 - 1)}
_BY_NUMPY = {np.dtype(t): elem for elem, (t, _) in HELD.items()}

# Operators whose converters read and make held values themselves (they tag their outputs).
SELF_TAGGING = frozenset(["Cast", "CastLike", "QuantizeLinear", "DequantizeLinear"])

# Operators that only move, select or compare-and-pick values: their held outputs are values
# of their inputs (no wrap, no rounding), and coded float8 / float4 values may pass them.
MOVERS = frozenset(
    [
        "Identity", "Reshape", "Transpose", "Squeeze", "Unsqueeze", "Flatten", "Concat",
        "Slice", "Split", "Gather", "GatherElements", "GatherND", "Expand", "Tile",
        "DepthToSpace", "SpaceToDepth", "Shape", "Size", "ReverseSequence", "Compress",
    ]
)  # fmt: skip
# (Not sequences or optionals: their elements carry no held type, so codes put in one would
# come out read as numbers; coded values are refused there.)
SELECTORS = MOVERS | frozenset(
    ["Max", "Min", "Where", "ReduceMax", "ReduceMin", "TopK", "Pad", "Trilu", "OneHot",
     "ScatterND", "ScatterElements", "MaxPool", "Relu"]
)  # fmt: skip

# Integer operators whose converters compute 8-bit arithmetic (ONNX allows only 8-bit types):
# a held input there is refused, never computed as another type.
EIGHT_BIT_ONLY = frozenset(
    ["QLinearConv", "QLinearMatMul", "ConvInteger", "MatMulInteger", "DynamicQuantizeLinear"]
)


def elem_of_array(array):
    """The ONNX type of a numpy array whose type WebNN lacks (held here), or None."""
    return _BY_NUMPY.get(np.dtype(array.dtype)) if isinstance(array, np.ndarray) else None


def numpy_type(elem):
    return HELD[elem][0]


def holding_type(elem):
    return HELD[elem][1]


def to_holding(array):
    """An array of a held type as the WebNN graph holds it (int32, float32, codes)."""
    elem = elem_of_array(array)
    if elem in FLOAT_CODED:
        return np.asarray(array, order="C").view(np.uint8)
    return np.asarray(array.astype(holding_type(elem)), order="C")


def from_holding(array, elem):
    """What the graph computed for a held ONNX type, as the numpy / ml_dtypes array ONNX gives."""
    if elem in FLOAT_CODED:
        return np.asarray(array.astype(np.uint8, copy=False), order="C").view(numpy_type(elem))
    return array.astype(numpy_type(elem))


@functools.cache
def _schema_types(domain, op_type, opset):
    """(input type strings, variadic last input?, output type strings) of a schema, or None."""
    from onnx import defs

    try:
        schema = defs.get_schema(op_type, opset, domain)
    except defs.SchemaError:
        return None
    ins = [p.type_str for p in schema.inputs]
    variadic = (
        bool(schema.inputs)
        and schema.inputs[-1].option == defs.OpSchema.FormalParameterOption.Variadic
    )
    return ins, variadic, [p.type_str for p in schema.outputs]


def output_elems(domain, op_type, opset, input_elems, n_outputs):
    """The held ONNX type of each output, from the schema's type constraints: an output whose
    type variable is also an input's takes that input's held type. None: not held (or not
    known; such an output is whatever the converter made)."""
    if not any(input_elems):
        return [None] * n_outputs
    types = _schema_types(domain, op_type, opset)
    if types is None:
        return [None] * n_outputs
    ins, variadic, outs = types
    by_type = {}
    for i, elem in enumerate(input_elems):
        if elem is None:
            continue
        if i < len(ins):
            name = ins[i]
        elif variadic and ins:
            name = ins[-1]
        else:
            continue
        by_type.setdefault(name, elem)
    result = []
    for j in range(n_outputs):
        name = outs[j] if j < len(outs) else (outs[-1] if outs else None)
        result.append(by_type.get(name))
    return result


# -- graph pieces ------------------------------------------------------------------------------


def _const(n, value, dtype):
    return n.importer.operand(np.asarray(value, dtype=dtype))


def wrap(n, x, elem):
    """An int32 operand of integers wrapped into int16 / uint16's range (modulo 2^16), as a C
    conversion to the 16-bit type does."""
    return wrap_range(n, x, *WRAPPED[elem])


def wrap_range(n, x, lo, hi):
    """An int32 operand wrapped into [lo, hi] modulo hi - lo + 1 (a power of two): ONNX's
    integer narrowing ("discard higher bits"). The quotient is taken in float32 (off by at
    most one for any int32) and corrected once."""
    b = n.b
    m = hi - lo + 1
    xf = b.cast(x, "float32")
    q = b.floor(b.div(b.sub(xf, _const(n, lo, np.float32)), _const(n, m, np.float32)))
    r = b.sub(x, b.mul(b.cast(q, "int32"), _const(n, m, np.int32)))
    r = b.where(b.lesser(r, _const(n, lo, np.int32)), b.add(r, _const(n, m, np.int32)), r)
    return b.where(b.greater(r, _const(n, hi, np.int32)), b.sub(r, _const(n, m, np.int32)), r)


_SPLIT = np.float32(65537)  # 2^16 + 1: Veltkamp's split keeps 24 - 16 = 8 significant bits


def round_bfloat16(n, x):
    """A float32 operand rounded to bfloat16 (to nearest, ties to even; overflow to inf, the
    subnormals of bfloat16 too), held as float32.

    Veltkamp's split c = x * (2^16 + 1), hi = c - (c - x) is x rounded to 8 significant bits
    with ties to even in binary32 arithmetic (checked exhaustively over whole binades in
    tests/python/test_onnx_held_types.py); x * 2^16 overflows from |x| >= 2^112, so large
    values are split scaled down by 2^-32 (exact). Below 2^-126 bfloat16's grid is the fixed
    step 2^-133: round_even(x * 2^133) * 2^-133, scaled in exact steps."""
    b = n.b

    def split(v):
        c = b.mul(v, _const(n, _SPLIT, np.float32))
        return b.sub(c, b.sub(c, v))

    def scale(v, *powers):
        for p in powers:
            v = b.mul(v, _const(n, np.float32(2.0**p), np.float32))
        return v

    ax = b.abs(x)
    normal = split(x)
    large = scale(split(scale(x, -32)), 32)
    tiny = scale(b.round_even(scale(x, 100, 33)), -100, -33)
    y = b.where(b.greater_or_equal(ax, _const(n, 2.0**100, np.float32)), large, normal)
    y = b.where(b.lesser(ax, _const(n, 2.0**-126, np.float32)), tiny, y)
    # inf stays inf (the split of inf is inf - inf = NaN); NaN stays NaN
    return b.where(b.is_infinite(x), x, y)


def fix_result(n, x, elem):
    """An operator's result of held type `elem` computed in the holding type, made exact."""
    if elem in WRAPPED:
        return wrap(n, x, elem)
    if elem == BFLOAT16:
        return round_bfloat16(n, x)
    return x
