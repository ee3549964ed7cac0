"""Graph files through the public API: MLGraphBuilder.save and MLContext.load_graph.

Covers every WPT graph saved and reloaded (bit-identical results), the api.md §14 worked
example, the format.md §11 example files (text, JSON, SafeTensors, manifest + .weights),
legacy forms, load/save errors and atomic writes. Re-saving a loaded graph byte for byte is
checked for every WPT graph by tests/cpp/format_test.cc (MLGraph has no save method).
"""

import contextlib
import hashlib
import io
import json
import os
import resource
import struct
import textwrap
from pathlib import Path

import numpy as np
import pytest
import webnn
from wpt_runner import build_case, load_cases

CASES = list(load_cases())
# Graphs the text format cannot express (api.md §9.7, format.md §5.2): an input name that is
# not an identifier; clamp bounds of +inf (min) / -inf (max) and NaN.
UNWRITABLE = {"add/10", "clamp/45", "clamp/46", "clamp/49", "clamp/50"}


@pytest.fixture(scope="module")
def ctx():
    return webnn.ML().create_context(accelerated=False, backend="cpu")


@pytest.fixture(scope="module")
def wpt_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("wpt_graphs")


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize(
    "case_id,case", [pytest.param(f"{op}/{i}", case, id=f"{op}/{i}") for op, i, case in CASES]
)
def test_wpt_graph_round_trip(ctx, wpt_dir, case_id, case):
    builder, outputs, feeds = build_case(ctx, case)
    path = wpt_dir / (case_id.replace("/", "_") + ".webnn")
    if case_id in UNWRITABLE:
        with pytest.raises(ValueError):
            builder.save(outputs, path)
        assert not path.exists()
        return
    builder.save(outputs, path)
    first = path.read_bytes()
    sidecar = path.with_suffix(".safetensors")
    weights = sidecar.read_bytes() if sidecar.exists() else None
    builder.save(outputs, str(path))  # deterministic, and save does not consume the builder
    assert path.read_bytes() == first
    assert (sidecar.read_bytes() if sidecar.exists() else None) == weights
    built = builder.build(outputs)
    loaded = ctx.load_graph(path)
    assert loaded.input_descriptors == built.input_descriptors
    assert loaded.output_descriptors == built.output_descriptors
    want, got = ctx.compute(built, feeds), ctx.compute(loaded, feeds)
    for name, array in want.items():
        assert got[name].dtype == array.dtype and got[name].shape == array.shape
        assert got[name].tobytes() == array.tobytes(), name


def test_every_wpt_case_is_covered():
    assert len(CASES) == 2227
    assert UNWRITABLE <= {f"{op}/{i}" for op, i, _ in CASES}


WORKED_EXAMPLE = """
import numpy as np, webnn

ctx = webnn.ML().create_context(accelerated=False)
b = ctx.create_graph_builder()
x = b.input("x", [{"name": "batch", "maxSize": 4}, 3], "float32")
w = b.constant(np.ones((3, 2), np.float32))
y = b.relu(b.matmul(x, w), label="act")
print(b.operand_shape(y))           # [{'name': 'batch', 'maxSize': 4}, 2]
b.save({"y": y}, "/tmp/m.webnn")   # /tmp/m.webnn + /tmp/m.safetensors
g = b.build({"y": y})               # b is now consumed
print(g.input_descriptors)          # {'x': {'shape': [{'name': 'batch', 'maxSize': 4}, 3], 'data_type': 'float32'}}

xt = ctx.create_tensor([4, 3], "float32", writable=True)
yt = ctx.create_tensor([4, 2], "float32", readable=True)
ctx.resize_tensor(xt, [2, 3]); ctx.resize_tensor(yt, [2, 2])
ctx.write_tensor(xt, np.arange(6).reshape(2, 3))   # adapted to float32
ctx.dispatch(g, {"x": xt}, {"y": yt})
print(ctx.read_tensor(yt))          # [[3. 3.] [12. 12.]]
"""


