"""ONNX backend node-test conformance: every node test case of the pinned onnx release.

Each case (onnx.backend.test.case.node.collect_testcases(): a one-node model, or its
function expansion, with inputs and expected outputs) is imported with webnn.onnx, built on
the `cpu` backend and compared with the expected outputs at the tolerance onnx's own backend
runner uses (rtol=1e-3, atol=1e-7, or the case's own). A case is *claimed* when every operator
in it has a run-time converter in the importer's table and every input/output data type exists
in WebNN; other cases are skipped naming the operator or type and the reason. Claimed cases
that still fail are listed with a reason in onnx_node_xfails.json. Every case runs on both the
`cpu` and the `reference` backend (the whole set takes seconds).

`double` (float64) cases are claimed: the importer computes them in float32 (WebNN has no
float64; webnn.onnx.Float64Warning), and they are compared at the same tolerance as float32
cases, never a looser one. A double case whose expected output needs more than float32
precision at that tolerance fails, and is listed in onnx_node_xfails.json as such.
"""

import json
import warnings
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

import webnn
import webnn.onnx as wo
from webnn.onnx import held
from webnn.onnx.importer import schema_function
from webnn.onnx.ops import lookup
from webnn.onnx.types import DOUBLE, ONNX_TO_WEBNN, onnx_type_name

_XFAILS = json.loads((Path(__file__).parent / "onnx_node_xfails.json").read_text())["cases"]


def _as_array(value):
    """4-bit data comes as TensorProto (numpy has no such type): as an ml_dtypes array; a
    numpy scalar is a 0-d tensor."""
    if isinstance(value, onnx.TensorProto):
        return onnx.numpy_helper.to_array(value)
    if isinstance(value, np.generic):
        return np.asarray(value)
    return value


def _cases():
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        cases = sorted(collect_testcases(), key=lambda c: c.name)
    for case in cases:
        case.data_sets[:] = [
            ([_as_array(a) for a in inputs], [_as_array(a) for a in outputs])
            for inputs, outputs in case.data_sets
        ]
    return cases


CASES = _cases()


def _innermost(type_proto):
    """The TensorTypeProto inside a tensor / sequence / optional type, or None (a map)."""
    while type_proto.WhichOneof("value") in ("sequence_type", "optional_type"):
        kind = type_proto.WhichOneof("value")
        type_proto = getattr(type_proto, kind).elem_type
    return type_proto.tensor_type if type_proto.HasField("tensor_type") else None


def _has_composite_io(case):
    graph = case.model.graph
    return any(not vi.type.HasField("tensor_type") for vi in list(graph.input) + list(graph.output))


def _flat(values):
    """The arrays in a list of values that may be lists (sequences) or None (optionals)."""
    for v in values:
        if isinstance(v, list):
            yield from _flat(v)
        elif v is not None:
            yield v


def unclaimed_reason(case):
    """Why a case is not claimed, or None when it is.

    An operator that exists only in folded form (Range, NonZero, ...) is claimed where the
    importer folds it, i.e. where its inputs are computed from shapes and constants; that is
    decided by importing the case."""
    graph = case.model.graph
    fold_only = []

    def walk(g):
        for node in g.node:
            domain = "" if node.domain in ("", "ai.onnx") else node.domain
            entry = lookup(domain, node.op_type)
            opset = next(
                (o.version for o in case.model.opset_import if o.domain in ("", "ai.onnx")), 1
            )
            if entry is None and domain == "" and schema_function(node.op_type, opset) is not None:
                continue  # the importer inlines the operator's function definition
            if entry is None:
                return f"operator {domain or 'ai.onnx'}::{node.op_type} is not in the importer"
            if not entry.runtime:
                fold_only.append(f"operator {node.op_type} only folds at import: {entry.note}")
            for a in node.attribute:
                for sub in [a.g] if a.type == a.GRAPH else list(a.graphs):
                    why = walk(sub)
                    if why:
                        return why
        return None

    why = walk(graph)
    if why:
        return why
    for vi in list(graph.input) + list(graph.output):
        tensor = _innermost(vi.type)
        if tensor is None:
            return f"'{vi.name}' is not a tensor, a sequence or an optional of tensors"
        elem = tensor.elem_type
        # double is computed in float32, int16 / bfloat16 / float8 ... are held (held.py)
        if elem not in ONNX_TO_WEBNN and elem != DOUBLE and elem not in held.HELD:
            return f"data type {onnx_type_name(elem)} of '{vi.name}' does not exist in WebNN"
    if _has_composite_io(case):
        # Sequence / optional inputs and outputs: run through InferenceSession (lists and
        # None as ONNX Runtime takes and returns them); the MLGraph API has tensors only.
        for inputs, outputs in case.data_sets:
            if any(0 in a.shape for a in _flat(outputs)):
                return "empty tensors (a 0-sized dimension) do not exist in WebNN"
        return None
    empty_inputs = False
    for inputs, outputs in case.data_sets:
        for a in list(inputs) + list(outputs):
            if not isinstance(a, np.ndarray):
                return "a non-tensor value (sequence/optional)"
        if any(0 in a.shape for a in outputs):
            return "empty tensors (a 0-sized dimension) do not exist in WebNN"
        # An empty input has no values: the importer makes it a constant (CastLike's `like`).
        empty_inputs = empty_inputs or any(0 in a.shape for a in inputs)
    if fold_only or empty_inputs:
        inputs = case.data_sets[0][0]
        feeds = dict(zip([vi.name for vi in graph.input], inputs))
        try:
            _import(case.model, feeds)
        except wo.OnnxImportError:
            if fold_only:
                return fold_only[0] + ", and its inputs are run-time values here"
            return "an empty tensor (a 0-sized dimension) is needed at run time"
    return None


