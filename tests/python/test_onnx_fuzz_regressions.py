"""Inputs the ONNX importer fuzz target found (tests/data/fuzz_regressions/onnx_importer/),
replayed through the target itself: each now imports or raises a clear error naming the node."""

import os
import re
import sys
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
import webnn
import webnn.onnx
from onnx import TensorProto, helper

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "fuzz"))
import onnx_importer_target as target

FOUND = sorted((ROOT / "tests/data/fuzz_regressions/onnx_importer").glob("*.bin"))
# Valid models whose buffers this machine cannot hold: the runtime refuses them with "out of
# memory allocating N bytes" (accepted below), but under tools/sanitize.sh AddressSanitizer's
# allocator treats the request (128 GiB) as a fatal error instead of failing it, and the
# whole run aborts (ninth session).
TOO_LARGE_FOR_ASAN = {"dropout_mask_huge_declared_shape_memoryerror"}


@pytest.mark.parametrize("path", FOUND, ids=[p.stem for p in FOUND])
def test_found_input_is_handled(path):
    if path.stem in TOO_LARGE_FOR_ASAN and "asan" in os.environ.get("LD_PRELOAD", ""):
        pytest.skip("under AddressSanitizer: an oversized allocation is fatal, not an error")
    data = path.read_bytes()
    target.run_one(data)  # raises target.Finding for a crash or an unclear error
    ctx = webnn.ML().create_context(accelerated=False, backend="cpu")
    # The node, its op and opset; or the initializer or graph input.
    named = r"node .*('|\]) \([\w.]+::\w+, opset -?\d+\): |(initializer|graph input) '[^']*': "
    try:
        webnn.onnx.load(ctx, data[1:], base_dir=target.work_dir())
    except webnn.onnx.OnnxImportError as exc:
        assert re.search(named, str(exc)), str(exc)
        return
    except RuntimeError as exc:  # valid, but its buffers do not fit in memory: a clean error
        assert "out of memory allocating" in str(exc), str(exc)
        return
    # A valid model (the finding was at run time, e.g. a hang in a kernel): it runs on both
    # backends with the same results.
    results = []
    for backend in ("cpu", "reference"):
        c = webnn.ML().create_context(accelerated=False, backend=backend)
        session = webnn.onnx.InferenceSession(data[1:], context=c, base_dir=target.work_dir())
        feeds = target._session_feeds(session)
        assert feeds is not None
        results.append(session.run(None, feeds))
    for got, want in zip(*results):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def _constant_model(location):
    value = helper.make_tensor("v", TensorProto.FLOAT, [4], [0.0] * 4)
    value.ClearField("float_data")
    value.data_location = TensorProto.EXTERNAL
    for key, text in (("location", location), ("offset", "8")):
        entry = value.external_data.add()
        entry.key, entry.value = key, text
    node = helper.make_node("Constant", [], ["c"], value=value, name="const")
    graph = helper.make_graph(
        [node], "g", [], [helper.make_tensor_value_info("c", TensorProto.FLOAT, [4])]
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_constant_with_external_data_reads_from_the_model_directory(tmp_path):
    # Found by the fuzzer: a Constant node's external data was read by onnx relative to the
    # working directory; it is now read like an initializer's (location checked).
    np.arange(8, dtype=np.float32).tofile(tmp_path / "w.bin")
    ctx = webnn.ML().create_context(accelerated=False, backend="reference")
    graph = webnn.onnx.load(ctx, _constant_model("w.bin"), base_dir=tmp_path)
    np.testing.assert_array_equal(ctx.compute(graph, {})["c"], np.arange(2, 6, dtype=np.float32))
    for escape in ("../w.bin", str(tmp_path / "w.bin")):
        with pytest.raises(webnn.onnx.OnnxImportError, match="absolute|leaves the model"):
            webnn.onnx.load(ctx, _constant_model(escape), base_dir=tmp_path)


@pytest.mark.parametrize("location", [".", "./", "sub/..", ""])
def test_external_location_naming_no_file_is_refused(tmp_path, location):
    # Found by the fuzzer: location "." has no path parts, and the absolute-path check indexed
    # the first one (IndexError).
    ctx = webnn.ML().create_context(accelerated=False, backend="reference")
    with pytest.raises(webnn.onnx.OnnxImportError, match="names no file|no location|leaves the"):
        webnn.onnx.load(ctx, _constant_model(location), base_dir=tmp_path)


@pytest.mark.parametrize("op,gates", [("RNN", 1), ("GRU", 3), ("LSTM", 4)])
def test_recurrent_hidden_size_must_match_r(op, gates):
    # Found by the fuzzer: RNN allocated its zero initial state [batch, hidden_size] from the
    # attribute (2^31 - 1: 24 GiB, MemoryError) before any check against the weights.
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])
    w = helper.make_tensor("w", TensorProto.FLOAT, [1, gates * 5, 4], [0.1] * gates * 20)
    r = helper.make_tensor("r", TensorProto.FLOAT, [1, gates * 5, 5], [0.1] * gates * 25)
    node = helper.make_node(op, ["x", "w", "r"], ["", "h"], hidden_size=2**31 - 1)
    y = helper.make_tensor_value_info("h", TensorProto.FLOAT, None)
    graph = helper.make_graph([node], "g", [x], [y], initializer=[w, r])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    ctx = webnn.ML().create_context(accelerated=False, backend="reference")
    with pytest.raises(
        webnn.onnx.OnnxImportError, match=r"hidden_size 2147483647 does not match R"
    ):
        webnn.onnx.load(ctx, model)
    model.graph.node[0].attribute[0].i = 5  # the matching size imports and runs
    graph = webnn.onnx.load(ctx, model)
    out = ctx.compute(graph, {"x": np.ones([2, 3, 4], np.float32)})
    assert out["h"].shape == (1, 3, 5) and np.isfinite(out["h"]).all()