def test_worked_example_verbatim():
    out = io.StringIO()
    namespace = {}
    with contextlib.redirect_stdout(out):
        exec(WORKED_EXAMPLE, namespace)  # noqa: S102 - the spec's example, verbatim
    lines = out.getvalue().splitlines()
    assert lines[0] == "[{'name': 'batch', 'maxSize': 4}, 2]"
    assert (
        lines[1] == "{'x': {'shape': [{'name': 'batch', 'maxSize': 4}, 3], 'data_type': 'float32'}}"
    )
    assert lines[2:] == ["[[ 3.  3.]", " [12. 12.]]"]
    assert Path("/tmp/m.safetensors").exists()
    ctx, xt, yt = namespace["ctx"], namespace["xt"], namespace["yt"]
    g = ctx.load_graph("/tmp/m.webnn")
    assert g.input_descriptors == namespace["g"].input_descriptors
    assert g.output_descriptors == {
        "y": {"shape": [{"name": "batch", "maxSize": 4}, 2], "data_type": "float32"}
    }
    fresh = ctx.create_tensor([2, 2], "float32", readable=True)
    ctx.dispatch(g, {"x": xt}, {"y": fresh})
    np.testing.assert_array_equal(ctx.read_tensor(fresh), ctx.read_tensor(yt))
    text = Path("/tmp/m.webnn").read_text()
    assert 'y = relu(operand_2, label="act");' in text


# ---- hand-written files (format.md §11) ------------------------------------------------------


