"""webnn.onnx API: load/convert, model sources, external data, dimensions, errors, CLI."""

import os
import re
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import webnn
import webnn.onnx as wo
from onnx import TensorProto as T
from onnx import helper, numpy_helper
from webnn import cli
from webnn.onnx.convert import read_name_map

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def ctx():
    return webnn.ML().create_context(accelerated=False, backend="cpu")


def model(nodes, inputs, outputs, inits=(), opset=17, ir=None):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    if ir is not None:
        m.ir_version = ir
    return m


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def ort_run(m, feeds):
    s = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in s.get_outputs()], s.run(None, feeds)))


def linear_model(weight):
    return model(
        [helper.make_node("MatMul", ["x", "w"], ["y"]), helper.make_node("Relu", ["y"], ["out"])],
        [vi("x", T.FLOAT, ["batch", 3])],
        [vi("out", T.FLOAT, ["batch", 2])],
        [numpy_helper.from_array(weight, "w")],
    )


W = np.array([[1.0, -2.0], [0.5, 1.0], [-1.0, 3.0]], np.float32)
X = np.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 0.25]], np.float32)
EXPECTED = np.maximum(X @ W, 0)


@pytest.mark.parametrize("source", ["path", "bytes", "proto"])
def test_load_sources_keep_names(ctx, tmp_path, source):
    m = linear_model(W)
    path = tmp_path / "m.onnx"
    onnx.save(m, str(path))
    given = {"path": str(path), "bytes": path.read_bytes(), "proto": m}[source]
    g = wo.load(ctx, given, free_dims={"batch": 2})
    assert g.get_input_names() == ["x"] and g.get_output_names() == ["out"]
    np.testing.assert_allclose(ctx.compute(g, {"x": X})["out"], EXPECTED, rtol=1e-6)


def test_initializers_listed_as_inputs_are_weights(ctx):
    m = linear_model(W)
    m.graph.input.append(vi("w", T.FLOAT, [3, 2]))  # IR < 4 style
    g = wo.load(ctx, m, input_shapes={"x": [2, 3]})
    assert g.get_input_names() == ["x"]
    np.testing.assert_allclose(ctx.compute(g, {"x": X})["out"], EXPECTED, rtol=1e-6)


def _external_model(directory, location):
    m = linear_model(W)
    tensor = m.graph.initializer[0]
    tensor.ClearField("float_data")
    tensor.ClearField("raw_data")
    tensor.data_location = T.EXTERNAL
    for key, value in {"location": location, "offset": "16", "length": str(W.nbytes)}.items():
        entry = tensor.external_data.add()
        entry.key, entry.value = key, value
    return m


def test_external_data_through_a_symlink(ctx, tmp_path):
    """A Hugging Face-style snapshot: the weights file is a symlink into ../../blobs."""
    blobs = tmp_path / "blobs"
    snapshot = tmp_path / "snapshots" / "abc"
    blobs.mkdir()
    snapshot.mkdir(parents=True)
    (blobs / "0123").write_bytes(b"\0" * 16 + W.tobytes())
    os.symlink("../../blobs/0123", snapshot / "weights.bin")
    m = _external_model(snapshot, "weights.bin")
    onnx.save(m, str(snapshot / "model.onnx"))
    g = wo.load(ctx, str(snapshot / "model.onnx"), free_dims={"batch": 2})
    np.testing.assert_allclose(ctx.compute(g, {"x": X})["out"], EXPECTED, rtol=1e-6)
    # bytes need base_dir to find the file
    with pytest.raises(wo.OnnxImportError, match="base_dir"):
        wo.load(ctx, m.SerializeToString(), free_dims={"batch": 2})
    g = wo.load(ctx, m.SerializeToString(), free_dims={"batch": 2}, base_dir=snapshot)
    np.testing.assert_allclose(ctx.compute(g, {"x": X})["out"], EXPECTED, rtol=1e-6)