@pytest.mark.parametrize("constant_data", [True, False])
def test_gather_with_omitted_indices_names_the_missing_input(constant_data):
    # Found by the fuzzer: Gather(data, "") - constant folding read the omitted input
    # (AttributeError on None), and the converter passed None to the builder.
    data = helper.make_tensor("d", TensorProto.FLOAT, [3], [1.0, 2.0, 3.0])
    node = helper.make_node("Gather", ["d", ""], ["y"])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    inputs = [] if constant_data else [helper.make_tensor_value_info("d", TensorProto.FLOAT, [3])]
    graph = helper.make_graph([node], "g", inputs, [y], initializer=[data] if constant_data else [])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    ctx = webnn.ML().create_context(accelerated=False, backend="reference")
    with pytest.raises(webnn.onnx.OnnxImportError, match=r"Gather.*required input is missing"):
        webnn.onnx.load(ctx, model)


@pytest.mark.parametrize("axes", [[0, 0], [1, -2], [0, 0, 0, 0]])
def test_unsqueeze_with_a_repeated_axis_is_refused(axes):
    # Found by the fuzzer: repeated axes ran the converter's shape iterator dry
    # (StopIteration escaped the importer).
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    a = helper.make_tensor("a", TensorProto.INT64, [len(axes)], axes)
    node = helper.make_node("Unsqueeze", ["x", "a"], ["y"])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    graph = helper.make_graph([node], "g", [x], [y], initializer=[a])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    ctx = webnn.ML().create_context(accelerated=False, backend="reference")
    with pytest.raises(webnn.onnx.OnnxImportError, match=r"Unsqueeze.*repeat an axis"):
        webnn.onnx.load(ctx, model)