def claim_table():
    return {case.name: unclaimed_reason(case) for case in CASES}


_CONTEXTS = {}


def _context(backend):
    if backend not in _CONTEXTS:
        _CONTEXTS[backend] = webnn.ML().create_context(accelerated=False, backend=backend)
    return _CONTEXTS[backend]


def _import(model, feeds, context=None):
    """Import with every input at run time; an input that an operator needs at import (a
    shape, axes, repeats ...) is given as constants=, as a WebNN user of that model would.
    Returns the built graph (with a context) or the ImportedModel."""
    shapes = {name: list(a.shape) for name, a in feeds.items()}
    constants = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", wo.Float64Warning)  # double cases: the documented rule
        return _import_retrying(model, feeds, context, shapes, constants)


def _import_retrying(model, feeds, context, shapes, constants):
    while True:
        try:
            run_shapes = {k: v for k, v in shapes.items() if k not in constants}
            if context is None:
                builder = webnn.ML().create_context(backend="cpu").create_graph_builder()
                return wo.import_model(builder, model, input_shapes=run_shapes, constants=constants)
            return wo.load(context, model, input_shapes=run_shapes, constants=constants)
        except wo.OnnxImportError as exc:
            name = getattr(exc, "needs_constant", None)
            if name is None and "known at import" not in str(exc):
                raise
            if name in feeds and name not in constants:
                constants[name] = feeds[name]
                continue
            # Computed from an input: give the integer (shape-like) inputs as constants, then
            # the scalar and bool ones (Range's float limits, Dropout's training_mode).
            more = {k: v for k, v in feeds.items() if v.dtype.kind in "iu" and k not in constants}
            if not more:
                more = {
                    k: v
                    for k, v in feeds.items()
                    if (v.ndim == 0 or v.dtype == np.bool_) and k not in constants
                }
            if not more:
                raise
            constants.update(more)


_CLAIMS = claim_table()
_BY_NAME = {c.name: c for c in CASES}


def _held_output(have, want):
    """An output of a type WebNN lacks, as the graph holds it (int32, float32, uint8 codes),
    back in that type; float8 / float4 / bfloat16 values as float64 (compared exactly)."""
    elem = held.elem_of_array(want)
    if elem is None:
        return have, want
    have = held.from_holding(have, elem)
    if elem in held.WRAPPED or elem in (25, 26):  # 16-bit and 2-bit integers
        return have, want
    return have.astype(np.float64), want.astype(np.float64)


def _rtol(case, want):
    """onnx's backend runner: rtol 1e-3 (or the case's), two ulps (2^-6) for bfloat16."""
    rtol = max(case.rtol, 1e-3)
    return max(rtol, 2**-6) if want.dtype == ml_dtypes.bfloat16 else rtol


def _assert_close(case, name, have, want):
    if want is None or isinstance(want, list):
        assert type(have) is type(want), f"{name}: {type(have).__name__}, expected {want!r}"
        if want is not None:
            assert len(have) == len(want), f"{name}: {len(have)} elements, expected {len(want)}"
            for i, (h, w) in enumerate(zip(have, want)):
                _assert_close(case, f"{name}[{i}]", h, w)
        return
    if want.dtype == np.bool_:
        have = have.astype(np.bool_)
    assert list(have.shape) == list(want.shape), f"{name}: shape"
    if held.elem_of_array(want) in held.FLOAT_CODED:  # the session returned the ONNX type
        np.testing.assert_array_equal(have.astype(np.float64), want.astype(np.float64), name)
    elif want.dtype == ml_dtypes.bfloat16:
        np.testing.assert_allclose(have.astype(np.float64), want.astype(np.float64),
                                   rtol=_rtol(case, want), atol=max(case.atol, 1e-7))  # fmt: skip
    elif np.issubdtype(want.dtype, np.floating):
        atol = max(case.atol, 1e-7 if want.dtype != np.float16 else 1e-3)
        np.testing.assert_allclose(
            have.astype(np.float64),
            want.astype(np.float64),
            rtol=max(case.rtol, 1e-3),
            atol=atol,
            err_msg=name,
        )
    else:
        np.testing.assert_array_equal(have, want.astype(have.dtype), err_msg=name)