@pytest.mark.parametrize("location", ["/etc/passwd", "../outside.bin", "sub/../../x.bin"])
def test_external_data_location_cannot_escape(ctx, tmp_path, location):
    m = _external_model(tmp_path, location)
    with pytest.raises(wo.OnnxImportError, match="initializer 'w'.*(absolute|leaves)"):
        wo.load(ctx, m, free_dims={"batch": 2}, base_dir=tmp_path)


def test_external_data_too_short(ctx, tmp_path):
    (tmp_path / "weights.bin").write_bytes(b"\0" * 20)
    m = _external_model(tmp_path, "weights.bin")
    with pytest.raises(wo.OnnxImportError, match="too short"):
        wo.load(ctx, m, free_dims={"batch": 2}, base_dir=tmp_path)


def test_free_dimension_errors_name_input_and_axis(ctx):
    with pytest.raises(wo.OnnxImportError, match=r"input 'x' axis 0 .*'batch'"):
        wo.load(ctx, linear_model(W))
    m = linear_model(W)
    m.graph.input[0].type.tensor_type.shape.dim[0].Clear()  # an unnamed dim
    with pytest.raises(wo.OnnxImportError, match=r"input 'x' axis 0 is a free \(unnamed\)"):
        wo.load(ctx, m)
    with pytest.raises(wo.OnnxImportError, match="rank"):
        wo.load(ctx, linear_model(W), input_shapes={"x": [2, 3, 1]})
    with pytest.raises(wo.OnnxImportError, match="not a graph input"):
        wo.load(ctx, linear_model(W), input_shapes={"nope": [1]}, free_dims={"batch": 1})


def test_max_sizes_make_a_dynamic_dimension(ctx):
    g = wo.load(ctx, linear_model(W), max_sizes={"batch": 8})
    assert g.input_descriptors["x"]["shape"][0] == {"name": "batch", "maxSize": 8}
    for rows in (1, 2):
        x = ctx.create_tensor([rows, 3], "float32", writable=True)
        ctx.write_tensor(x, X[:rows])
        y = ctx.create_tensor([rows, 2], "float32", readable=True)
        ctx.dispatch(g, {"x": x}, {"out": y})
        np.testing.assert_allclose(ctx.read_tensor(y), EXPECTED[:rows], rtol=1e-6)


def test_constants_fold_an_if(ctx):
    """constants= turns an input into a constant, so an If on it inlines one branch."""
    then_g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"])], "then", [], [vi("r", T.FLOAT, [3])]
    )
    else_g = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["r2"])], "else", [], [vi("r2", T.FLOAT, [3])]
    )
    m = model(
        [
            helper.make_node("Equal", ["sr", "k"], ["c"]),
            helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g),
        ],
        [vi("x", T.FLOAT, [3]), vi("sr", T.INT64, [])],
        [vi("y", T.FLOAT, [3])],
        [numpy_helper.from_array(np.array(16000, np.int64), "k")],
    )
    x = np.array([-1.0, 0.5, 2.0], np.float32)
    for sr in (16000, 8000):
        g = wo.load(ctx, m, constants={"sr": sr})
        assert g.get_input_names() == ["x"]
        want = ort_run(m, {"x": x, "sr": np.array(sr, np.int64)})["y"]
        np.testing.assert_array_equal(ctx.compute(g, {"x": x})["y"], want)
    # with sr at run time, both branches are imported and selected with where
    g = wo.load(ctx, m)
    got = ctx.compute(g, {"x": x, "sr": np.array(8000, np.int64)})["y"]
    np.testing.assert_array_equal(got, -x)


def test_one_error_lists_every_unsupported_operator(ctx):
    m = model(
        [
            helper.make_node("Relu", ["x"], ["a"]),
            helper.make_node("FancyOp", ["a"], ["b"], domain="example.org"),
            helper.make_node("FancyOp", ["b"], ["c"], domain="example.org"),
            helper.make_node("ImageDecoder", ["c"], ["y"]),
        ],
        [vi("x", T.FLOAT, [3])],
        [vi("y", T.FLOAT, [3])],
    )
    m.opset_import.append(helper.make_opsetid("example.org", 3))
    with pytest.raises(wo.OnnxImportError) as info:
        wo.load(ctx, m)
    text = str(info.value)
    assert "2 operators" in text
    assert "example.org::FancyOp (opset 3): 2 nodes" in text
    assert "ai.onnx::ImageDecoder (opset 17): 1 node" in text
    assert info.value.unsupported == (
        ("ai.onnx", "ImageDecoder", 17, 1),
        ("example.org", "FancyOp", 3, 2),
    )
    assert isinstance(info.value, ValueError)


