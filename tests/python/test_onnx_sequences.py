"""ONNX sequence and optional values (held at import) against ONNX Runtime.

Models are built with onnx.helper in the forms torch exports and the ONNX operators define;
each is run by ONNX Runtime and by webnn.onnx.InferenceSession on the same feeds, and the
values (lists for sequences, None for an empty optional) compared.
"""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import webnn
import webnn.onnx as wo
from onnx import TensorProto as T
from onnx import helper as h

RNG = np.random.default_rng(7)


def _model(nodes, inputs, outputs, initializers=(), opset=17):
    graph = h.make_graph(nodes, "g", inputs, outputs, list(initializers))
    return h.make_model(graph, opset_imports=[h.make_opsetid("", opset)]).SerializeToString()


def _i64(name, value):
    value = np.asarray(value, np.int64)
    return h.make_tensor(name, T.INT64, list(value.shape), value.reshape(-1).tolist())


def _same(have, want, name="output"):
    if want is None or isinstance(want, list):
        assert type(have) is type(want), f"{name}: got {have!r}, ORT {want!r}"
        if want is not None:
            assert len(have) == len(want), name
            for i, (a, b) in enumerate(zip(have, want)):
                _same(a, b, f"{name}[{i}]")
        return
    assert have.dtype == want.dtype, f"{name}: {have.dtype} vs {want.dtype}"
    assert have.shape == want.shape, f"{name}: {have.shape} vs {want.shape}"
    np.testing.assert_allclose(have, want, rtol=1e-5, atol=1e-6, err_msg=name)


def _against_ort(model, feeds, session=None):
    want = ort.InferenceSession(model).run(None, feeds)
    session = session or wo.InferenceSession(model)
    have = session.run(None, feeds)
    assert len(have) == len(want)
    for i, (a, b) in enumerate(zip(have, want)):
        _same(a, b, f"output {i}")
    return have


def test_split_map_concat_as_torch_exports():
    """torch.split -> per-element op -> torch.cat / torch.stack: SplitToSequence, SequenceAt
    per element, SequenceConstruct, ConcatFromSequence (concat and new_axis stack)."""
    nodes = [
        h.make_node("SplitToSequence", ["x", "sizes"], ["parts"], axis=1),
        h.make_node("SequenceLength", ["parts"], ["count"]),
    ]
    outs = []
    for i in range(3):
        nodes += [
            h.make_node("SequenceAt", ["parts", f"i{i}"], [f"p{i}"]),
            h.make_node("Mul", [f"p{i}", f"p{i}"], [f"q{i}"]),
        ]
        outs.append(f"q{i}")
    nodes += [
        h.make_node("SequenceConstruct", outs, ["squares"]),
        h.make_node("ConcatFromSequence", ["squares"], ["cat"], axis=-1),
        h.make_node("SplitToSequence", ["x"], ["rows"], axis=0, keepdims=0),
        h.make_node("ConcatFromSequence", ["rows"], ["stacked"], axis=1, new_axis=1),
    ]
    inits = [_i64("sizes", [1, 3, 2])] + [_i64(f"i{i}", i) for i in range(3)]
    model = _model(
        nodes,
        [h.make_tensor_value_info("x", T.FLOAT, [2, 6])],
        [
            h.make_tensor_value_info("cat", T.FLOAT, None),
            h.make_tensor_value_info("stacked", T.FLOAT, None),
            h.make_tensor_value_info("count", T.INT64, None),
        ],
        inits,
    )
    x = RNG.standard_normal((2, 6)).astype(np.float32)
    have = _against_ort(model, {"x": x})
    np.testing.assert_allclose(have[0], x * x, rtol=1e-6)  # and independently of ORT
    np.testing.assert_array_equal(have[1], x.T)


