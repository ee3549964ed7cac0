"""ai.onnx.ml LabelEncoder, OneHotEncoder and ZipMap, as ONNX Runtime computes them.

WebNN has no strings and no maps: a LabelEncoder / CategoryMapper to strings and ZipMap
compute their numbers in the graph and return a host output (host_outputs.py) that the
InferenceSession finishes; a string graph input that only these read is fed as the strings'
indices in their keys, which the session computes (host_outputs.StringInput). Strings
computed inside the graph are refused by name.
"""

import numpy as np

from ..host_outputs import StringInput, StringMap, ZipMap
from .ml import ML
from .registry import op
from .util import tensor_attr_array

# Elements of the [..., keys] comparison a LabelEncoder or OneHotEncoder makes.
MAX_COMPARE_ELEMENTS = 1 << 26


def _tensor_attr(n, name):
    """A TensorProto attribute as numpy (strings as a list of str), or None."""
    value = n.attr(name, None)
    if value is None:
        return None
    from onnx import TensorProto

    if value.data_type == TensorProto.STRING:
        return [s.decode("utf-8") if isinstance(s, bytes) else s for s in value.string_data]
    return tensor_attr_array(n, value, name).reshape(-1)


def _first_given(n, prefix):
    """(value, attribute name) of the first non-empty {prefix}_tensor / _int64s / _floats /
    _strings attribute, or (None, None)."""
    for name in (f"{prefix}_tensor", f"{prefix}_int64s", f"{prefix}_floats", f"{prefix}_strings"):
        v = _tensor_attr(n, name) if name.endswith("tensor") else n.attr(name, None)
        if v is not None and len(v):
            return v, name
    return None, None


def _encoder_table(n):
    """(keys, values, default): keys/values numpy arrays or lists of str."""
    default = None
    keys, key_kind = _first_given(n, "keys")
    values, value_kind = _first_given(n, "values")
    if keys is None or values is None:
        n.fail("no keys_* or values_* attribute")
    if len(keys) != len(values):
        n.fail(f"{len(keys)} keys for {len(values)} values")
    keys, values = _first_of_each_key(keys, values)
    strings_out = value_kind == "values_strings" or (
        value_kind == "values_tensor" and isinstance(values, list)
    )
    strings_in = key_kind == "keys_strings" or (
        key_kind == "keys_tensor" and isinstance(keys, list)
    )
    if value_kind == "values_tensor":
        default = _tensor_attr(n, "default_tensor")
        if default is not None:
            default = default[0]
    elif strings_out:
        default = n.attr("default_string", "_Unused")
    elif value_kind == "values_int64s":
        default = n.attr("default_int64", -1)
    else:
        default = n.attr("default_float", -0.0)
    if default is None:  # a values_tensor without default_tensor: ONNX's per-type defaults
        default = "_Unused" if strings_out else (-1 if values.dtype.kind in "iu" else -0.0)
    return keys, values, default, strings_in, strings_out


def _first_of_each_key(keys, values):
    """The table without the later entries of a key listed twice: ONNX Runtime keeps the first
    (its map's emplace; the string paths' dicts here would keep the last). NaN keys are one."""
    seen, keep = set(), []
    for i, key in enumerate(keys):
        key = "NaN key" if isinstance(key, (float, np.floating)) and np.isnan(key) else key
        if key not in seen:
            seen.add(key)
            keep.append(i)
    if len(keep) == len(keys):
        return keys, values

    def pick(table):
        return table[keep] if isinstance(table, np.ndarray) else [table[i] for i in keep]

    return pick(keys), pick(values)


@op("LabelEncoder", domain=ML)
def label_encoder(n):
    b = n.b
    keys, values, default, strings_in, strings_out = _encoder_table(n)
    if strings_in:
        return _from_strings(n, keys, values, default, strings_out)
    shape = n.static_shape(0)
    x = n.x(0)
    dtype = n.dtype(0)
    keys = np.asarray(keys)
    if strings_out:
        if dtype not in ("int64", "int32"):
            n.fail(f"string values for {dtype} keys (integer keys only)")
        # The graph passes the integers through; the session maps them to the strings.
        return StringMap(b.identity(x), keys.tolist(), values, default, n.describe())
    values = np.asarray(values)
    out_dtype = {"i": "int64", "u": "int64", "f": "float32"}[values.dtype.kind]
    if values.dtype == np.int32:
        out_dtype = "int32"
    key_dtype = dtype
    count = len(keys)
    elements = count
    for d in shape:
        elements *= d
    if elements > MAX_COMPARE_ELEMENTS:
        n.fail(f"{count} keys over {shape} elements: too large to compare at import")
    table_keys = n.const(keys.astype(np.float32 if key_dtype == "float32" else key_dtype),
                         key_dtype)  # fmt: skip
    hits = b.equal(b.unsqueeze(x, [len(shape)]), table_keys)  # [..., keys]
    if key_dtype == "float32" and n.opset >= 4 and np.isnan(keys.astype(np.float64)).any():
        # ORT matches a NaN input with a NaN key from opset 4 on (measured; before, never).
        nan_key = n.const(np.isnan(keys.astype(np.float64)).astype(np.uint8), "uint8")
        hits = b.logical_or(hits, b.logical_and(b.unsqueeze(b.is_nan(x), [len(shape)]), nan_key))
    as_number = b.cast(hits, "int32")
    index = b.arg_max(as_number, len(shape), keep_dimensions=False, output_data_type="int32")
    found = b.reduce_max(as_number, axes=[len(shape)], keep_dimensions=False)
    np_out = np.float32 if out_dtype == "float32" else out_dtype
    mapped = b.gather(n.const(values.astype(np_out), out_dtype), index)
    fallback = n.const(np.asarray(default).astype(np_out), out_dtype)
    return b.where(b.cast(found, "uint8"), mapped, fallback)