@pytest.mark.parametrize("kernel", [[-(2**63), 2, 2], [0, 2, 2], [2, 2]])
def test_pool3d_kernel_must_be_positive(kernel):
    # Found by the fuzzer as a hang: MaxPool 3-D with kernel_shape[0] = -2^63 unrolled the
    # depth axis in an endless loop.
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 4, 4, 4])
    node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=kernel)
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    graph = helper.make_graph([node], "g", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    ctx = webnn.ML().create_context(accelerated=False, backend="reference")
    with pytest.raises(webnn.onnx.OnnxImportError, match=r"kernel_shape .* must be 3 positive"):
        webnn.onnx.load(ctx, model)


def test_bytes_that_are_no_model_raise_the_import_error():
    ctx = webnn.ML().create_context(accelerated=False, backend="cpu")
    with pytest.raises(webnn.onnx.OnnxImportError, match="5 bytes given are not a readable"):
        webnn.onnx.load(ctx, b"\x0a\xff\xff\xff\x0f")


def _constant_of_shape(dims):
    shape = helper.make_tensor("s", TensorProto.INT64, [len(dims)], dims)
    value = helper.make_tensor("v", TensorProto.FLOAT, [1], [2.5])
    node = helper.make_node("ConstantOfShape", ["s"], ["y"], value=value, name="fill")
    out = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    graph = helper.make_graph([node], "g", [], [out], [shape])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_constant_of_shape_of_terabytes_is_refused_not_allocated():
    # Found by the fuzzer: 40 bytes of model declaring 4 TiB made numpy raise MemoryError.
    ctx = webnn.ML().create_context(accelerated=False, backend="cpu")
    with pytest.raises(webnn.onnx.OnnxImportError, match=r"'fill'.*exceeds the maximum tensor"):
        webnn.onnx.load(ctx, _constant_of_shape([2**20, 2**20]))
    # A large one that fits is a run-time expand of the scalar, with the same values.
    graph = webnn.onnx.load(ctx, _constant_of_shape([2**12, 2**13]))
    y = ctx.compute(graph, {})["y"]
    np.testing.assert_array_equal(y, np.full([2**12, 2**13], 2.5, np.float32))


@pytest.mark.parametrize(
    "op, inputs",
    [
        ("ConstantOfShape", [np.array([2**16, 2**16], np.int64)]),
        ("Expand", [np.ones([1], np.float32), np.array([2**15, 2**15], np.int64)]),
        ("Tile", [np.ones([2, 2], np.float32), np.array([2**14, 2**14], np.int64)]),
        ("Range", [np.array(0.0, np.float32), np.array(1e12, np.float32), np.array(1.0, np.float32)]),
    ],
)  # fmt: skip
def test_folding_does_not_materialize_declared_gigabytes(op, inputs):
    # Constant folding used to evaluate these with numpy before looking at the result's size:
    # 16 GiB allocated (and filled) at import for a few bytes of model.
    from webnn.onnx import folding

    names = [f"i{k}" for k in range(len(inputs))]
    node = helper.make_node(op, names, ["y"])
    assert folding.evaluate(node, inputs, {"": 17}, "") is None
    small = [np.minimum(v, 4).astype(v.dtype) for v in inputs]
    assert folding.evaluate(node, small, {"": 17}, "") is not None  # small ones still fold


def test_tile_with_a_million_folded_repeats_is_refused_without_multiplying_them_out():
    # Found by the fuzzer (a hang): constant folding bounded Tile's output by the exact product
    # of its repeats, here a folded Range(0, 2^20): a number of millions of digits.
    inits = [
        helper.make_tensor(k, TensorProto.INT64, [], [v])
        for k, v in (("start", 0), ("limit", 1 << 20), ("delta", 1))
    ]
    inits.append(helper.make_tensor("one", TensorProto.FLOAT, [1, 1], [1.0]))
    nodes = [
        helper.make_node("Range", ["start", "limit", "delta"], ["repeats"]),
        helper.make_node("Tile", ["one", "repeats"], ["y"]),
    ]
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    graph = helper.make_graph(nodes, "g", [], [y], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    ctx = webnn.ML().create_context(accelerated=False, backend="reference")
    with pytest.raises(webnn.onnx.OnnxImportError, match=r"Tile.*repetitions length 1048576"):
        webnn.onnx.load(ctx, model)
