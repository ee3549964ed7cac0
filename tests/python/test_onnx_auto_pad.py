"""auto_pad, ceil_mode and padding edge cases of ONNX pools and Conv against ONNX Runtime.

A seeded sweep of small MaxPool / AveragePool (count_include_pad 0 and 1) / LpPool / Conv
nodes in 1-D, 2-D and 3-D, with every auto_pad (NOTSET, SAME_UPPER, SAME_LOWER, VALID),
ceil_mode 0 and 1, strides, dilations, explicit pads, kernels larger than the input and
windows that lie (partly or wholly) in the padding, imported on the "cpu" and "reference"
backends and compared with ONNX Runtime on random inputs. Where ORT refuses a node or gives an
empty output, the importer must refuse it with OnnxImportError (WebNN has no 0-sized
tensors). The few geometries where ORT departs from the ONNX specification are named by
_spec_over_ort (SPEC_OVER_ORT in docs/onnx.md, "Pools and auto_pad"): the importer follows
the specification there, checked against a direct evaluation of the definition
(_spec_result, itself checked against ORT where the two agree).
"""

import itertools
import random
import subprocess
import sys

import numpy as np
import pytest

ort = pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")
import webnn
import webnn.onnx as wo
from onnx import TensorProto, helper
from webnn.onnx.errors import OnnxImportError

OPSET = 19  # AveragePool has dilations since 19, LpPool ceil_mode and dilations since 18
AUTO_PADS = ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")
POOLS = ("MaxPool", "AveragePool0", "AveragePool1", "LpPool1", "LpPool2", "LpPool3")

_contexts = {}


def _context(backend):
    if backend not in _contexts:
        _contexts[backend] = webnn.ML().create_context(accelerated=False, backend=backend)
    return _contexts[backend]