def test_insert_erase_at_with_negative_positions():
    nodes = [
        h.make_node("SequenceInsert", ["seq", "t", "minus1"], ["s1"]),  # before the last
        h.make_node("SequenceInsert", ["s1", "t"], ["s2"]),  # appended
        h.make_node("SequenceErase", ["s2", "minus3"], ["s3"]),
        h.make_node("SequenceErase", ["s3"], ["s4"]),  # the last
        h.make_node("SequenceAt", ["s4", "minus2"], ["at"]),
        h.make_node("SequenceLength", ["s4"], ["n"]),
    ]
    model = _model(
        nodes,
        [
            h.make_tensor_sequence_value_info("seq", T.FLOAT, None),
            h.make_tensor_value_info("t", T.FLOAT, [2]),
        ],
        [
            h.make_tensor_sequence_value_info("s4", T.FLOAT, None),
            h.make_tensor_value_info("at", T.FLOAT, None),
            h.make_tensor_value_info("n", T.INT64, None),
        ],
        [_i64("minus1", -1), _i64("minus2", -2), _i64("minus3", -3)],
    )
    session = wo.InferenceSession(model)
    for length in (3, 4):  # two lengths: two graphs in one session
        seq = [RNG.standard_normal(2 + k).astype(np.float32) for k in range(length)]
        t = RNG.standard_normal(2).astype(np.float32)
        _against_ort(model, {"seq": seq, "t": t}, session)
    assert session.import_count == 2
    assert [a.type for a in session.get_inputs()] == ["seq(tensor(float))", "tensor(float)"]
    assert session.get_outputs()[0].type == "seq(tensor(float))"


def test_empty_sequence_and_loop_that_appends():
    """A Loop carrying a sequence that starts empty and grows each iteration (torch's list
    append in a loop), then stacked."""
    body = h.make_graph(
        [
            h.make_node("Cast", ["i"], ["fi"], to=T.FLOAT),
            h.make_node("Mul", ["x", "fi"], ["scaled"]),
            h.make_node("SequenceInsert", ["acc", "scaled"], ["acc_out"]),
            h.make_node("Identity", ["cond"], ["cond_out"]),
        ],
        "body",
        [
            h.make_tensor_value_info("i", T.INT64, []),
            h.make_tensor_value_info("cond", T.BOOL, []),
            h.make_tensor_sequence_value_info("acc", T.FLOAT, None),
        ],
        [
            h.make_tensor_value_info("cond_out", T.BOOL, []),
            h.make_tensor_sequence_value_info("acc_out", T.FLOAT, None),
        ],
    )
    nodes = [
        h.make_node("SequenceEmpty", [], ["empty"], dtype=T.FLOAT),
        h.make_node("SequenceLength", ["empty"], ["n0"]),
        h.make_node("Loop", ["trip", ""], ["seq"], body=body),
        h.make_node("ConcatFromSequence", ["seq"], ["stacked"], axis=0, new_axis=1),
    ]
    nodes[2].input[1] = ""
    nodes[2].input.append("empty")
    model = _model(
        nodes,
        [h.make_tensor_value_info("x", T.FLOAT, [3])],
        [
            h.make_tensor_value_info("stacked", T.FLOAT, None),
            h.make_tensor_value_info("n0", T.INT64, None),
            h.make_tensor_sequence_value_info("seq", T.FLOAT, None),
        ],
        [_i64("trip", 4)],
    )
    x = RNG.standard_normal(3).astype(np.float32)
    have = _against_ort(model, {"x": x})
    np.testing.assert_allclose(have[0], np.arange(4, dtype=np.float32)[:, None] * x)
    assert int(have[1]) == 0