def write_safetensors(path, tensors, dtype_codes=None):
    """An independent SafeTensors writer: {key: ndarray} in order, contiguous, padded header."""
    codes = {"float32": "F32", "float16": "F16", "int32": "I32", "int64": "I64", "uint8": "U8"}
    header, offset, blobs = {}, 0, []
    for key, array in tensors.items():
        data = np.ascontiguousarray(array).tobytes()
        code = (dtype_codes or {}).get(key, codes[array.dtype.name])
        header[key] = {
            "dtype": code,
            "shape": list(array.shape),
            "data_offsets": [offset, offset + len(data)],
        }
        offset += len(data)
        blobs.append(data)
    text = json.dumps(header).encode()
    text += b" " * (-(8 + len(text)) % 8)
    Path(path).write_bytes(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def write(path, text):
    Path(path).write_text(textwrap.dedent(text).lstrip())


# format.md §11.1, shared with tests/cpp/format_test.cc.
TINY_MLP = (Path(__file__).parents[1] / "data" / "format" / "tiny_mlp.webnn").read_text()


def run(ctx, graph, feeds, shapes):
    """Dispatches with tensors of the given concrete shapes; returns {name: ndarray}."""
    ins, outs = {}, {}
    for name, value in feeds.items():
        desc = graph.input_descriptors[name]
        ins[name] = ctx.create_tensor(list(np.shape(value)), desc["data_type"], writable=True)
        ctx.write_tensor(ins[name], value)
    for name, desc in graph.output_descriptors.items():
        outs[name] = ctx.create_tensor(shapes[name], desc["data_type"], readable=True)
    ctx.dispatch(graph, ins, outs)
    return {name: ctx.read_tensor(t) for name, t in outs.items()}


def softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_tiny_mlp_with_safetensors(ctx, tmp_path):
    rng = np.random.default_rng(1)
    w1, b1, w2 = (rng.standard_normal(s).astype(np.float32) for s in ((4, 8), (8,), (8, 3)))
    write(tmp_path / "tiny_mlp.webnn", TINY_MLP)
    write_safetensors(tmp_path / "tiny_mlp.safetensors", {"w1": w1, "b1": b1, "w2": w2})
    g = ctx.load_graph(tmp_path / "tiny_mlp.webnn")
    assert g.output_descriptors == {
        "probs": {"shape": [{"name": "batch", "maxSize": 16}, 3], "data_type": "float32"}
    }
    x = rng.standard_normal((5, 4)).astype(np.float32)
    got = run(ctx, g, {"features": x}, {"probs": [5, 3]})["probs"]
    want = softmax(np.maximum(x @ w1 + b1, 0) @ w2 + 0.5)
    np.testing.assert_allclose(got, want, rtol=1e-5)
    # model.safetensors is looked for first (format.md §9.4).
    write_safetensors(tmp_path / "model.safetensors", {"w1": w1, "b1": b1, "w2": w2 * 0})
    got = run(ctx, ctx.load_graph(tmp_path / "tiny_mlp.webnn"), {"features": x}, {"probs": [5, 3]})
    np.testing.assert_allclose(got["probs"], np.full((5, 3), 1 / 3), rtol=1e-6)


def test_manifest_and_weights_blob(ctx, tmp_path):
    write(
        tmp_path / "edge.webnn",
        """
        webnn_graph "edge_detector" v2 {
          inputs {
            image: f32[1, 1, 28, 28];
          }

          consts {
            kernel: f32[4, 1, 3, 3] @weights("conv.kernel");
            kbias: f32[4] @weights("conv.bias");
            fc: f32[784, 10] @weights("fc.weight");
          }

          nodes {
            c = conv2d(image, kernel, padding=[1, 1, 1, 1], bias=kbias);
            r = clamp(c, minValue=0, maxValue=6);
            p = maxPool2d(r, windowDimensions=[2, 2], strides=[2, 2]);
            flat = reshape(p, newShape=[1, 784]);
            logits = matmul(flat, fc);
          }

          outputs { logits; }
        }
        """,
    )
    bias = np.array([1, 2, 3, 100], np.float32)
    kernel = np.zeros((4, 1, 3, 3), np.float32)
    fc = np.ones((784, 10), np.float32)
    tensors = {"conv.bias": bias, "conv.kernel": kernel, "fc.weight": fc}
    manifest, blob, offset = {}, [b"WGWT", struct.pack("<I", 1)], 8
    for key, array in tensors.items():
        data = array.tobytes()
        manifest[key] = {
            "dataType": "float32",
            "shape": list(array.shape),
            "byteOffset": offset,
            "byteLength": len(data),
            "layout": "row-major",
        }
        blob.append(data)
        offset += len(data)
    (tmp_path / "edge.weights").write_bytes(b"".join(blob))
    (tmp_path / "edge.manifest.json").write_text(
        json.dumps(
            {
                "format": "wg-weights-manifest",
                "version": 1,
                "endianness": "little",
                "tensors": manifest,
            }
        )
    )
    assert (tmp_path / "edge.weights").stat().st_size == 31528
    g = ctx.load_graph(str(tmp_path / "edge.webnn"))
    got = ctx.compute(g, {"image": np.zeros((1, 1, 28, 28), np.float32)})["logits"]
    # Per channel: bias clamped to [0, 6], 196 pooled values each, summed by the ones matrix.
    np.testing.assert_array_equal(got, np.full((1, 10), 196 * (1 + 2 + 3 + 6), np.float32))


# format.md §11.3, shared with tests/cpp/format_test.cc.
TOKEN_MIXER = (Path(__file__).parents[1] / "data" / "format" / "token_mixer.webnn").read_text()


def test_split_gather_where_without_sidecar(ctx, tmp_path):
    write(tmp_path / "mixer.webnn", TOKEN_MIXER)
    g = ctx.load_graph(tmp_path / "mixer.webnn")
    assert g.get_output_names() == ["picked", "total"]
    x = np.arange(12, dtype=np.float32).reshape(2, 6)
    mask = np.array([[1, 0, 1, 0, 1, 0], [0, 0, 0, 1, 1, 1]], np.uint8)
    out = ctx.compute(g, {"x": x, "mask": mask})
    swapped = np.concatenate([x[:, 3:], x[:, :3]], axis=1)
    np.testing.assert_array_equal(out["picked"], swapped[:, [2, 0, 5]])
    np.testing.assert_array_equal(out["total"], (swapped * mask).sum(axis=1, keepdims=True))


def test_lstm_and_dynamic_reshape(ctx, tmp_path):
    write(
        tmp_path / "seq.webnn",
        """
        webnn_graph "seq_encoder" v2 {
          inputs { seq: f32[5, 1, 3]; }
          consts { w: f32[1, 8, 3] @weights("w"); r: f32[1, 8, 2] @weights("r"); b: f32[1, 8] @weights("b"); }
          nodes {
            [h, c, all_h] = lstm(seq, w, r, steps=5, hiddenSize=2, bias=b, returnSequence=true);
          }
          outputs { h; all_h; }
        }
        """,
    )
    zeros = {"w": np.zeros((1, 8, 3), np.float32), "r": np.zeros((1, 8, 2), np.float32)}
    write_safetensors(tmp_path / "seq.safetensors", {**zeros, "b": np.zeros((1, 8), np.float32)})
    g = ctx.load_graph(tmp_path / "seq.webnn")
    assert g.output_descriptors["all_h"]["shape"] == [5, 1, 1, 2]
    assert g.output_descriptors["h"]["shape"] == [1, 1, 2]

    write(
        tmp_path / "heads.webnn",
        """
        webnn_graph "split_heads" v2 {
          inputs {
            q: f16[dyn("batch", 4), 16, 64];
          }

          nodes {
            q4 = reshape(q, newShape=[{"name": "batch", "maxSize": 4}, 16, 8, 8]);
            qt = transpose(q4, permutation=[0, 2, 1, 3]);
          }

          outputs { qt; }
        }
        """,
    )
    g = ctx.load_graph(tmp_path / "heads.webnn")
    assert g.output_descriptors["qt"]["shape"] == [{"name": "batch", "maxSize": 4}, 8, 16, 8]
    q = np.arange(2 * 16 * 64).astype(np.float16).reshape(2, 16, 64)
    got = run(ctx, g, {"q": q}, {"qt": [2, 8, 16, 8]})["qt"]
    np.testing.assert_array_equal(got, q.reshape(2, 16, 8, 8).transpose(0, 2, 1, 3))


def test_json_form(ctx, tmp_path):
    (tmp_path / "mixer.json").write_text(
        json.dumps(
            {
                "format": "webnn-graph-json",
                "version": 2,
                "name": "token_mixer",
                "inputs": {
                    "x": {"dataType": "float32", "shape": [2, 6]},
                    "mask": {"dataType": "uint8", "shape": [2, 6]},
                },
                "consts": {
                    "zero": {
                        "dataType": "float32",
                        "shape": [],
                        "init": {"kind": "scalar", "value": 0},
                    },
                    "w": {
                        "dataType": "float32",
                        "shape": [6],
                        "init": {"kind": "weights", "ref": "w.0"},
                    },
                },
                "nodes": [
                    {
                        "id": "left",
                        "op": "split",
                        "inputs": ["x"],
                        "options": {"splits": 2, "axis": 1},
                        "outputs": ["left", "right"],
                    },
                    {
                        "id": "swapped",
                        "op": "concat",
                        "inputs": ["right", "left"],
                        "options": {"axis": 1},
                    },
                    {"id": "scaled", "op": "mul", "inputs": ["swapped", "w"], "outputs": None},
                ],
                "outputs": {"swapped": "swapped", "logits": "scaled"},
            },
            indent=1,
        )
    )
    scale = np.arange(6, dtype=np.float32)
    # A sanitised key match: the stored name w_0 answers @weights("w.0") (format.md §9.4.5).
    write_safetensors(tmp_path / "mixer.safetensors", {"w_0": scale})
    g = ctx.load_graph(tmp_path / "mixer.json")
    assert g.get_output_names() == ["swapped", "logits"]
    x = np.arange(12, dtype=np.float32).reshape(2, 6)
    out = ctx.compute(g, {"x": x, "mask": np.zeros((2, 6), np.uint8)})
    swapped = np.concatenate([x[:, 3:], x[:, :3]], axis=1)
    np.testing.assert_array_equal(out["swapped"], swapped)
    np.testing.assert_array_equal(out["logits"], swapped * scale)


def test_legacy_forms(ctx, tmp_path):
    # Upstream writers: sorted declarations, every default printed, bias both positional and as
    # an integer operand index, snake_case keys, `::` in identifiers, 4-bit one value per byte.
    write(
        tmp_path / "model.webnn",
        """
        webnn_graph "legacy" v 1 {
          consts {
            bias: f32[2] @weights("bias");
            q: u4[3] @weights("q");
            w: f32[2, 1, 1, 1] @weights("w");
          }
          inputs {
            in::x: f32[1, 1, 2, 2];
          }
          nodes {
            c = conv2d(in::x, w, bias, bias=0, hasBias=true, groups=1, strides=[], dilations=[],
                       padding=[], label="");
            r = reshape(c, new_shape=[8]);
            qf = cast(q, dataType="float32");
          }
          outputs { qf; r; }
        }
        """,
    )
    tensors = {
        "bias": np.array([10, 20], np.float32),
        "q": np.array([1, 2, 15], np.uint8),
        "w": np.array([1, 2], np.float32).reshape(2, 1, 1, 1),
    }
    manifest, blob, offset = {}, [b"WGWT\x01\x00\x00\x00"], 8
    for key in sorted(tensors):
        data = tensors[key].tobytes()
        dtype = "uint4" if key == "q" else "float32"
        manifest[key] = {"dataType": dtype, "byteOffset": offset, "byteLength": len(data)}
        blob.append(data)
        offset += len(data)
    (tmp_path / "model.weights").write_bytes(b"".join(blob))
    (tmp_path / "manifest.json").write_text(json.dumps({"tensors": manifest}))
    g = ctx.load_graph(tmp_path / "model.webnn")
    assert g.input_descriptors == {"in__x": {"shape": [1, 1, 2, 2], "data_type": "float32"}}
    out = ctx.compute(g, {"in__x": np.array([[[[1, 2], [3, 4]]]], np.float32)})
    np.testing.assert_array_equal(out["qf"], [1, 2, 15])
    np.testing.assert_array_equal(out["r"], [11, 12, 13, 14, 22, 24, 26, 28])


# ---- errors ---------------------------------------------------------------------------------

GOOD = """
    webnn_graph "g" v2 {
      inputs { x: f32[2]; }
      consts { w: f32[2] @weights("w"); }
      nodes { y = add(x, w); }
      outputs { y; }
    }
"""


def test_load_errors(ctx, tmp_path):
    with pytest.raises(FileNotFoundError):
        ctx.load_graph(tmp_path / "missing.webnn")
    with pytest.raises(TypeError):
        ctx.load_graph(42)
    path = tmp_path / "g.webnn"
    write(path, GOOD.replace("add(x, w);", "add(x, w;"))
    with pytest.raises(OSError, match=r"g\.webnn:4:23: expected ',' or '\)'"):
        ctx.load_graph(path)
    write(path, GOOD.replace("add(", "addd(").replace('@weights("w")', "@scalar(1)"))
    with pytest.raises(OSError, match=r"g\.webnn:4:15: unknown operation 'addd'"):
        ctx.load_graph(path)
    write(path, GOOD)
    with pytest.raises(OSError, match="no weights file found"):
        ctx.load_graph(path)
    write_safetensors(tmp_path / "g.safetensors", {"w": np.zeros(3, np.float32)})
    with pytest.raises(OSError, match=r"weights 'w'.*shape \[3\] differs"):
        ctx.load_graph(path)
    write_safetensors(tmp_path / "g.safetensors", {"w": np.zeros(2, np.int32)})
    with pytest.raises(OSError, match="weights 'w'.*dtype I32 does not match"):
        ctx.load_graph(path)
    write_safetensors(tmp_path / "g.safetensors", {"w": np.zeros(2, np.float32)}, {"w": "F16"})
    with pytest.raises(OSError, match='tensor "w": 8 bytes do not match dtype F16'):
        ctx.load_graph(path)
    write_safetensors(tmp_path / "g.safetensors", {"v": np.zeros(2, np.float32)})
    with pytest.raises(OSError, match="weights 'w' not found"):
        ctx.load_graph(path)
    # Validation of ops.md applies to loaded graphs too, reported as OSError at the statement.
    write(
        path, GOOD.replace("add(x, w)", "softmax(x, axis=3)").replace('@weights("w")', "@scalar(1)")
    )
    with pytest.raises(OSError, match=r"g\.webnn:4:11: softmax"):
        ctx.load_graph(path)
    path.write_bytes(b'webnn_graph "g" v2 {\n  # \xff\n}')
    with pytest.raises(OSError, match=r"g\.webnn:2:5: invalid UTF-8"):
        ctx.load_graph(path)


def test_save_errors_and_names(ctx, tmp_path):
    b = ctx.create_graph_builder()
    x = b.input("x", [2], "float32")
    y = b.relu(x)
    with pytest.raises(FileNotFoundError):
        b.save({"y": y}, tmp_path / "nope" / "g.webnn")
    with pytest.raises(TypeError):
        b.save({"y": y}, 3)
    with pytest.raises(TypeError):
        b.save([y], tmp_path / "g.webnn")
    for bad in ({"x": y}, {"null": y}, {"bad-name": y}, {"": y}):
        with pytest.raises(ValueError):
            b.save(bad, tmp_path / "g.webnn")
    with pytest.raises(ValueError):
        b.save({"y": b.leaky_relu(x, alpha=float("nan"))}, tmp_path / "g.webnn")
    with pytest.raises(ValueError):
        b.save({"y": x}, tmp_path / "g.webnn")  # an input is not an operation result
    assert list(tmp_path.iterdir()) == []
    # Repeated outputs: the second name is an identity of the first (api.md §9.7).
    b.save({"y": y, "z": y}, tmp_path / "g.webnn")
    text = (tmp_path / "g.webnn").read_text()
    assert text.endswith("    y = relu(x);\n    z = identity(y);\n  }\n\n  outputs { y; z; }\n}\n")
    assert not (tmp_path / "g.safetensors").exists()  # no constants, no sidecar
    g = ctx.load_graph(tmp_path / "g.webnn")
    out = ctx.compute(g, {"x": np.array([-1, 2], np.float32)})
    np.testing.assert_array_equal(out["z"], [0, 2])
    # 4-bit constants go inline; the builder stays usable after save.
    q = b.constant([1, -2, 7], data_type="int4")
    b.save({"q": b.cast(q, "float32")}, tmp_path / "q.webnn")
    assert "@bytes([225, 7])" in (tmp_path / "q.webnn").read_text()
    np.testing.assert_array_equal(
        ctx.compute(ctx.load_graph(tmp_path / "q.webnn"), {})["q"], [1, -2, 7]
    )
    b.build({"y": y})
    with pytest.raises(RuntimeError, match="already"):
        b.save({"y": y}, tmp_path / "g.webnn")


def test_safetensors_sidecar_layout(ctx, tmp_path):
    b = ctx.create_graph_builder()
    x = b.input("x", [3], "float16")
    c1 = b.constant(np.array([1, 2, 3], np.float16))
    c2 = b.constant(np.array([4, 5, 6], np.int64))
    b.save({"y": b.add(x, c1), "z": b.cast(c2, "float16")}, tmp_path / "s.webnn")
    raw = (tmp_path / "s.safetensors").read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    assert (8 + n) % 8 == 0
    header = json.loads(raw[8 : 8 + n])
    data = raw[8 + n :]
    # The digest that pairs the sidecar with its graph (docs/text_format.md, weights record).
    digest = hashlib.sha256(data).hexdigest()
    assert header["__metadata__"] == {"format": "pt", "webnn.sha256": digest}
    record = f"# webnn-weights: bytes={len(raw)} sha256={digest}"
    assert (tmp_path / "s.webnn").read_text().splitlines()[0] == record
    assert header["operand_1"] == {"dtype": "F16", "shape": [3], "data_offsets": [0, 6]}
    assert header["operand_2"] == {"dtype": "I64", "shape": [3], "data_offsets": [6, 30]}
    np.testing.assert_array_equal(np.frombuffer(data[6:30], np.int64), [4, 5, 6])


def _listing(directory):
    return sorted((p.name, p.read_bytes() if p.is_file() else None) for p in directory.iterdir())


def test_failed_save_leaves_no_partial_or_temp_file(ctx, tmp_path):
    b = ctx.create_graph_builder()
    x = b.input("x", [256, 1024], "float32")
    y = b.add(x, b.constant(np.ones((256, 1024), np.float32)))
    b.save({"y": y}, tmp_path / "m.webnn")
    before = _listing(tmp_path)
    # A write that fails halfway (file size limit: EFBIG, SIGXFSZ is ignored by Python).
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, hard))
    try:
        with pytest.raises(OSError):
            b.save({"y": b.relu(y)}, tmp_path / "m.webnn")
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    assert _listing(tmp_path) == before
    # The sidecar's place is taken by a directory: nothing is written at all.
    (tmp_path / "n.safetensors").mkdir()
    with pytest.raises(OSError):
        b.save({"y": y}, tmp_path / "n.webnn")
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "m.safetensors",
        "m.webnn",
        "n.safetensors",
    ]
    # A graph file path that is a directory.
    (tmp_path / "d.webnn").mkdir()
    with pytest.raises(OSError, match="is a directory"):
        b.save({"y": y}, tmp_path / "d.webnn")
    assert os.listdir(tmp_path / "d.webnn") == []
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "d.webnn",
        "m.safetensors",
        "m.webnn",
        "n.safetensors",
    ]