def _model(kind, attrs, x_shape, w_shape=None):
    op_type = kind.rstrip("0123")
    attrs = dict(attrs)
    if kind.startswith("AveragePool"):
        attrs["count_include_pad"] = int(kind[-1])
    elif kind.startswith("LpPool"):
        attrs["p"] = int(kind[-1])
    inputs = ["x"] + (["w"] if w_shape else [])
    node = helper.make_node(op_type, inputs, ["y"], **attrs)
    values = [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x_shape))]
    if w_shape:
        values.append(helper.make_tensor_value_info("w", TensorProto.FLOAT, list(w_shape)))
    graph = helper.make_graph(
        [node], "g", values, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 9
    return model


def _geometry(rng, kind, rank, auto_pad, ceil_mode):
    """Random small attributes for one node: sizes 1-6 (1-4 in 3-D), kernels 1-4 (often past
    the input), strides 1-3, dilations 1-2, explicit pads below the kernel."""
    top = 4 if rank == 3 else 6
    sizes = [rng.randint(1, top) for _ in range(rank)]
    kernel = [rng.randint(1, 4) for _ in range(rank)]
    strides = [rng.randint(1, 3) for _ in range(rank)]
    dilations = [rng.choice((1, 1, 2)) for _ in range(rank)]
    attrs = {"kernel_shape": kernel, "strides": strides, "dilations": dilations}
    if auto_pad == "NOTSET":
        attrs["pads"] = [rng.randint(0, k - 1) for k in kernel + kernel]
    else:
        attrs["auto_pad"] = auto_pad
    if kind != "Conv":
        attrs["ceil_mode"] = ceil_mode
    return sizes, attrs


def _cases():
    rng = random.Random(8)
    cases = []
    for kind in POOLS + ("Conv",):
        for rank in (1, 2, 3):
            for auto_pad in AUTO_PADS:
                for ceil_mode in (0, 1) if kind != "Conv" else (0,):
                    per = 2 if kind.startswith("LpPool") else 3 if kind != "Conv" else 6
                    for _ in range(per):
                        sizes, attrs = _geometry(rng, kind, rank, auto_pad, ceil_mode)
                        cases.append((kind, sizes, attrs))
    return cases


def _id(case):
    kind, sizes, attrs = case
    parts = [kind, "x".join(map(str, sizes))]
    parts += [
        f"{k}={'.'.join(map(str, v)) if isinstance(v, list) else v}" for k, v in attrs.items()
    ]
    return "-".join(parts).replace("kernel_shape", "k").replace("dilations", "d")


# Hand-picked edge cases the random sweep reaches only by luck.
EDGE_CASES = [
    # VALID with a window larger than the input (output size 0 in the spec: refused by both)
    ("MaxPool", [3, 3], {"kernel_shape": [4, 2], "auto_pad": "VALID"}),
    ("AveragePool0", [5], {"kernel_shape": [7], "auto_pad": "VALID", "ceil_mode": 1}),
    # VALID with ceil_mode in 3-D
    (
        "MaxPool",
        [5, 4, 6],
        {"kernel_shape": [2, 2, 2], "strides": [2, 3, 4], "auto_pad": "VALID", "ceil_mode": 1},
    ),
    (
        "AveragePool0",
        [5, 5, 5],
        {"kernel_shape": [2, 3, 2], "strides": [2, 2, 3], "auto_pad": "VALID", "ceil_mode": 1},
    ),
    (
        "LpPool2",
        [4, 5, 3],
        {"kernel_shape": [3, 2, 2], "strides": [2, 2, 2], "auto_pad": "VALID", "ceil_mode": 1},
    ),
    # count_include_pad with the ceil-mode overhang past the padded edge
    (
        "AveragePool1",
        [5, 5],
        {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1], "ceil_mode": 1},
    ),
    ("AveragePool1", [6], {"kernel_shape": [3], "strides": [2], "pads": [0, 1], "ceil_mode": 1}),
    (
        "AveragePool1",
        [4, 4, 5],
        {
            "kernel_shape": [2, 2, 3],
            "strides": [3, 3, 2],
            "pads": [1, 0, 1, 1, 1, 1],
            "ceil_mode": 1,
        },
    ),
    # windows made only of padding
    ("MaxPool", [1, 2], {"kernel_shape": [3, 3], "strides": [1, 1], "pads": [2, 2, 2, 2]}),
    ("AveragePool0", [1, 2], {"kernel_shape": [3, 3], "pads": [2, 2, 2, 2]}),
    ("AveragePool1", [1, 2], {"kernel_shape": [3, 3], "pads": [2, 2, 2, 2]}),
    ("LpPool2", [2, 1], {"kernel_shape": [3, 3], "pads": [2, 2, 2, 2]}),
    ("MaxPool", [2], {"kernel_shape": [3], "dilations": [2], "pads": [2, 2]}),
    # 3-D windows whose depth taps are all padding
    ("MaxPool", [1, 3, 3], {"kernel_shape": [3, 2, 2], "pads": [2, 0, 0, 2, 0, 0]}),
    ("AveragePool0", [1, 3, 3], {"kernel_shape": [3, 2, 2], "pads": [2, 0, 0, 2, 0, 0]}),
    ("AveragePool1", [2, 3, 3], {"kernel_shape": [3, 2, 2], "pads": [2, 1, 0, 2, 0, 1]}),
    ("LpPool1", [1, 3, 3], {"kernel_shape": [3, 2, 2], "pads": [2, 0, 0, 2, 0, 0]}),
    (
        "MaxPool",
        [2, 2, 2],
        {
            "kernel_shape": [2, 2, 2],
            "strides": [3, 1, 1],
            "pads": [1, 0, 0, 1, 0, 0],
            "ceil_mode": 1,
        },
    ),
    # Conv: SAME with dilations and strides, kernel larger than the input
    (
        "Conv",
        [5, 4],
        {"kernel_shape": [3, 3], "strides": [2, 3], "dilations": [2, 1], "auto_pad": "SAME_LOWER"},
    ),
    ("Conv", [2], {"kernel_shape": [4], "auto_pad": "SAME_UPPER"}),
    (
        "Conv",
        [3, 2, 4],
        {"kernel_shape": [2, 3, 2], "strides": [1, 2, 2], "auto_pad": "SAME_UPPER"},
    ),
]