def test_conversion_error_names_node_op_opset_and_reason(ctx):
    m = model(
        [helper.make_node("Conv", ["x", "w"], ["y"], name="conv4d_stem")],
        [vi("x", T.FLOAT, [1, 1, 3, 3, 3, 3])],
        [vi("y", T.FLOAT, None)],
        [numpy_helper.from_array(np.ones((1, 1, 2, 2, 2, 2), np.float32), "w")],
    )
    with pytest.raises(
        wo.OnnxImportError, match=r"'conv4d_stem' \(ai.onnx::Conv, opset 17\).*rank 6"
    ):
        wo.load(ctx, m)


def test_runtime_value_where_a_constant_is_needed(ctx):
    m = model(
        [helper.make_node("Reshape", ["x", "s"], ["y"])],
        [vi("x", T.FLOAT, [2, 3]), vi("s", T.INT64, [2])],
        [vi("y", T.FLOAT, None)],
    )
    with pytest.raises(wo.OnnxImportError, match="input 1 \\('s'.*known at import") as info:
        wo.load(ctx, m)
    assert info.value.needs_constant == "s"
    g = wo.load(ctx, m, constants={"s": np.array([3, 2], np.int64)})
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(ctx.compute(g, {"x": x})["y"], x.reshape(3, 2))


def _awkward_names_model():
    return model(
        [
            helper.make_node("Relu", ["input.1"], ["onnx::Shape_422"]),
            helper.make_node("Neg", ["onnx::Shape_422"], ["463"]),
        ],
        [vi("input.1", T.FLOAT, [2, 3])],
        [vi("onnx::Shape_422", T.FLOAT, [2, 3]), vi("463", T.FLOAT, [2, 3])],
    )


def test_convert_maps_names_and_records_them(ctx, tmp_path):
    m = _awkward_names_model()
    path = tmp_path / "m.webnn"
    renamed = wo.convert(m, path)
    assert renamed == {"463": "_463", "onnx::Shape_422": "onnx__Shape_422"}
    assert read_name_map(path) == renamed
    g = ctx.load_graph(path)
    assert sorted(g.get_output_names()) == ["_463", "onnx__Shape_422"]
    x = np.array([[-1, 2, -3], [4, -5, 6]], np.float32)
    got = ctx.compute(g, {"input.1": x})
    want = ort_run(m, {"input.1": x})
    np.testing.assert_array_equal(got["_463"], want["463"])
    np.testing.assert_array_equal(got["onnx__Shape_422"], want["onnx::Shape_422"])
    # deterministic: the same file twice
    wo.convert(m, tmp_path / "again.webnn")
    assert (tmp_path / "again.webnn").read_text() == path.read_text()


def test_convert_keeps_the_weights_record_first(ctx, tmp_path):
    # The name map must not push the weights record off the first line, where the loader
    # verifies that the sidecar is the one saved with the graph.
    w = numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3), "w")
    m = model(
        [helper.make_node("Add", ["input.1", "w"], ["463"])],
        [vi("input.1", T.FLOAT, [2, 3])],
        [vi("463", T.FLOAT, [2, 3])],
        [w],
    )
    path = tmp_path / "m.webnn"
    assert wo.convert(m, path) == {"463": "_463"}
    lines = path.read_text().splitlines()
    assert lines[0].startswith("# webnn-weights: bytes=")
    assert read_name_map(path) == {"463": "_463"}
    x = np.ones((2, 3), np.float32)
    np.testing.assert_array_equal(
        ctx.compute(ctx.load_graph(path), {"input.1": x})["_463"], ort_run(m, {"input.1": x})["463"]
    )
    other = tmp_path / "other.webnn"
    wo.convert(
        model(
            [helper.make_node("Add", ["input.1", "w"], ["463"])],
            [vi("input.1", T.FLOAT, [2, 3])],
            [vi("463", T.FLOAT, [2, 3])],
            [numpy_helper.from_array(np.zeros((2, 3), np.float32), "w")],
        ),
        other,
    )
    sidecars = sorted(p.name for p in tmp_path.iterdir() if p.suffix != ".webnn")
    assert sidecars, "convert wrote no weights file"
    for name in sidecars:
        if name.startswith("other"):
            os.replace(tmp_path / name, tmp_path / name.replace("other", "m", 1))
    with pytest.raises(OSError, match="is not the weights file saved with"):
        ctx.load_graph(path)


