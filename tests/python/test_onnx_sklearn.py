"""scikit-learn models exported by skl2onnx (when both are installed: they are not in the test
extra, scikit-learn pulls in SciPy), compared with ONNX Runtime on both backends. The default
SVC is the case the issue names; the same operators are tested without skl2onnx, from
onnx.helper, in test_onnx_svm.py."""

import numpy as np
import pytest

pytest.importorskip("onnxruntime")
sklearn_svm = pytest.importorskip("sklearn.svm")
skl2onnx = pytest.importorskip("skl2onnx")
from ort_compare import assert_matches_onnxruntime, within_peak
from sklearn.datasets import load_iris

X, Y = load_iris(return_X_y=True)
X = X.astype(np.float32)
SHAPES = {"X": list(X.shape)}


def _export(estimator, **options):
    return skl2onnx.to_onnx(estimator, X[:1], options=options or None)


@pytest.mark.parametrize(
    "estimator",
    [
        sklearn_svm.SVC(),
        sklearn_svm.SVC(probability=True, random_state=0),
        sklearn_svm.SVC(kernel="poly", degree=2),
        sklearn_svm.SVC(kernel="sigmoid", gamma=0.05),
        sklearn_svm.NuSVC(),
    ],
    ids=["default", "probability", "poly", "sigmoid", "nu"],
)
def test_svc(estimator):
    estimator.fit(X, Y)
    model = _export(estimator, zipmap=False)
    assert_matches_onnxruntime(model, {"X": X}, check=within_peak(1e-4), input_shapes=SHAPES)


def test_binary_svc():
    estimator = sklearn_svm.SVC().fit(X[:100], Y[:100])
    assert_matches_onnxruntime(
        _export(estimator, zipmap=False), {"X": X}, check=within_peak(1e-4), input_shapes=SHAPES
    )


@pytest.mark.parametrize("estimator", [sklearn_svm.SVR(), sklearn_svm.NuSVR(kernel="poly")])
def test_svr(estimator):
    # Poly kernels sum large terms of both signs: float32 order differences reach ~1e-4.
    estimator.fit(X, X[:, 0])
    assert_matches_onnxruntime(
        _export(estimator), {"X": X}, check=within_peak(2e-4), input_shapes=SHAPES
    )


def test_one_class_svm():
    estimator = sklearn_svm.OneClassSVM(gamma=0.5).fit(X)
    assert_matches_onnxruntime(
        _export(estimator), {"X": X}, check=within_peak(1e-5), input_shapes=SHAPES
    )


def _session_matches_onnxruntime(model, feeds):
    """InferenceSession (which makes string labels and ZipMap's maps on the host) against ORT."""
    import onnxruntime as ort
    import webnn
    import webnn.onnx as wo
    from ort_compare import BACKENDS

    want = ort.InferenceSession(model.SerializeToString()).run(None, feeds)
    for backend in BACKENDS:
        context = webnn.ML().create_context(accelerated=False, backend=backend)
        got = wo.InferenceSession(model, context=context).run(None, feeds)
        for g, w in zip(got, want):
            if isinstance(w, list):
                assert [list(d) for d in g] == [list(d) for d in w], backend
                values = np.array([list(d.values()) for d in g])
                expected = np.array([list(d.values()) for d in w])
                assert np.max(np.abs(values - expected)) <= 1e-4 * np.max(np.abs(expected))
            else:
                assert g.dtype == w.dtype and g.shape == w.shape, backend
                if w.dtype.kind == "f":
                    assert np.max(np.abs(g - w)) <= 1e-4 * np.max(np.abs(w)), backend
                else:
                    np.testing.assert_array_equal(g, w, err_msg=backend)
    return want


NAMES = np.array(["setosa", "versicolor", "virginica"], dtype=object)


@pytest.mark.parametrize("kind", ["svc", "logistic", "forest"])
def test_string_labels_with_zipmap(kind):
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression

    estimator = {
        "svc": sklearn_svm.SVC(probability=True, random_state=0),
        "logistic": LogisticRegression(max_iter=500),
        "forest": RandomForestClassifier(n_estimators=5, max_depth=4, random_state=0),
    }[kind]
    estimator.fit(X, NAMES[Y])
    model = skl2onnx.to_onnx(estimator, X[:1])  # ZipMap on by default
    model = _fixed_batch(model, len(X))
    want = _session_matches_onnxruntime(model, {"X": X})
    assert want[0].dtype == object and set(want[0]) == set(NAMES)


def test_one_hot_encoder_pipeline():
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    codes = np.random.default_rng(0).integers(0, 4, (60, 3)).astype(np.int64)
    labels = (codes[:, 0] + codes[:, 1] > 3).astype(np.int64)
    pipe = make_pipeline(OneHotEncoder(handle_unknown="ignore"), LogisticRegression())
    pipe.fit(codes, labels)
    model = _fixed_batch(skl2onnx.to_onnx(pipe, codes[:1]), len(codes))
    assert "OneHotEncoder" in [n.op_type for n in model.graph.node]
    _session_matches_onnxruntime(model, {"X": codes})


def _fixed_batch(model, rows):
    """skl2onnx declares the batch unnamed: fix it (the session needs a static shape here)."""
    for vi in list(model.graph.input):
        vi.type.tensor_type.shape.dim[0].dim_value = rows
    return model


def test_unpruned_random_forest_is_walked(monkeypatch):
    # A scikit-learn forest of unpruned trees: the cost rule picks the walk (walk.py).
    from sklearn.datasets import make_classification
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
    from webnn.onnx.ops import walk

    walked = []
    original = walk.evaluate_walk
    monkeypatch.setattr(walk, "evaluate_walk", lambda *a: walked.append(1) or original(*a))
    x, y = make_classification(n_samples=400, n_features=12, n_informative=6, n_classes=3,
                               random_state=0)  # fmt: skip
    x = x.astype(np.float32)
    shapes = {"X": list(x.shape)}
    forest = RandomForestClassifier(n_estimators=12, random_state=0).fit(x, y)
    model = skl2onnx.to_onnx(forest, x[:1], options={"zipmap": False})
    assert_matches_onnxruntime(model, {"X": x}, check=within_peak(1e-5), input_shapes=shapes)
    regressor = RandomForestRegressor(n_estimators=8, random_state=0).fit(x, x[:, 0])
    model = skl2onnx.to_onnx(regressor, x[:1])
    assert_matches_onnxruntime(model, {"X": x}, check=within_peak(1e-5), input_shapes=shapes)
    assert len(walked) == 4  # both models, both backends