CASES = _cases() + EDGE_CASES


def _spec_over_ort(kind, sizes, attrs):
    """Why ONNX Runtime's result is not the ONNX specification's for this node, or None."""
    auto_pad = attrs.get("auto_pad", "NOTSET")
    if not auto_pad.startswith("SAME"):
        return None
    rank = len(sizes)
    kernel, strides = attrs["kernel_shape"], attrs.get("strides", [1] * rank)
    dilations = attrs.get("dilations", [1] * rank)
    if kind == "Conv" and max(dilations) > 1:
        return "ORT refuses Conv with SAME_* and dilations"
    if any(k > 1 and d > 1 for k, d in zip(kernel, dilations)):
        return "ORT pads SAME_* pools for the undilated kernel (the spec: the dilated window)"
    if kind.startswith("MaxPool"):
        for size, k, s in zip(sizes, kernel, strides):
            if (-(-size // s) - 1) * s + k - size < 0:
                return "ORT's MaxPool refuses the negative SAME_* pads of a stride past the window"
    return None


def _spec_geometry(kind, sizes, attrs):
    """Per axis (begin pad, end pad, output size) of a SAME_* node, from the specification:
    output ceil(size / stride), pads (output - 1) * stride + dilated window - size in total,
    the odd one at the end (SAME_UPPER) or the begin (SAME_LOWER), split as ORT's integer
    division splits them; Conv pads are never negative."""
    rank = len(sizes)
    kernel, strides = attrs["kernel_shape"], attrs.get("strides", [1] * rank)
    dilations = attrs.get("dilations", [1] * rank)
    geometry = []
    for size, k, s, d in zip(sizes, kernel, strides, dilations):
        out = -(-size // s)
        total = (out - 1) * s + (k - 1) * d + 1 - size
        if kind == "Conv":
            total = max(0, total)
        half = int((total + 1) / 2) if attrs["auto_pad"] == "SAME_LOWER" else int(total / 2)
        geometry.append((half, total - half, out))
    return geometry


def _spec_result(kind, x, w, attrs, geometry):
    """The node's output by its definition, one window at a time: the taps inside the input
    (max, mean, p-norm, or the sum divided by the taps inside input and pads for
    count_include_pad); a window of padding only gives the lowest float (MaxPool) or 0."""
    rank = x.ndim - 2
    kernel, strides = attrs["kernel_shape"], attrs.get("strides", [1] * rank)
    dilations = attrs.get("dilations", [1] * rank)
    axes = []
    for i, (begin, end, out) in enumerate(geometry):
        rows = []
        for o in range(out):
            taps = [(o * strides[i] - begin + j * dilations[i], j) for j in range(kernel[i])]
            inside = [(t, j) for t, j in taps if 0 <= t < x.shape[2 + i]]
            padded = sum(1 for t, _ in taps if -begin <= t < x.shape[2 + i] + end)
            rows.append((inside, padded))
        axes.append(rows)
    outs = [g[2] for g in geometry]
    y = np.zeros([x.shape[0], w.shape[0] if kind == "Conv" else x.shape[1]] + outs)
    for pos in itertools.product(*[range(o) for o in outs]):
        windows = list(itertools.product(*[axes[i][p][0] for i, p in enumerate(pos)]))
        count = np.prod([axes[i][p][1] for i, p in enumerate(pos)])
        where = (slice(None), slice(None)) + pos
        if kind == "Conv":
            for taps in windows:
                at = tuple(t for t, _ in taps)
                tap = tuple(j for _, j in taps)
                y[where] += (
                    x[(slice(None), slice(None)) + at] @ w[(slice(None), slice(None)) + tap].T
                )
            continue
        if not windows:
            y[where] = np.finfo(np.float32).min if kind == "MaxPool" else 0.0
            continue
        values = np.stack([x[(slice(None), slice(None)) + tuple(t for t, _ in taps)]
                           for taps in windows], -1).astype(np.float64)  # fmt: skip
        if kind == "MaxPool":
            y[where] = values.max(-1)
        elif kind == "AveragePool1":
            y[where] = values.sum(-1) / count
        elif kind == "AveragePool0":
            y[where] = values.mean(-1)
        else:
            p = int(kind[-1])
            y[where] = (np.abs(values) ** p).sum(-1) ** (1.0 / p)
    return y.astype(np.float32)


def _inputs(kind, sizes, attrs, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal([1, 2] + sizes).astype(np.float32)
    feeds = {"x": x}
    w_shape = None
    if kind == "Conv":
        w_shape = [3, 2] + list(attrs["kernel_shape"])
        feeds["w"] = rng.standard_normal(w_shape).astype(np.float32)
    return feeds, w_shape


def _ort(model, feeds):
    try:
        session = ort.InferenceSession(
            model.SerializeToString(), providers=["CPUExecutionProvider"]
        )
        return session.run(None, feeds)[0], None
    except Exception as exc:  # noqa: BLE001 - any refusal of ORT's is compared below
        return None, exc


def _webnn(model, feeds, backend):
    context = _context(backend)
    graph = wo.load(context, model)
    return context.compute(graph, feeds)["y"]


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_pool_and_conv_padding_match_onnxruntime(case):
    kind, sizes, attrs = case
    feeds, w_shape = _inputs(kind, sizes, attrs, seed=len(_id(case)))
    model = _model(kind, attrs, [1, 2] + sizes, w_shape)
    reason = _spec_over_ort(kind, sizes, attrs)
    if reason is not None:
        want, refused = _spec_result(kind, feeds["x"], feeds.get("w"), attrs,
                                     _spec_geometry(kind, sizes, attrs)), None  # fmt: skip
    else:
        want, refused = _ort(model, feeds)
    if refused is None and 0 in want.shape:
        refused = "an empty output"  # WebNN has no 0-sized tensors: the importer refuses it
    for backend in ("cpu", "reference"):
        if refused is not None:
            with pytest.raises(OnnxImportError):
                _webnn(model, feeds, backend)
            continue
        got = _webnn(model, feeds, backend)
        assert got.shape == want.shape, (backend, got.shape, want.shape)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=backend)


SAME_AGREEING = [
    c for c in CASES
    if c[1:] and c[2].get("auto_pad", "").startswith("SAME") and _spec_over_ort(*c) is None
]  # fmt: skip


@pytest.mark.parametrize("case", SAME_AGREEING[::3], ids=[_id(c) for c in SAME_AGREEING[::3]])
def test_spec_reference_agrees_with_onnxruntime_elsewhere(case):
    """The reference the SPEC_OVER_ORT cases are checked against gives ORT's results on the
    SAME_* nodes where ORT follows the specification (negative pads included)."""
    kind, sizes, attrs = case
    feeds, w_shape = _inputs(kind, sizes, attrs, seed=len(_id(case)))
    want, refused = _ort(_model(kind, attrs, [1, 2] + sizes, w_shape), feeds)
    assert refused is None, refused
    got = _spec_result(kind, feeds["x"], feeds.get("w"), attrs, _spec_geometry(kind, sizes, attrs))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def _index_cases():
    rng = random.Random(9)
    cases = []
    for rank in (1, 2, 3):
        for auto_pad in AUTO_PADS:
            for ceil_mode in (0, 1):
                for _ in range(2):
                    sizes, attrs = _geometry(rng, "MaxPool", rank, auto_pad, ceil_mode)
                    attrs["storage_order"] = rng.randint(0, 1) if rank < 3 else 0
                    cases.append(("MaxPool", sizes, attrs))
    return [c for c in cases if _spec_over_ort(*c) is None]


INDEX_CASES = _index_cases()


@pytest.mark.parametrize("case", INDEX_CASES, ids=[_id(c) for c in INDEX_CASES])
def test_max_pool_indices_with_auto_pad_match_onnxruntime(case):
    _, sizes, attrs = case
    x = np.random.default_rng(len(_id(case))).standard_normal([1, 2] + sizes).astype(np.float32)
    node = helper.make_node("MaxPool", ["x"], ["y", "i"], **attrs)
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2] + sizes)],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
            helper.make_tensor_value_info("i", TensorProto.INT64, None),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 9
    try:
        session = ort.InferenceSession(
            model.SerializeToString(), providers=["CPUExecutionProvider"]
        )
        want_y, want_i = session.run(None, {"x": x})
    except Exception:  # noqa: BLE001
        want_y = None
    for backend in ("cpu", "reference"):
        if want_y is None or 0 in want_y.shape:
            with pytest.raises(OnnxImportError):
                wo.load(_context(backend), model)
            continue
        got = _context(backend).compute(wo.load(_context(backend), model), {"x": x})
        np.testing.assert_array_equal(got["y"], want_y, err_msg=backend)
        np.testing.assert_array_equal(got["i"], want_i, err_msg=backend)