def test_cli_convert(ctx, tmp_path, capsys):
    onnx.save(linear_model(W), str(tmp_path / "m.onnx"))
    out = tmp_path / "m.webnn"
    assert cli.main(["convert", str(tmp_path / "m.onnx"), "-o", str(out), "--dim", "batch=2"]) == 0
    assert "wrote" in capsys.readouterr().out
    g = ctx.load_graph(out)
    np.testing.assert_allclose(ctx.compute(g, {"x": X})["out"], EXPECTED, rtol=1e-6)
    # an unresolved dimension is a clean CLI error
    assert cli.main(["convert", str(tmp_path / "m.onnx"), "-o", str(out)]) == 1
    assert "batch" in capsys.readouterr().err


def test_imported_model_describes_inputs_outputs_and_metadata():
    m = _awkward_names_model()
    m.producer_name = "unit-test"
    entry = m.metadata_props.add()
    entry.key, entry.value = "character", "a\nb"
    b = webnn.ML().create_context(backend="cpu").create_graph_builder()
    im = wo.import_model(b, m)
    assert [(i.name, i.onnx_type, i.shape) for i in im.inputs] == [
        ("input.1", "tensor(float)", [2, 3])
    ]
    assert [o.name for o in im.outputs] == ["onnx::Shape_422", "463"]
    assert im.metadata.custom_metadata_map == {"character": "a\nb"}
    assert im.metadata.producer_name == "unit-test"
    assert im.opsets == {"": 17}


def _binary_case(op_type, a, b, **attrs):
    m = model(
        [helper.make_node(op_type, ["a", "b"], ["y"], **attrs)],
        [vi("a", T.INT32, list(a.shape)), vi("b", T.INT32, list(b.shape))],
        [vi("y", T.INT32, None)],
    )
    return m, {"a": a, "b": b}


@pytest.mark.parametrize("op_type,attrs", [("Div", {}), ("Mod", {}), ("Mod", {"fmod": 1})])
def test_integer_division_follows_onnx(ctx, op_type, attrs):
    a = np.array([7, -7, 7, -7, 0, 123456, -5, 9], np.int32)
    b = np.array([2, 2, -2, -2, 3, -7, 5, 3], np.int32)
    m, feeds = _binary_case(op_type, a, b, **attrs)
    got = ctx.compute(wo.load(ctx, m), feeds)["y"]
    np.testing.assert_array_equal(got, ort_run(m, feeds)["y"])


@pytest.mark.parametrize(
    "coord,mode,nearest,scales",
    [
        ("asymmetric", "nearest", "floor", [1, 1, 2, 2]),
        ("half_pixel", "linear", "round_prefer_floor", [1, 1, 1.7, 0.6]),
        ("align_corners", "linear", "round_prefer_floor", [1, 1, 2.5, 1.5]),
        ("pytorch_half_pixel", "cubic", "round_prefer_floor", [1, 1, 1.5, 2]),
        ("half_pixel", "nearest", "round_prefer_ceil", [1, 1, 0.5, 3]),
    ],
)
def test_resize_modes_match_onnxruntime(ctx, coord, mode, nearest, scales):
    m = model(
        [
            helper.make_node(
                "Resize",
                ["x", "", "scales"],
                ["y"],
                mode=mode,
                coordinate_transformation_mode=coord,
                nearest_mode=nearest,
            )
        ],
        [vi("x", T.FLOAT, [1, 2, 6, 5])],
        [vi("y", T.FLOAT, None)],
        [numpy_helper.from_array(np.array(scales, np.float32), "scales")],
        opset=19,
    )
    x = np.random.default_rng(1).standard_normal((1, 2, 6, 5)).astype(np.float32)
    got = ctx.compute(wo.load(ctx, m), {"x": x})["y"]
    np.testing.assert_allclose(got, ort_run(m, {"x": x})["y"], rtol=1e-5, atol=1e-6)


