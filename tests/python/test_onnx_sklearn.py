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
