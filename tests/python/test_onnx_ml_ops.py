"""ai.onnx.ml operators that skl2onnx emits for preprocessing and linear models (Scaler,
Normalizer, Binarizer, Imputer, LinearRegressor, LinearClassifier, ArrayFeatureExtractor,
FeatureVectorizer), compared with ONNX Runtime on both backends; the map operators fail with
the one unsupported-operator error."""

import numpy as np
import pytest

ort = pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")
import webnn
import webnn.onnx as wo
from onnx import TensorProto, helper
from ort_compare import assert_matches_onnxruntime, graph_model

ML_OPSETS = {"": 17, "ai.onnx.ml": 3}
RNG = np.random.default_rng(31)
X = RNG.uniform(-2, 2, (5, 4)).astype(np.float32)
X[2] = 0.0  # a zero row: the normalizers leave it 0


def _ml(node_attrs, op_type, feeds, outputs, inits=None):
    inputs = list(feeds) + list(inits or {})
    node = helper.make_node(op_type, inputs, list(outputs), domain="ai.onnx.ml", **node_attrs)
    return graph_model([node], feeds, outputs, inits, ML_OPSETS)


@pytest.mark.parametrize(
    "attrs,dtype",
    [
        ({"offset": [0.5, -1.0, 0.0, 2.0], "scale": [2.0, 0.5, 1.0, -1.0]}, np.float32),
        ({"offset": [1.0], "scale": [3.0]}, np.float32),
        ({"offset": [1.0, 2.0, 3.0, 4.0], "scale": [0.5, 1.0, 2.0, -1.0]}, np.int64),
    ],
)
def test_scaler(attrs, dtype):
    x = (X * 10).astype(dtype)
    model = _ml(attrs, "Scaler", {"x": x}, {"y": TensorProto.FLOAT})
    assert_matches_onnxruntime(model, {"x": x})


@pytest.mark.parametrize("norm", ["MAX", "L1", "L2"])
def test_normalizer(norm):
    model = _ml({"norm": norm}, "Normalizer", {"x": X}, {"y": TensorProto.FLOAT})
    assert_matches_onnxruntime(model, {"x": X})


def test_binarizer_and_imputer():
    x = X.copy()
    x[0, 1] = np.nan
    x[3, 2] = -1.5
    bin_model = _ml({"threshold": 0.25}, "Binarizer", {"x": x[1:]}, {"y": TensorProto.FLOAT})
    assert_matches_onnxruntime(bin_model, {"x": x[1:]})
    nan_model = _ml(
        {"imputed_value_floats": [9.0, 8.0, 7.0, 6.0], "replaced_value_float": np.nan},
        "Imputer",
        {"x": x},
        {"y": TensorProto.FLOAT},
    )
    assert_matches_onnxruntime(nan_model, {"x": x})
    value_model = _ml(
        {"imputed_value_floats": [4.0], "replaced_value_float": -1.5},
        "Imputer",
        {"x": x[1:]},
        {"y": TensorProto.FLOAT},
    )
    assert_matches_onnxruntime(value_model, {"x": x[1:]})


def test_linear_regressor():
    attrs = {
        "coefficients": RNG.standard_normal(8).tolist(),
        "intercepts": [0.5, -0.25],
        "targets": 2,
    }
    model = _ml(attrs, "LinearRegressor", {"x": X}, {"y": TensorProto.FLOAT})
    assert_matches_onnxruntime(model, {"x": X})


@pytest.mark.parametrize("post", ["NONE", "LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO"])
@pytest.mark.parametrize("rows,classes", [(1, 2), (2, 2), (3, 3)])
@pytest.mark.parametrize("multi_class", [0, 1])
def test_linear_classifier(post, rows, classes, multi_class):
    # One coefficient row for two classes is the binary form skl2onnx writes for
    # LogisticRegression: ONNX Runtime's scores are then [1 - s, s].
    attrs = {
        "coefficients": RNG.standard_normal(rows * 4).tolist(),
        "intercepts": RNG.standard_normal(rows).tolist(),
        "classlabels_ints": list(range(7, 7 + classes)),
        "post_transform": post,
        "multi_class": multi_class,
    }
    model = _ml(
        attrs,
        "LinearClassifier",
        {"x": X},
        {"label": TensorProto.INT64, "scores": TensorProto.FLOAT},
    )
    assert_matches_onnxruntime(model, {"x": X})


