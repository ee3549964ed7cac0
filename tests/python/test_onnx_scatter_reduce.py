"""ScatterElements / ScatterND with reduction add/mul/max/min and indices given at run time
(webnn/onnx/ops/scatter_reduce.py: a one-hot comparison of the indices with the output
positions), against ONNX Runtime on both backends: duplicates, negative indices, every
reduction, float and integer data."""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
import webnn
import webnn.onnx as wo
from onnx import TensorProto, helper
from webnn.onnx.ops import scatter_reduce

RNG = np.random.default_rng(18)
REDUCTIONS = ["add", "mul", "max", "min"]
DTYPES = {"float32": TensorProto.FLOAT, "int32": TensorProto.INT32, "int64": TensorProto.INT64}


def _model(op, data_shape, index_shape, update_shape, dtype, **attrs):
    elem = DTYPES[dtype]
    node = helper.make_node(op, ["data", "indices", "updates"], ["y"], **attrs)
    graph = helper.make_graph(
        [node],
        "g",
        [
            helper.make_tensor_value_info("data", elem, data_shape),
            helper.make_tensor_value_info("indices", TensorProto.INT64, index_shape),
            helper.make_tensor_value_info("updates", elem, update_shape),
        ],
        [helper.make_tensor_value_info("y", elem, data_shape)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    return model.SerializeToString()


def _values(shape, dtype):
    if dtype == "float32":
        # magnitudes that make the order of a float sum or product matter
        return (RNG.standard_normal(shape) * 10.0 ** RNG.integers(-3, 4, shape)).astype(np.float32)
    return RNG.integers(-4, 5, shape).astype(dtype)


def _run_both(data, feed, backend):
    want = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, feed)[0]
    ctx = webnn.ML().create_context(accelerated=False, backend=backend)
    got = ctx.compute(wo.load(ctx, data), feed)["y"]
    return got, want


# (data shape, indices/updates shape, axis)
ELEMENT_CASES = [([6, 5], [4, 5], 0), ([4, 6], [4, 3], 1), ([3, 5, 4], [2, 7, 3], 1), ([7], [9], 0)]


@pytest.mark.parametrize("backend", ["cpu", "reference"])
@pytest.mark.parametrize("dtype", sorted(DTYPES))
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("case", range(len(ELEMENT_CASES)))
def test_scatter_elements_reduction_with_runtime_indices(case, reduction, dtype, backend):
    shape, ishape, axis = ELEMENT_CASES[case]
    dim = shape[axis]
    # duplicates certain (more indices than positions in most cases), negative ones too
    indices = RNG.integers(-dim, dim, ishape).astype(np.int64)
    feed = {
        "data": _values(shape, dtype),
        "indices": indices,
        "updates": _values(ishape, dtype),
    }
    data = _model("ScatterElements", shape, ishape, ishape, dtype, axis=axis, reduction=reduction)
    got, want = _run_both(data, feed, backend)
    # at most 64 updates per row: applied in index order, bit-identical to ORT
    np.testing.assert_array_equal(got, want)


# (data shape, indices shape)
ND_CASES = [([5, 3], [9, 1]), ([4, 3, 2], [7, 2]), ([3, 4], [2, 3, 2]), ([6], [10, 1])]


@pytest.mark.parametrize("backend", ["cpu", "reference"])
@pytest.mark.parametrize("dtype", sorted(DTYPES))
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("case", range(len(ND_CASES)))
def test_scatter_nd_reduction_with_runtime_indices(case, reduction, dtype, backend):
    shape, ishape = ND_CASES[case]
    k = ishape[-1]
    dims = np.array(shape[:k])
    indices = RNG.integers(0, 2**20, ishape) % dims - (RNG.integers(0, 2, ishape) * dims)
    indices = indices.astype(np.int64)  # negative half the time (counted from the end)
    ushape = ishape[:-1] + shape[k:]
    feed = {"data": _values(shape, dtype), "indices": indices, "updates": _values(ushape, dtype)}
    data = _model("ScatterND", shape, ishape, ushape, dtype, reduction=reduction)
    got, want = _run_both(data, feed, backend)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("backend", ["cpu", "reference"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_many_updates_reduced_at_once(reduction, backend):
    """More updates per row than the ordered rounds take: integer and max/min results stay
    exact, a float sum of repeated indices differs from ORT's in-order sum by rounding only."""
    count = scatter_reduce.MAX_ORDERED_UPDATES * 3
    shape, ishape = [12, 3], [count, 1]
    indices = RNG.integers(-12, 12, ishape).astype(np.int64)
    for dtype in ("int32", "float32"):
        updates = _values([count, 3], dtype)
        if dtype == "float32" and reduction == "mul":
            updates = RNG.uniform(0.9, 1.1, [count, 3]).astype(np.float32)  # no overflow
        feed = {"data": _values(shape, dtype), "indices": indices, "updates": updates}
        data = _model("ScatterND", shape, ishape, [count, 3], dtype, reduction=reduction)
        got, want = _run_both(data, feed, backend)
        if dtype == "float32" and reduction in ("add", "mul"):
            scale = np.abs(want).max()
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6 * scale)
        else:
            np.testing.assert_array_equal(got, want)


def test_out_of_reach_one_hot_is_refused():
    count, cells = 5000, 4000  # 2e7 comparisons > the bound, and too many for ordered rounds
    data = _model("ScatterND", [cells], [count, 1], [count], "int32", reduction="add")
    ctx = webnn.ML().create_context(accelerated=False, backend="cpu")
    with pytest.raises(wo.OnnxImportError, match=r"ScatterND.*5000 updates x 4000 positions"):
        wo.load(ctx, data)


def test_constant_indices_still_use_the_exact_rounds():
    """Indices known at import keep the gather + scatter rounds (no one-hot, no bound)."""
    shape = [4, 3]
    indices = np.array([[1], [-1], [1], [0]], np.int64)
    node = helper.make_node("ScatterND", ["data", "idx", "updates"], ["y"], reduction="add")
    graph = helper.make_graph(
        [node],
        "g",
        [
            helper.make_tensor_value_info("data", TensorProto.FLOAT, shape),
            helper.make_tensor_value_info("updates", TensorProto.FLOAT, [4, 3]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)],
        [onnx.numpy_helper.from_array(indices, "idx")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    feed = {"data": _values(shape, "float32"), "updates": _values([4, 3], "float32")}
    got, want = _run_both(model.SerializeToString(), feed, "cpu")
    np.testing.assert_array_equal(got, want)


def _message_passing_model(nodes, edges, channels, axis):
    """A graph network's aggregation as torch exports `index_add`: the edges' target node
    index unsqueezed and expanded over the channels, then ScatterElements(add) into nodes."""
    data_shape = [nodes, channels] if axis == 0 else [channels, nodes]
    upd_shape = [edges, channels] if axis == 0 else [channels, edges]
    graph = helper.make_graph(
        [
            helper.make_node("Unsqueeze", ["target", "unsq_axis"], ["column"]),
            helper.make_node("Expand", ["column", "shape"], ["indices"]),
            helper.make_node(
                "ScatterElements", ["data", "indices", "updates"], ["y"], axis=axis, reduction="add"
            ),
        ],
        "g",
        [
            helper.make_tensor_value_info("data", TensorProto.FLOAT, data_shape),
            helper.make_tensor_value_info("target", TensorProto.INT64, [edges]),
            helper.make_tensor_value_info("updates", TensorProto.FLOAT, upd_shape),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, data_shape)],
        [
            onnx.numpy_helper.from_array(np.array([1 - axis], np.int64), "unsq_axis"),
            onnx.numpy_helper.from_array(np.array(upd_shape, np.int64), "shape"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    return model.SerializeToString(), data_shape, upd_shape


@pytest.mark.parametrize("backend", ["cpu", "reference"])
@pytest.mark.parametrize("axis", [0, 1])
def test_expanded_index_add_as_a_product(axis, backend, monkeypatch):
    """One index per edge broadcast over the channels (more edges than the ordered rounds
    take): the one-hot product form. Repeated and negative targets, nodes no edge reaches,
    and NaN / +inf / -inf updates that reach only their own node."""
    nodes, edges, channels = 20, scatter_reduce.MAX_ORDERED_UPDATES * 2 + 5, 24
    data, data_shape, upd_shape = _message_passing_model(nodes, edges, channels, axis)
    target = RNG.integers(-nodes, nodes - 3, edges).astype(np.int64)  # the last 3: few edges
    target[11] = target[9]  # +inf and -inf into one node: NaN
    updates = _values(upd_shape, "float32")
    special = updates if axis == 0 else updates.T
    special[5, 2], special[9, 7], special[11, 7], special[12, 1] = np.nan, np.inf, -np.inf, np.inf
    feed = {"data": _values(data_shape, "float32"), "target": target, "updates": updates}
    used = []
    product = scatter_reduce._add_by_product
    monkeypatch.setattr(scatter_reduce, "_add_by_product", lambda *a: used.append(1) or product(*a))
    got, want = _run_both(data, feed, backend)
    assert used, "the product form was not taken"
    assert np.array_equal(np.isnan(got), np.isnan(want)) and np.isnan(want).sum() >= 2
    finite = np.isfinite(want)
    np.testing.assert_array_equal(got[~finite & ~np.isnan(want)], want[~finite & ~np.isnan(want)])
    scale = np.abs(want[finite]).max()
    np.testing.assert_allclose(got[finite], want[finite], rtol=1e-5, atol=1e-6 * scale)
    untouched = (np.arange(nodes) >= nodes - 3) & ~np.isin(np.arange(nodes) - nodes, target)
    axis_first = got if axis == 0 else got.T
    np.testing.assert_array_equal(
        axis_first[untouched], (feed["data"] if axis == 0 else feed["data"].T)[untouched]
    )


@pytest.mark.parametrize("backend", ["cpu", "reference"])
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("edges", [42, scatter_reduce.MAX_ORDERED_UPDATES * 2 + 5])
def test_small_message_passing_sums_in_onnx_order(edges, axis, backend, monkeypatch):
    """A molecule-sized aggregation (21 nodes) takes the product with the data rows in front
    ([I | one-hot] @ [data; updates]): on cpu each node's sum is ONNX Runtime's sequential
    ((data + u_1) + u_2) + ... bit for bit, also with NaN / inf in the data and the updates."""
    nodes, channels = 21, 37
    data, data_shape, upd_shape = _message_passing_model(nodes, edges, channels, axis)
    target = RNG.integers(-nodes, nodes - 2, edges).astype(np.int64)  # repeats; 2 nodes unreached
    target[: edges // 3] = target[0]  # one node receives a third of the edges
    updates = _values(upd_shape, "float32")
    values = _values(data_shape, "float32")
    by_node = values if axis == 0 else values.T
    by_node[int(target[5]) % nodes, 3] = np.inf  # an infinite datum plus finite updates
    by_node[nodes - 1, 4] = np.nan  # NaN data where no edge arrives stays NaN
    by_node[nodes - 2, 5] = -0.0  # and -0 stays -0
    feed = {"data": values, "target": target, "updates": updates}
    used = []
    product = scatter_reduce._add_by_product
    monkeypatch.setattr(scatter_reduce, "_add_by_product", lambda *a: used.append(1) or product(*a))
    got, want = _run_both(data, feed, backend)
    assert used, "the product form was not taken"
    if backend == "cpu":
        np.testing.assert_array_equal(got, want)
        assert np.array_equal(np.signbit(got), np.signbit(want))
    else:
        assert np.array_equal(np.isnan(got), np.isnan(want))
        finite = np.isfinite(want)
        scale = np.abs(want[finite]).max()
        np.testing.assert_array_equal(got[~finite], want[~finite])
        np.testing.assert_allclose(got[finite], want[finite], rtol=1e-5, atol=1e-6 * scale)