def test_operations_outside_wpt_round_trip(ctx, tmp_path):
    """RustNN extensions, compat extras and options WPT does not exercise."""
    b = ctx.create_graph_builder()
    x = b.input("x", [1, 3, 4, 4], "float32")
    i = b.input("i", [2], "int64")
    outs = {
        "gap": b.global_average_pool(x),
        "gmp": b.global_max_pool(x, layout="nchw"),
        "sq": b.squeeze(b.reshape(x, [1, 3, 16, 1]), axes=[3]),
        "usq": b.unsqueeze(x, axes=[0]),
        "shp": b.shape(x),
        "hs": b.hard_swish(x, alpha=0.25, beta=0.75),
        "pad": b.pad(x, [0, 0, 1, 1], [0, 0, 1, 1], mode="reflection"),
        "rs": b.resample2d(x, scales=[2.0, 2.0], mode="linear"),
        "big": b.clamp(i, min_value=-(2**63), max_value=2**53 + 1),
    }
    b.save(outs, tmp_path / "e.webnn")
    text = (tmp_path / "e.webnn").read_text()
    assert "hs = hardSwish(x, alpha=0.25, beta=0.75);" in text
    assert 'rs = resample2d(x, mode="linear", scales=[2.0, 2.0]);' in text
    assert "big = clamp(i, minValue=-9223372036854775808, maxValue=9007199254740993);" in text
    feeds = {
        "x": np.random.default_rng(0).standard_normal((1, 3, 4, 4)).astype(np.float32),
        "i": np.array([2**53 + 3, -5], np.int64),
    }
    want = ctx.compute(b.build(outs), feeds)
    got = ctx.compute(ctx.load_graph(tmp_path / "e.webnn"), feeds)
    for name, array in want.items():
        assert got[name].tobytes() == array.tobytes(), name
    assert got["big"].tolist() == [2**53 + 1, -5]