def test_docs_list_every_converter():
    """docs/onnx.md's operator list is the converter table (regenerate: python -m
    webnn.onnx.oplist docs/onnx.md)."""
    from webnn.onnx import oplist

    text = (ROOT / "docs" / "onnx.md").read_text()
    section = re.search(
        re.escape(oplist.BEGIN) + r"\n(.*?)" + re.escape(oplist.END), text, re.DOTALL
    ).group(1)
    assert section == oplist.markdown()


def test_convert_with_infinite_pad_value_and_clip_bound(ctx, tmp_path):
    """-inf cannot be written as a .webnn option: the importer expresses it with constants."""
    m = model(
        [
            helper.make_node("Clip", ["x", "lo", "hi"], ["c"]),
            helper.make_node("Pad", ["c", "p", "v"], ["y"]),
        ],
        [vi("x", T.FLOAT, [2, 3])],
        [vi("y", T.FLOAT, None)],
        [
            numpy_helper.from_array(np.array(-np.inf, np.float32), "lo"),
            numpy_helper.from_array(np.array(1.0, np.float32), "hi"),
            numpy_helper.from_array(np.array([0, 1, 0, 1], np.int64), "p"),
            numpy_helper.from_array(np.array(-np.inf, np.float32), "v"),
        ],
    )
    wo.convert(m, tmp_path / "inf.webnn")
    x = np.arange(6, dtype=np.float32).reshape(2, 3) - 2
    got = ctx.compute(ctx.load_graph(tmp_path / "inf.webnn"), {"x": x})["y"]
    np.testing.assert_array_equal(got, ort_run(m, {"x": x})["y"])


def test_model_local_functions_are_inlined(ctx):
    """torch.onnx's exporter can emit model-local functions (one per module)."""
    body = helper.make_function(
        "example.modules",
        "ScaledRelu",
        ["X", "S"],
        ["Y"],
        [helper.make_node("Relu", ["X"], ["R"]), helper.make_node("Mul", ["R", "S"], ["Y"])],
        [helper.make_opsetid("", 17)],
    )
    m = model(
        [helper.make_node("ScaledRelu", ["x", "s"], ["y"], domain="example.modules")],
        [vi("x", T.FLOAT, [4])],
        [vi("y", T.FLOAT, [4])],
        [numpy_helper.from_array(np.array(3.0, np.float32), "s")],
    )
    m.opset_import.append(helper.make_opsetid("example.modules", 1))
    m.functions.append(body)
    x = np.array([-1.0, 0.5, 2.0, -3.0], np.float32)
    got = ctx.compute(wo.load(ctx, m), {"x": x})["y"]
    np.testing.assert_array_equal(got, ort_run(m, {"x": x})["y"])


@pytest.mark.parametrize("scales", [[1, 1, 0.5, 0.6], [1, 1, 2, 3]])
@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_resize_opset10_matches_onnxruntime(ctx, scales, mode):
    """Resize-10 (like Upsample): asymmetric coordinates; nearest floors when enlarging and
    rounds up when shrinking, as ONNX Runtime does."""
    m = model(
        [helper.make_node("Resize", ["x", "s"], ["y"], mode=mode)],
        [vi("x", T.FLOAT, [1, 1, 5, 7])],
        [vi("y", T.FLOAT, None)],
        [numpy_helper.from_array(np.array(scales, np.float32), "s")],
        opset=10,
    )
    x = np.random.default_rng(2).random((1, 1, 5, 7), dtype=np.float32)
    got = ctx.compute(wo.load(ctx, m), {"x": x})["y"]
    np.testing.assert_allclose(got, ort_run(m, {"x": x})["y"], rtol=1e-6, atol=1e-6)
