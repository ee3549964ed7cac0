"""TfIdfVectorizer over integer token ids (webnn/onnx/ops/tfidf.py) against ONNX Runtime on
both backends: every mode with and without weights, unigrams to trigrams, skip distances,
min/max gram lengths, int32 and int64 ids, [C] and [B, C] inputs, and n-grams sharing an
output index."""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
import webnn
import webnn.onnx as wo
from onnx import TensorProto, helper

RNG = np.random.default_rng(9)
VOCAB = 6  # few token ids: n-grams repeat within a row


def _pool(sizes):
    """Distinct random n-grams: {size: count} -> (pool_int64s, ngram_counts, n-gram total)."""
    pool, starts, total = [], [], 0
    for size in range(1, max(sizes) + 1):
        starts.append(len(pool))
        grams = set()
        while len(grams) < sizes.get(size, 0):
            grams.add(tuple(int(v) for v in RNG.integers(0, VOCAB, size)))
        for g in sorted(grams):
            pool.extend(g)
        total += len(grams)
    return pool, starts, total


def _model(shape, dtype, pool, starts, indexes, **attrs):
    elem = TensorProto.INT32 if dtype == "int32" else TensorProto.INT64
    node = helper.make_node(
        "TfIdfVectorizer",
        ["x"],
        ["y"],
        pool_int64s=pool,
        ngram_counts=starts,
        ngram_indexes=indexes,
        **attrs,
    )
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", elem, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9)])
    model.ir_version = 8
    return model.SerializeToString()


def _compare(data, x, backend):
    want = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    ctx = webnn.ML().create_context(accelerated=False, backend=backend)
    got = ctx.compute(wo.load(ctx, data), {"x": x})["y"]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=0)


CASES = [
    # (n-grams per size, min, max, max_skip_count)
    ({1: 4, 2: 5}, 1, 2, 0),
    ({1: 4, 2: 5}, 1, 2, 3),
    ({1: 3, 2: 4}, 2, 2, 2),  # unigrams in the pool, not counted
    ({2: 3, 3: 4}, 2, 3, 1),  # no unigrams: ngram_counts starts with an empty group
    ({1: 5}, 1, 1, 4),  # unigrams count once whatever the skip
]


@pytest.mark.parametrize("backend", ["cpu", "reference"])
@pytest.mark.parametrize("mode", ["TF", "IDF", "TFIDF"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_tfidf_matches_onnxruntime(case, weighted, mode, backend):
    sizes, low, high, skips = CASES[case]
    pool, starts, total = _pool(sizes)
    indexes = list(RNG.permutation(total))
    attrs = {"mode": mode, "min_gram_length": low, "max_gram_length": high}
    attrs["max_skip_count"] = skips
    if weighted:
        attrs["weights"] = list(RNG.uniform(0.5, 2.0, total).astype(np.float32))
    for shape, dtype in [([3, 11], "int64"), ([9], "int32")]:
        x = RNG.integers(0, VOCAB, shape).astype(dtype)
        _compare(_model(shape, dtype, pool, starts, indexes, **attrs), x, backend)


@pytest.mark.parametrize("mode", ["TF", "TFIDF"])
def test_ngrams_sharing_an_output_index_add_up(mode):
    pool, starts, total = _pool({1: 3, 2: 4})
    indexes = [0, 1, 0, 2, 1, 2, 3]  # 7 n-grams onto 4 outputs
    assert total == 7
    weights = list(RNG.uniform(0.5, 2.0, total).astype(np.float32))
    data = _model([2, 10], "int64", pool, starts, indexes, mode=mode, min_gram_length=1,
                  max_gram_length=2, max_skip_count=1, weights=weights)  # fmt: skip
    _compare(data, RNG.integers(0, VOCAB, [2, 10]).astype(np.int64), "cpu")


def test_string_pools_are_refused():
    node = helper.make_node(
        "TfIdfVectorizer", ["x"], ["y"], pool_strings=["a", "b"], ngram_counts=[0],
        ngram_indexes=[0, 1], mode="TF", min_gram_length=1, max_gram_length=1,
        max_skip_count=0,
    )  # fmt: skip
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.STRING, [3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9)])
    ctx = webnn.ML().create_context(accelerated=False, backend="cpu")
    with pytest.raises(wo.OnnxImportError, match="string"):
        wo.load(ctx, model)


def test_idf_weights_on_a_shared_output_are_refused():
    """ORT gives such an output the weight of the occurrence it scans last (its own order)."""
    pool, starts, _ = _pool({1: 3})
    data = _model([4], "int64", pool, starts, [0, 0, 1], mode="IDF", min_gram_length=1,
                  max_gram_length=1, max_skip_count=0, weights=[1.0, 2.0, 3.0])  # fmt: skip
    ctx = webnn.ML().create_context(accelerated=False, backend="cpu")
    with pytest.raises(wo.OnnxImportError, match="IDF weights with n-grams sharing an output"):
        wo.load(ctx, data)


def test_a_repeated_pool_ngram_is_refused_as_onnxruntime_refuses_it():
    data = _model([3], "int64", [1, 2, 1], [0], [0, 1, 2], mode="TF", min_gram_length=1,
                  max_gram_length=1, max_skip_count=0)  # fmt: skip
    ctx = webnn.ML().create_context(accelerated=False, backend="cpu")
    with pytest.raises(wo.OnnxImportError, match=r"lists the 1-gram \[1\] twice"):
        wo.load(ctx, data)