def test_array_feature_extractor_and_feature_vectorizer():
    # skl2onnx maps an arg-max to class labels with ArrayFeatureExtractor on a constant.
    nodes = [
        helper.make_node("ArrayFeatureExtractor", ["x", "idx"], ["picked"], domain="ai.onnx.ml"),
        helper.make_node(
            "FeatureVectorizer",
            ["picked", "x2"],
            ["v"],
            domain="ai.onnx.ml",
            inputdimensions=[2, 3],
        ),
    ]
    x2 = RNG.standard_normal((5, 3)).astype(np.float32)
    inits = {"idx": np.array([3, 0], np.int64)}
    model = graph_model(nodes, {"x": X, "x2": x2}, {"v": TensorProto.FLOAT}, inits, ML_OPSETS)
    assert_matches_onnxruntime(model, {"x": X, "x2": x2})


def test_unsupported_ml_operators_fail_with_one_error_listing_each_operator():
    # (Tree ensembles convert since 2026-12-02: tests/python/test_onnx_tree_ensembles.py; SVMs
    # since 2026-12-03: test_onnx_svm.py. Map inputs have no WebNN form.)
    nodes = [
        helper.make_node("Scaler", ["x"], ["s"], domain="ai.onnx.ml", offset=[0.0], scale=[1.0]),
        helper.make_node(
            "DictVectorizer", ["s"], ["r1"], domain="ai.onnx.ml", int64_vocabulary=[1, 2]
        ),
        helper.make_node(
            "DictVectorizer", ["s"], ["r2"], domain="ai.onnx.ml", int64_vocabulary=[1, 2]
        ),
        helper.make_node("CastMap", ["s"], ["r3"], domain="ai.onnx.ml"),
        helper.make_node("Sum", ["r1", "r2", "r3"], ["y"]),
    ]
    model = graph_model(nodes, {"x": X}, {"y": TensorProto.FLOAT}, None, ML_OPSETS)
    with pytest.raises(wo.OnnxImportError) as info:
        wo.load(webnn.ML().create_context(accelerated=False), model)
    text = str(info.value)
    assert "ai.onnx.ml::DictVectorizer (opset 3): 2 nodes" in text
    assert "ai.onnx.ml::CastMap (opset 3): 1 node" in text
    assert "Scaler" not in text
    assert sorted(u[1] for u in info.value.unsupported) == ["CastMap", "DictVectorizer"]


@pytest.mark.parametrize("post", ["NONE", "LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO", "PROBIT"])
@pytest.mark.parametrize("targets", [1, 3])
def test_linear_regressor_post_transforms(post, targets):
    # ORT transforms one target only with PROBIT (its approximate inverse error function);
    # scores kept inside (0, 1) where PROBIT is defined.
    attrs = {
        "coefficients": (RNG.uniform(-0.1, 0.1, 4 * targets)).tolist(),
        "intercepts": RNG.uniform(0.3, 0.7, targets).tolist(),
        "targets": targets,
        "post_transform": post,
    }
    model = _ml(attrs, "LinearRegressor", {"x": X}, {"y": TensorProto.FLOAT})
    assert_matches_onnxruntime(model, {"x": X}, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("post", ["SOFTMAX_ZERO", "PROBIT"])
def test_linear_classifier_softmax_zero_and_probit(post):
    # A zero score row element: SOFTMAX_ZERO leaves it out of the sum (ORT's rule).
    coefficients = RNG.uniform(-0.1, 0.1, 12)
    coefficients[4:8] = 0.0
    attrs = {
        "coefficients": coefficients.tolist(),
        "intercepts": [0.4, 0.0, 0.6],
        "classlabels_ints": [1, 2, 3],
        "post_transform": post,
    }
    model = _ml(attrs, "LinearClassifier", {"x": X}, {"label": TensorProto.INT64,
                                                      "scores": TensorProto.FLOAT})  # fmt: skip
    assert_matches_onnxruntime(model, {"x": X}, rtol=1e-4, atol=1e-5)
