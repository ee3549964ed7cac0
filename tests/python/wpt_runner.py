"""Runs W3C WPT WebNN conformance cases (tests/data/wpt) through the public Python API.

The JSON layout is described in tests/data/wpt/README.md. Each case is built with
MLGraphBuilder exactly as a user would (snake_case methods, keyword options) and its outputs
are compared with the WPT tolerance (ULP or ATOL).
"""

import json
import math
import re
from pathlib import Path

import numpy as np

WPT_DIR = Path(__file__).resolve().parents[1] / "data" / "wpt"

# WPT argument names that differ from our snake_case spelling.
ARGUMENT_RENAMES = {"type": "data_type", "roundingType": "output_shape_rounding"}

NUMPY_TYPES = {
    "float32": np.float32,
    "float16": np.float16,
    "int32": np.int32,
    "uint32": np.uint32,
    "int64": np.int64,
    "uint64": np.uint64,
    "int8": np.int8,
    "uint8": np.uint8,
    "int4": np.int8,
    "uint4": np.uint8,
}

SPECIAL_FLOATS = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def snake_case(name):
    return re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), name)


def python_method(op_name):
    return snake_case(op_name).replace("_n_d", "_nd").replace("is_na_n", "is_nan")


def load_cases():
    """Yields (operation, index, case) for every case in the corpus."""
    for path in sorted(WPT_DIR.glob("*.json")):
        if path.name == "INDEX.json":
            continue
        data = json.loads(path.read_text())
        for index, case in enumerate(data["tests"]):
            yield data["operation"], index, case


def decode_value(value):
    if isinstance(value, str):
        if value in SPECIAL_FLOATS:
            return SPECIAL_FLOATS[value]
        if re.fullmatch(r"-?\d+", value):
            return int(value)
    return value


def to_array(tensor):
    desc = tensor["descriptor"]
    dtype = desc["dataType"]
    values = [decode_value(v) for v in tensor["data"]]
    if dtype in ("int64", "uint64"):
        arr = np.array(values, dtype=object).astype(NUMPY_TYPES[dtype])
    elif dtype in ("float32", "float16"):
        # float32 data are decimal doubles rounded once to float32, as the WPT harness does.
        with np.errstate(over="ignore"):  # some float16 cases hold values that round to inf
            arr = np.array(values, dtype=np.float64).astype(NUMPY_TYPES[dtype])
    else:
        arr = np.array(values, dtype=np.int64).astype(NUMPY_TYPES[dtype])
    return arr.reshape(desc["shape"])


def _resolve(value, operands):
    if isinstance(value, str) and value in operands:
        return operands[value]
    if (
        isinstance(value, list)
        and value
        and all(isinstance(v, str) and v in operands for v in value)
    ):
        return [operands[v] for v in value]
    if isinstance(value, list):
        return [decode_value(v) for v in value]
    return decode_value(value)


def build_case(context, case):
    """Records a case's graph with MLGraphBuilder (not yet built).

    Returns (builder, {output name: operand}, {input name: array})."""
    graph = case["graph"]
    builder = context.create_graph_builder()
    operands = {}
    feeds = {}
    for name, tensor in graph["inputs"].items():
        desc = tensor["descriptor"]
        if tensor.get("constant"):
            operands[name] = builder.constant(
                to_array(tensor), shape=desc["shape"], data_type=desc["dataType"]
            )
        else:
            operands[name] = builder.input(name, desc["shape"], desc["dataType"])
            feeds[name] = to_array(tensor)
    for op in graph["operators"]:
        kwargs = {}
        for argument in op["arguments"]:
            ((key, value),) = argument.items()
            if key == "options":
                for option, option_value in value.items():
                    kwargs[snake_case(ARGUMENT_RENAMES.get(option, option))] = _resolve(
                        option_value, operands
                    )
            else:
                kwargs[ARGUMENT_RENAMES.get(key, snake_case(key))] = _resolve(value, operands)
        result = getattr(builder, python_method(op["name"]))(**kwargs)
        names = op["outputs"] if isinstance(op["outputs"], list) else [op["outputs"]]
        results = result if isinstance(op["outputs"], list) else [result]
        operands.update(zip(names, results))
    outputs = {name: operands[name] for name in graph["expectedOutputs"]}
    return builder, outputs, feeds


def build_and_run(context, case):
    """Builds the case's graph, runs it and returns {name: ndarray} for expected outputs."""
    builder, outputs, feeds = build_case(context, case)
    return context.compute(builder.build(outputs), feeds)


def _ordered_bits(arr):
    """Maps floats to integers whose difference counts ULPs (sign-magnitude -> linear)."""
    int_type = np.int32 if arr.dtype == np.float32 else np.int16
    bits = arr.view(int_type).astype(np.int64)
    sign_mask = np.int64(1) << (8 * arr.dtype.itemsize - 1)
    return np.where(bits < 0, -(bits & (sign_mask - 1)), bits)


def compare(actual, expected, tolerance):
    """Returns None when actual matches expected within the WPT tolerance, else a message."""
    if actual.shape != expected.shape:
        return f"shape {actual.shape} != expected {expected.shape}"
    if actual.dtype != expected.dtype:
        return f"dtype {actual.dtype} != expected {expected.dtype}"
    metric, limit = tolerance["metricType"], tolerance["value"]
    if expected.dtype.kind == "f":
        both_nan = np.isnan(actual) & np.isnan(expected)
        same = (actual == expected) | both_nan
        if metric == "ULP":
            distance = np.abs(_ordered_bits(actual) - _ordered_bits(expected)).astype(np.float64)
        else:
            distance = np.abs(actual.astype(np.float64) - expected.astype(np.float64))
        distance = np.where(np.isnan(distance), np.inf, distance)
        ok = same | (distance <= limit)
    else:
        diff = np.abs(actual.astype(object) - expected.astype(object))
        ok = np.array([d <= limit for d in diff.flat], dtype=bool).reshape(expected.shape)
    if ok.all():
        return None
    bad = np.flatnonzero(~ok)
    i = bad[0]
    return (
        f"{len(bad)} of {expected.size} elements outside {metric} {limit}; first at flat index "
        f"{i}: got {actual.flat[i]!r}, expected {expected.flat[i]!r}"
    )


def check_case(context, case):
    """Runs a case and returns a list of mismatch messages (empty when it passes)."""
    results = build_and_run(context, case)
    problems = []
    for name, tensor in case["graph"]["expectedOutputs"].items():
        problem = compare(results[name], to_array(tensor), case["tolerance"])
        if problem:
            problems.append(f"{name}: {problem}")
    return problems