@pytest.mark.parametrize("op_type", ["MaxPool", "AveragePool", "LpPool", "Conv", "ConvTranspose"])
@pytest.mark.parametrize("auto_pad", ["SAME", "same_upper", "VALID "])
def test_unknown_auto_pad_is_refused(op_type, auto_pad):
    conv = op_type.startswith("Conv")
    shape = [1, 2, 5, 5]
    values = [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)]
    if conv:
        values.append(helper.make_tensor_value_info("w", TensorProto.FLOAT, [2, 2, 3, 3]))
    node = helper.make_node(op_type, ["x", "w"] if conv else ["x"], ["y"], kernel_shape=[3, 3],
                            auto_pad=auto_pad)  # fmt: skip
    graph = helper.make_graph(
        [node], "g", values, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    with pytest.raises(OnnxImportError, match=f"auto_pad '{auto_pad}' is not one of"):
        wo.load(_context("cpu"), model)
    # ONNX Runtime refuses them too.
    with pytest.raises(Exception, match="(?i)auto_?pad"):
        ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])


HUGE_POOL = """
import sys
import webnn, webnn.onnx as wo
from onnx import TensorProto, helper
from webnn.onnx.errors import OnnxImportError
k = 1 << 16
node = helper.make_node(sys.argv[1], ["x"], ["y"], kernel_shape=[k, k] + [1] * int(sys.argv[2]),
                        pads=[k - 1] * (4 + 2 * int(sys.argv[2])))
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 2, 2] + [1] * int(sys.argv[2]))
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
model = helper.make_model(helper.make_graph([node], "g", [x], [y]),
                          opset_imports=[helper.make_opsetid("", 19)])
try:
    wo.load(webnn.ML().create_context(accelerated=False, backend="reference"), model)
except OnnxImportError as exc:
    print(exc)
"""


@pytest.mark.parametrize("op_type", ["MaxPool", "AveragePool", "LpPool"])
@pytest.mark.parametrize("depth", [0, 1])
def test_pool_of_more_than_2_pow_32_taps_is_refused(op_type, depth):
    """A 65536 x 65536 kernel over pads of 65535: 2^32 outputs of 2^32 taps each, a few bytes
    in a file. Refused at import (in a child process with a time limit, so that a regression
    fails instead of hanging)."""
    run = subprocess.run(
        [sys.executable, "-c", HUGE_POOL, op_type, str(depth)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert "window taps (at most 4294967296)" in run.stdout, run.stdout + run.stderr
    assert op_type in run.stdout