def _from_strings(n, keys, values, default, strings_out):
    """A string input the session turns into vocabulary indices (host_outputs.StringInput):
    the values gathered by index (strings out: mapped on the host again)."""
    source = n.inputs[0]
    if not isinstance(source, StringInput):
        n.fail("string keys: the input is a string tensor computed in the graph, which WebNN "
               "cannot hold (a string graph input read only by LabelEncoder / CategoryMapper "
               "works with InferenceSession)")  # fmt: skip
    index = source.operand
    if strings_out:
        table = source.table(keys, list(values), default, object)
        return StringMap(n.b.identity(index), list(range(len(table))), list(table), default,
                         n.describe())  # fmt: skip
    values = np.asarray(values)
    dtype = "float32" if values.dtype.kind == "f" else ("int32" if values.dtype == np.int32
                                                         else "int64")  # fmt: skip
    np_dtype = np.float32 if dtype == "float32" else dtype
    table = source.table(keys, values.tolist(), default, np_dtype)
    return n.b.gather(n.const(table, dtype), index)


@op("CategoryMapper", domain=ML)
def category_mapper(n):
    """Strings <-> int64 by the cats_strings / cats_int64s pairs: from a string graph input
    (indices computed on the host), or from int64 to strings (mapped on the host)."""
    strings = list(n.attr("cats_strings", []))
    ints = [int(v) for v in n.attr("cats_int64s", [])]
    if not strings or len(strings) != len(ints):
        n.fail(f"{len(strings)} cats_strings for {len(ints)} cats_int64s")
    if isinstance(n.inputs[0], StringInput):
        return _from_strings(n, strings, ints, int(n.attr("default_int64", -1)), False)
    if n.dtype(0) != "int64":
        n.fail(f"input of type {n.dtype(0)} (string or int64)")
    default = n.attr("default_string", "_Unused")
    return StringMap(n.b.identity(n.x(0)), ints, strings, default, n.describe())


@op("OneHotEncoder", domain=ML)
def one_hot_encoder(n):
    """Y[..., c] = 1.0 where X == category c (float32 output), shape X.shape + [categories]
    (ORT's layout). A value in no category gives a zero row; ORT does the same with zeros=1
    and fails the run with zeros=0 (a graph cannot fail at run time: documented)."""
    b = n.b
    cats = n.attr("cats_int64s", None)
    if not cats:
        if n.attr("cats_strings", None):
            n.fail("string categories: the input is a string tensor, which WebNN cannot take")
        n.fail("no cats_int64s")
    dtype = n.dtype(0)
    x = n.x(0)
    if dtype in ("float32", "float16"):
        # ORT casts a float input to int64 (truncation toward zero) before comparing.
        x = b.cast(b.cast(x, "float32"), "int64")
    elif dtype != "int64":
        x = b.cast(x, "int64")
    shape = n.static_shape(0)
    if len(cats) * max(1, int(np.prod(shape))) > MAX_COMPARE_ELEMENTS:
        n.fail(f"{len(cats)} categories over {shape} elements: too large")
    cats = np.asarray(cats, np.int64)
    hits = b.equal(b.unsqueeze(x, [len(shape)]), n.const(cats, "int64"))
    # A category listed twice is hot in its last column only, as in ONNX Runtime (its map
    # from category to column is assigned in order).
    last = {int(c): i for i, c in enumerate(cats)}
    if len(last) < len(cats):
        keep = np.zeros(len(cats), np.uint8)
        keep[list(last.values())] = 1
        hits = b.logical_and(hits, n.const(keep, "uint8"))
    return b.cast(hits, "float32")


@op("ZipMap", domain=ML)
def zip_map(n):
    """Scores [N, C] -> a list of N maps {label: score}: the scores are the graph output and the
    InferenceSession makes the maps (WebNN has no map type)."""
    labels = n.attr("classlabels_int64s", None)
    if not labels:
        labels = n.attr("classlabels_strings", None)
    if not labels:
        n.fail("neither classlabels_int64s nor classlabels_strings is given")
    labels = [int(v) if isinstance(v, (int, np.integer)) else v for v in labels]
    shape = n.static_shape(0)
    if len(shape) != 2 or shape[1] != len(labels):
        n.fail(f"input of shape {shape} for {len(labels)} labels (ZipMap needs [N, labels])")
    x = n.x(0)
    if n.dtype(0) != "float32":
        x = n.b.cast(x, "float32")
    return ZipMap(n.b.identity(x), labels, n.describe())
