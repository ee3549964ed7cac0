"""Data-type tables between ONNX, numpy and WebNN."""

import ml_dtypes
import numpy as np

# ONNX TensorProto.DataType numbers (stable across onnx releases).
FLOAT, UINT8, INT8, UINT16, INT16, INT32, INT64, STRING, BOOL = 1, 2, 3, 4, 5, 6, 7, 8, 9
FLOAT16, DOUBLE, UINT32, UINT64, COMPLEX64, COMPLEX128, BFLOAT16 = 10, 11, 12, 13, 14, 15, 16
UINT4, INT4 = 21, 22

ONNX_TYPE_NAMES = {
    1: "float", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 7: "int64",
    8: "string", 9: "bool", 10: "float16", 11: "double", 12: "uint32", 13: "uint64",
    14: "complex64", 15: "complex128", 16: "bfloat16", 17: "float8e4m3fn", 18: "float8e4m3fnuz",
    19: "float8e5m2", 20: "float8e5m2fnuz", 21: "uint4", 22: "int4", 23: "float4e2m1", 24: "float8e8m0", 25: "uint2", 26: "int2",
}  # fmt: skip

# ONNX element type -> the WebNN data type that holds it (bool is uint8 0/1, as WebNN's
# comparison operators produce).
ONNX_TO_WEBNN = {
    FLOAT: "float32", FLOAT16: "float16", INT32: "int32", UINT32: "uint32", INT64: "int64",
    UINT64: "uint64", INT8: "int8", UINT8: "uint8", BOOL: "uint8", INT4: "int4", UINT4: "uint4",
}  # fmt: skip

ONNX_TO_NUMPY = {
    FLOAT: np.float32, FLOAT16: np.float16, INT32: np.int32, UINT32: np.uint32, INT64: np.int64,
    UINT64: np.uint64, INT8: np.int8, UINT8: np.uint8, BOOL: np.bool_, DOUBLE: np.float64,
    INT16: np.int16, UINT16: np.uint16, INT4: ml_dtypes.int4, UINT4: ml_dtypes.uint4,
}  # fmt: skip

NUMPY_TO_WEBNN = {
    np.dtype(np.float32): "float32", np.dtype(np.float16): "float16",
    np.dtype(np.int32): "int32", np.dtype(np.uint32): "uint32", np.dtype(np.int64): "int64",
    np.dtype(np.uint64): "uint64", np.dtype(np.int8): "int8", np.dtype(np.uint8): "uint8",
    np.dtype(np.bool_): "uint8",
    np.dtype(ml_dtypes.int4): "int4", np.dtype(ml_dtypes.uint4): "uint4",
}  # fmt: skip

WEBNN_TO_NUMPY = {
    "float32": np.float32, "float16": np.float16, "int32": np.int32, "uint32": np.uint32,
    "int64": np.int64, "uint64": np.uint64, "int8": np.int8, "uint8": np.uint8,
    "int4": ml_dtypes.int4, "uint4": ml_dtypes.uint4,
}  # fmt: skip

FLOAT_TYPES = ("float32", "float16")
INT_TYPES = ("int32", "uint32", "int64", "uint64", "int8", "uint8")
SIGNED_TYPES = ("int32", "int64", "int8")


def onnx_type_name(elem_type):
    return ONNX_TYPE_NAMES.get(elem_type, f"type{elem_type}")


_FLOAT32_MAX = float(np.finfo(np.float32).max)


def double_as_float32(array):
    """A float64 array held as float32 (WebNN has no float64), and how many of its finite
    values lie beyond float32's range. Those are clamped to +-FLT_MAX rather than cast to
    inf: in double they were finite, and an inf would turn a converter's large sentinel
    (a -1e300 mask, a DBL_MAX bound) into NaN at its first inf - inf or 0 * inf."""
    with np.errstate(over="ignore"):
        narrowed = array.astype(np.float32)
    beyond = np.isinf(narrowed) & np.isfinite(array)
    count = int(np.count_nonzero(beyond))
    if count:
        narrowed[beyond] = np.copysign(_FLOAT32_MAX, array[beyond])
    return narrowed, count