def _check_with_session(case, backend):
    graph = case.model.graph
    for inputs, expected in case.data_sets:
        feeds = dict(zip([vi.name for vi in graph.input], inputs))
        constant = []  # inputs an operator needs at import (split sizes): as a user gives them
        while True:
            try:
                session = wo.InferenceSession(
                    case.model.SerializeToString(),
                    context=_context(backend),
                    constant_inputs=constant,
                )
                got = session.run(None, feeds)
                break
            except wo.OnnxImportError as exc:
                if exc.needs_constant not in feeds or exc.needs_constant in constant:
                    raise
                constant.append(exc.needs_constant)
        for vi, have, want in zip(graph.output, got, expected):
            _assert_close(case, vi.name, have, want)


def _check(case, context):
    graph = case.model.graph
    input_names = [vi.name for vi in graph.input]
    for inputs, expected in case.data_sets:
        feeds = dict(zip(input_names, inputs))
        g = _import(case.model, feeds, context)
        wanted = g.input_descriptors
        run_feeds = {}
        for name, a in feeds.items():
            if name in wanted:
                if a.dtype == np.bool_:
                    a = a.astype(np.uint8)
                elif a.dtype == np.float64:  # a double input is held as float32
                    a = a.astype(np.float32)
                elif held.elem_of_array(a) is not None:  # int16 as int32, float8 as codes
                    a = held.to_holding(a)
                run_feeds[name] = a
        got = context.compute(g, run_feeds)
        for vi, want in zip(graph.output, expected):
            bf16 = want.dtype == ml_dtypes.bfloat16
            have, want = _held_output(got[vi.name], want)
            if want.dtype == np.bool_:
                have = have.astype(np.bool_)
            assert list(have.shape) == list(want.shape), f"{vi.name}: shape"
            if held.elem_of_array(np.zeros(0, vi_numpy(vi))) in held.FLOAT_CODED:
                np.testing.assert_array_equal(have, want, err_msg=vi.name)  # exact, NaN == NaN
            elif np.issubdtype(want.dtype, np.floating):
                atol = max(case.atol, 1e-7 if want.dtype != np.float16 else 1e-3)
                if case.name.startswith(("test_dft", "test_stft")):
                    # sums of N float32 products: the reference's own rounding noise near 0
                    # is ~1e-7 * max|y|, our (float32 matmul) result differs there
                    atol = max(atol, 1e-6 * float(np.max(np.abs(want))))
                np.testing.assert_allclose(
                    have.astype(np.float64),
                    want.astype(np.float64),
                    rtol=max(max(case.rtol, 1e-3), 2**-6 if bf16 else 0),
                    atol=atol,
                    err_msg=vi.name,
                )
            else:
                np.testing.assert_array_equal(have, want.astype(have.dtype), err_msg=vi.name)


def vi_numpy(vi):
    return onnx.helper.tensor_dtype_to_np_dtype(vi.type.tensor_type.elem_type)


@pytest.mark.parametrize("backend", ["cpu", "reference"])
@pytest.mark.parametrize("name", [c.name for c in CASES])
def test_onnx_node_case(name, backend):
    reason = _CLAIMS[name]
    if reason is not None:
        pytest.skip(f"unclaimed: {reason}")
    if name in _XFAILS:
        pytest.xfail(_XFAILS[name])
    case = _BY_NAME[name]
    with np.errstate(all="ignore"):
        if _has_composite_io(case):
            _check_with_session(case, backend)
        else:
            _check(case, _context(backend))


def test_onnx_node_claimed_share():
    """The importer claims at least 60% of the node test cases (issue 6 target)."""
    claimed = sum(1 for r in _CLAIMS.values() if r is None)
    assert claimed >= 0.6 * len(CASES), f"claimed {claimed} of {len(CASES)}"


def test_onnx_node_xfails_are_claimed_cases():
    """Every xfail entry names a real, claimed case (no stale entries)."""
    for name in _XFAILS:
        assert _CLAIMS.get(name, "missing") is None, name