def test_sequence_map_with_two_sequences_and_a_tensor():
    body = h.make_graph(
        [h.make_node("Add", ["a", "b"], ["s"]), h.make_node("Mul", ["s", "k"], ["o"])],
        "body",
        [h.make_tensor_value_info(n, T.FLOAT, None) for n in ("a", "b", "k")],
        [h.make_tensor_value_info("o", T.FLOAT, None)],
    )
    model = _model(
        [h.make_node("SequenceMap", ["xs", "ys", "k"], ["zs"], body=body)],
        [
            h.make_tensor_sequence_value_info("xs", T.FLOAT, None),
            h.make_tensor_sequence_value_info("ys", T.FLOAT, None),
            h.make_tensor_value_info("k", T.FLOAT, [1]),
        ],
        [h.make_tensor_sequence_value_info("zs", T.FLOAT, None)],
    )
    session = wo.InferenceSession(model)
    for shapes in ([(2, 3), (4,)], [(1,), (2,), (5, 1)]):
        xs = [RNG.standard_normal(s).astype(np.float32) for s in shapes]
        ys = [RNG.standard_normal(s).astype(np.float32) for s in shapes]
        k = np.array([2.0], np.float32)
        have = _against_ort(model, {"xs": xs, "ys": ys, "k": k}, session)
        for z, x, y in zip(have[0], xs, ys):
            np.testing.assert_allclose(z, (x + y) * 2, rtol=1e-6)


def test_optional_with_and_without_element():
    tensor_type = h.make_tensor_type_proto(T.FLOAT, [2])
    nodes = [
        h.make_node("Optional", ["x"], ["full"]),
        h.make_node("Optional", [], ["empty"], type=tensor_type),
        h.make_node("OptionalHasElement", ["full"], ["has_full"]),
        h.make_node("OptionalHasElement", ["empty"], ["has_empty"]),
        h.make_node("OptionalGetElement", ["full"], ["got"]),
        h.make_node("Neg", ["got"], ["neg"]),
    ]
    opt = h.make_optional_type_proto(tensor_type)
    model = _model(
        nodes,
        [h.make_tensor_value_info("x", T.FLOAT, [2])],
        [
            h.make_tensor_value_info("has_full", T.BOOL, []),
            h.make_tensor_value_info("has_empty", T.BOOL, []),
            h.make_tensor_value_info("neg", T.FLOAT, [2]),
            h.make_value_info("empty", opt),
            h.make_value_info("full", opt),
        ],
        opset=18,
    )
    x = np.array([1.5, -2.0], np.float32)
    have = _against_ort(model, {"x": x})
    assert bool(have[0]) and not bool(have[1]) and have[3] is None
    np.testing.assert_array_equal(have[2], -x)


def test_optional_input_fed_none_or_an_array():
    opt = h.make_optional_type_proto(h.make_tensor_type_proto(T.FLOAT, [3]))
    model = _model(
        [h.make_node("OptionalHasElement", ["o"], ["has"])],
        [h.make_value_info("o", opt)],
        [h.make_tensor_value_info("has", T.BOOL, [])],
        opset=18,
    )
    session = wo.InferenceSession(model)
    assert session.get_inputs()[0].type == "optional(tensor(float))"
    for value in (None, np.ones(3, np.float32)):
        _against_ort(model, {"o": value}, session)


def test_load_with_sequence_input_needs_element_shapes():
    model = _model(
        [h.make_node("ConcatFromSequence", ["xs"], ["y"], axis=0)],
        [h.make_tensor_sequence_value_info("xs", T.FLOAT, None)],
        [h.make_tensor_value_info("y", T.FLOAT, None)],
    )
    context = webnn.ML().create_context(backend="cpu")
    with pytest.raises(wo.OnnxImportError, match=r"graph input 'xs' is a sequence.*input_shapes"):
        wo.load(context, model)
    graph = wo.load(context, model, input_shapes={"xs": [[2], [3]]})
    assert sorted(graph.input_descriptors) == ["xs[0]", "xs[1]"]
    a, b = np.arange(2, dtype=np.float32), np.arange(3, dtype=np.float32) + 10
    got = context.compute(graph, {"xs[0]": a, "xs[1]": b})
    np.testing.assert_array_equal(got["y"], np.concatenate([a, b]))


def _builder():
    return webnn.ML().create_context(backend="cpu").create_graph_builder()


def test_run_time_position_is_refused_by_name():
    model = _model(
        [h.make_node("SequenceAt", ["xs", "pos"], ["y"], name="pick")],
        [
            h.make_tensor_sequence_value_info("xs", T.FLOAT, None),
            h.make_tensor_value_info("pos", T.INT64, [1]),
        ],
        [h.make_tensor_value_info("y", T.FLOAT, None)],
    )
    with pytest.raises(wo.OnnxImportError, match=r"'pick' \(ai.onnx::SequenceAt, opset 17\).*"
                       r"position.*known at import"):  # fmt: skip
        wo.import_model(_builder(), model, input_shapes={"xs": [[2], [2]], "pos": [1]})


def test_out_of_range_position_and_empty_concat_are_refused():
    model = _model(
        [
            h.make_node("SequenceEmpty", [], ["e"]),
            h.make_node("SequenceInsert", ["e", "x", "three"], ["s"], name="ins"),
        ],
        [h.make_tensor_value_info("x", T.FLOAT, [2])],
        [h.make_tensor_sequence_value_info("s", T.FLOAT, None)],
        [_i64("three", 3)],
    )
    with pytest.raises(wo.OnnxImportError, match=r"'ins'.*position 3 is out of range.*length 0"):
        wo.import_model(_builder(), model)
    model = _model(
        [
            h.make_node("SequenceEmpty", [], ["e"]),
            h.make_node("ConcatFromSequence", ["e"], ["y"], axis=0, name="cat"),
        ],
        [],
        [h.make_tensor_value_info("y", T.FLOAT, None)],
    )
    with pytest.raises(wo.OnnxImportError, match=r"'cat'.*empty sequence"):
        wo.import_model(_builder(), model)


def test_sequence_where_a_tensor_is_needed_is_refused():
    model = _model(
        [
            h.make_node("SplitToSequence", ["x"], ["s"], axis=0),
            h.make_node("Relu", ["s"], ["y"], name="relu"),
        ],
        [h.make_tensor_value_info("x", T.FLOAT, [2])],
        [h.make_tensor_value_info("y", T.FLOAT, None)],
    )
    with pytest.raises(wo.OnnxImportError, match=r"'relu'.*reads a sequence where a tensor"):
        wo.import_model(_builder(), model)


def _if_model(then_ops, else_ops):
    def branch(name, ops):
        nodes = [h.make_node(op, ["x"], [f"v{i}"]) for i, op in enumerate(ops)]
        nodes.append(h.make_node("SequenceConstruct", [f"v{i}" for i in range(len(ops))], ["o"]))
        return h.make_graph(
            nodes, name, [], [h.make_tensor_sequence_value_info("o", T.FLOAT, None)]
        )

    return _model(
        [
            h.make_node("ReduceSum", ["x"], ["total"], keepdims=0),
            h.make_node("Greater", ["total", "zero"], ["c"]),  # known at run time only
            h.make_node(
                "If",
                ["c"],
                ["s"],
                name="choose",
                then_branch=branch("a", then_ops),
                else_branch=branch("b", else_ops),
            ),
        ],
        [h.make_tensor_value_info("x", T.FLOAT, [2])],
        [h.make_tensor_sequence_value_info("s", T.FLOAT, None)],
        [h.make_tensor("zero", T.FLOAT, [], [0.0])],
    )


def test_if_with_run_time_condition_selects_sequences_element_by_element():
    model = _if_model(["Relu", "Abs"], ["Neg", "Sigmoid"])
    session = wo.InferenceSession(model)
    for x in ([1.0, -0.5], [-1.0, 0.25]):
        have = _against_ort(model, {"x": np.array(x, np.float32)}, session)
        assert len(have[0]) == 2
    assert session.import_count == 1  # one graph: the condition is a run-time value


def test_if_with_run_time_condition_and_sequences_of_two_lengths_is_refused():
    model = _if_model(["Relu"], ["Neg", "Abs"])
    with pytest.raises(wo.OnnxImportError, match=r"'choose'.*different lengths.*run time"):
        wo.import_model(_builder(), model)


def test_sequence_feed_of_wrong_form_is_a_clear_error():
    model = _model(
        [h.make_node("SequenceLength", ["xs"], ["n"])],
        [h.make_tensor_sequence_value_info("xs", T.FLOAT, None)],
        [h.make_tensor_value_info("n", T.INT64, None)],
    )
    session = wo.InferenceSession(model)
    with pytest.raises(TypeError, match=r"'xs' is a seq\(tensor\(float\)\).*list"):
        session.run(None, {"xs": np.ones(2, np.float32)})
    with pytest.raises(TypeError, match=r"'xs' element 1 has data type int32"):
        session.run(None, {"xs": [np.ones(2, np.float32), np.ones(2, np.int32)]})


def test_sequence_read_after_a_host_step_is_refused():
    """A session runs NonZero on run-time values on the host between graphs; a sequence
    (held at import) cannot cross that step."""
    model = _model(
        [
            h.make_node("SplitToSequence", ["x"], ["s"], axis=0),
            h.make_node("NonZero", ["x"], ["nz"], name="nonzero"),
            h.make_node("SequenceAt", ["s", "zero"], ["first"]),
        ],
        [h.make_tensor_value_info("x", T.FLOAT, [3])],
        [
            h.make_tensor_value_info("nz", T.INT64, None),
            h.make_tensor_value_info("first", T.FLOAT, None),
        ],
        [_i64("zero", 0)],
    )
    with pytest.raises(wo.OnnxImportError, match=r"sequence or optional 's'.*'nonzero'.*host"):
        wo.InferenceSession(model)


def test_only_empty_sequence_and_optional_outputs():
    """ORT returns [] and None; the session needs no WebNN graph for them, load refuses."""
    empty_type = h.make_tensor_type_proto(T.FLOAT, [1])
    model = _model(
        [
            h.make_node("SequenceEmpty", [], ["e"], dtype=T.INT64),
            h.make_node("Optional", [], ["o"], type=empty_type),
        ],
        [h.make_tensor_value_info("x", T.FLOAT, [2])],
        [
            h.make_tensor_sequence_value_info("e", T.INT64, None),
            h.make_value_info("o", h.make_optional_type_proto(empty_type)),
        ],
        opset=18,
    )
    have = _against_ort(model, {"x": np.ones(2, np.float32)})
    assert have == [[], None]
    context = webnn.ML().create_context(backend="cpu")
    with pytest.raises(wo.OnnxImportError, match="every graph output is an empty sequence"):
        wo.load(context, model)


def test_split_map_concat_with_a_dynamic_batch():
    """The split axis is static, the batch dynamic (max_sizes): one graph for every batch."""
    relu = h.make_graph(
        [h.make_node("Relu", ["a"], ["b"])],
        "relu",
        [h.make_tensor_value_info("a", T.FLOAT, None)],
        [h.make_tensor_value_info("b", T.FLOAT, None)],
    )
    model = _model(
        [
            h.make_node("SplitToSequence", ["x", "two"], ["s"], axis=1),
            h.make_node("SequenceMap", ["s"], ["r"], body=relu),
            h.make_node("ConcatFromSequence", ["r"], ["y"], axis=1),
        ],
        [h.make_tensor_value_info("x", T.FLOAT, ["N", 5])],
        [h.make_tensor_value_info("y", T.FLOAT, None)],
        [_i64("two", 2)],  # chunks of 2, 2 and 1
    )
    session = wo.InferenceSession(model, max_sizes={"N": 8})
    for batch in (3, 6):
        x = RNG.standard_normal((batch, 5)).astype(np.float32)
        have = _against_ort(model, {"x": x}, session)
        np.testing.assert_array_equal(have[0], np.maximum(x, 0))
    assert session.import_count == 1


def test_output_declared_a_sequence_but_made_a_tensor_is_refused():
    model = _model(
        [h.make_node("Relu", ["x"], ["y"])],
        [h.make_tensor_value_info("x", T.FLOAT, [2])],
        [h.make_tensor_sequence_value_info("y", T.FLOAT, None)],
    )
    with pytest.raises(wo.OnnxImportError, match=r"graph output 'y' is declared a sequence"):
        wo.import_model(_builder(), model)
